/* SPDX-License-Identifier: MIT */
/*
 * The fast flow path: one PSB segment (from a PSB to the next) of 64-bit code
 * decoded from its packets here, without libipt, for the modes that print no
 * instructions (--stats, --branches). Only the plainest segments are taken:
 * PSB+ with a FUP and 64-bit MODE.Exec, then TNT, TIP, compressed returns,
 * PAD and timing packets; anything else (an enable or disable, a FUP, an
 * overflow, an event, a far branch, an image miss, a mismatch of packets and
 * code) says "not fast" and the caller decodes the segment with libipt. A
 * segment ends as a chunk of its own would (decode_chunk.c's seam): before the
 * next PSB+'s FUP instruction.
 *
 * Code is cut into blocks (capstone, from the image's bytes) kept in a table of
 * FASTFLOW_BLOCKS entries whatever the trace: memory is bounded.
 */
#ifndef PTC_FASTFLOW_H
#define PTC_FASTFLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode_config.h"
#include "memimage.h"

/* Blocks kept (32 bytes each, and an index of 8 bytes a block): 1.25 MiB. */
#define FASTFLOW_BLOCKS (1u << 15)

struct fastflow;

/* A taken branch, in the order the code ran them: perf's kind ("jcc", "call", ...). */
typedef void fastflow_branch_fn(void *ctx, uint64_t from, uint64_t to, const char *kind);

/* NULL when memory runs out. */
struct fastflow *fastflow_new(struct image_store *img);
void fastflow_free(struct fastflow *f);

/*
 * The PSB+ at @at of @buf (@len bytes): true when a fast segment can start there (tracing
 * on, 64-bit code), with the IP of its FUP in @ip.
 */
bool fastflow_psb(const uint8_t *buf, size_t len, size_t at, uint64_t *ip);

/*
 * Decode the segment from the PSB at @at: the counts into @st (added), each taken branch
 * to @fn (may be NULL). Returns true with the next PSB's offset in @next when the whole
 * segment was decoded (up to the next PSB+'s FUP instruction); false: not fast (@st is
 * untouched, but @fn may have been called: the caller drops what it wrote).
 */
bool fastflow_segment(struct fastflow *f, const uint8_t *buf, size_t len, size_t at,
		      struct decode_stats *st, fastflow_branch_fn *fn, void *ctx, size_t *next);

/* Blocks built so far (each a capstone pass over its bytes): for tests of the bound. */
uint64_t fastflow_built(const struct fastflow *f);

#endif
