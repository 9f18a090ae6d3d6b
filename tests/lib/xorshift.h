/* SPDX-License-Identifier: MIT */
/* The tests' repeatable pseudo-random numbers: Marsaglia's xorshift32 over a seed @s. */
#ifndef PTC_TEST_XORSHIFT_H
#define PTC_TEST_XORSHIFT_H

#include <stdint.h>

static inline uint32_t xorshift32(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

#endif
