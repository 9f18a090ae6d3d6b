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

/* The whole of FILE, malloc'ed, its size in *len; NULL on error (errno set). */
static inline uint8_t *ptsim_read_file(const char *file, size_t *len)
{
	size_t cap = 1 << 16, n;
	uint8_t *buf, *nb;
	FILE *f = fopen(file, "rb");

	*len = 0;
	if (!f)
		return NULL;
	buf = malloc(cap);
	while (buf && (n = fread(buf + *len, 1, cap - *len, f)) > 0) {
		*len += n;
		if (*len < cap)
			continue;
		nb = realloc(buf, cap * 2);
		if (!nb)
			free(buf);
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	return buf;
}

/* Load FILE as the replay stream; 0 or -1 (errno set). */
static inline int ptsim_load_replay(const char *file)
{
	ptsim_replay = ptsim_read_file(file, &ptsim_replay_len);
	return ptsim_replay ? 0 : -1;
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
