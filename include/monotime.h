/* SPDX-License-Identifier: MIT */
/* CLOCK_MONOTONIC in nanoseconds: the clock of fires, snapshots and waits. */
#ifndef PTC_MONOTIME_H
#define PTC_MONOTIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monotime_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif
