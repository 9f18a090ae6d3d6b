/* SPDX-License-Identifier: MIT */
/*
 * The bytes ptsim.ko writes, as a pure function of the absolute AUX offset
 * (keep in step with pat_byte() in ../module/ptsim.c):
 *   0: (u8)(((u32)off * 2654435761) >> 24)
 *   1: every 4 KiB: PSB (02 82 x8), PSBEND (02 23), PAD (00) to the end
 *   2: every 4 KiB: PSB, TSC (19 + 7-byte payload = offset of the PSB), PSBEND, PAD
 */
#ifndef PTSIM_PATTERN_H
#define PTSIM_PATTERN_H
#include <stdint.h>

static inline uint8_t ptsim_byte(int pattern, uint64_t off)
{
	unsigned int r = off & 4095;

	if (pattern != 1 && pattern != 2)
		return (uint8_t)(((uint32_t)off * 2654435761u) >> 24);
	if (r < 16)
		return (r & 1) ? 0x82 : 0x02;
	if (pattern == 2) {
		if (r == 16)
			return 0x19;
		if (r < 24)
			return (uint8_t)((off & ~(uint64_t)4095) >> (8 * (r - 17)));
		r -= 8;
	}
	if (r == 16)
		return 0x02;
	if (r == 17)
		return 0x23;
	return 0x00;
}

#endif
