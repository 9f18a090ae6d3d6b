/* SPDX-License-Identifier: MIT */
/*
 * The bytes ptsim.ko writes, as a pure function of the absolute AUX offset
 * (keep in step with pat_byte() in ../module/ptsim.c):
 *   0: (u8)(((u32)off * 2654435761) >> 24)
 *   1: every 4 KiB: PSB (02 82 x8), PSBEND (02 23), PAD (00) to the end
 *   2: every 4 KiB: PSB, TSC (19 + 7-byte payload = offset of the PSB), PSBEND, PAD
 *   3: replay: stream[off % len], the stream written to sim/replay (set ptsim_replay)
 */
#ifndef PTSIM_PATTERN_H
#define PTSIM_PATTERN_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* pattern 3: the stream the module replays (the program loads the same file) */
static const uint8_t *ptsim_replay;
static size_t ptsim_replay_len;

/* Load FILE as the replay stream; 0 or -1 (errno set). */
static inline int ptsim_load_replay(const char *file)
{
	static uint8_t *buf;
	size_t cap = 1 << 16, len = 0, n;
	FILE *f = fopen(file, "rb");

	if (!f)
		return -1;
	buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!buf)
		return -1;
	ptsim_replay = buf;
	ptsim_replay_len = len;
	return 0;
}

static inline uint8_t ptsim_byte(int pattern, uint64_t off)
{
	unsigned int r = off & 4095;

	if (pattern == 3)
		return ptsim_replay_len ? ptsim_replay[off % ptsim_replay_len] : 0;
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
