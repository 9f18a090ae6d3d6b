/* SPDX-License-Identifier: MIT */
/*
 * The fast flow path: one PSB segment (from a PSB to the next) of 64-bit code
 * decoded from its packets here, without libipt, for --stats, --branches, --calls,
 * --insn through fastflow_set_insn(), and report where a segment's time is its PSB+'s
 * (fastflow_set_timed()). Only the plainest segments are taken:
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

#include <intel-pt.h>

#include "decode_config.h"
#include "memimage.h"

/* Blocks kept (32 bytes each, and an index of 8 bytes a block): 1.25 MiB. */
#define FASTFLOW_BLOCKS (1u << 15)
/* Instructions in a block at most (a longer run without a branch is cut). */
#define FASTFLOW_BLOCK_INSNS 256
#define FASTFLOW_BLOCK_BYTES (32 + 8)

struct fastflow;

/*
 * A taken branch, in the order the code ran them: perf's kind ("jcc", "call", ...); @ninsn
 * the instructions since the branch before (the segment's start for its first), this one
 * counted; @next the address after the branch (a call's return address). The instructions
 * after a segment's last branch are the rest of its count (struct decode_stats.insns).
 */
typedef void fastflow_branch_fn(void *ctx, uint64_t from, uint64_t to, const char *kind,
				uint64_t ninsn, uint64_t next);

/*
 * The errata of libipt's struct pt_errata whose workaround can read the packets this path
 * takes otherwise than it does: with one set, fastflow refuses a segment where it could
 * apply (fastflow_errata() in decode_chunk.c says why the others cannot).
 */
#define FF_E_BDM70	(1u << 0)	/* a PSB+ followed by TIP.PGE is tracing off */
#define FF_E_BDM64	(1u << 1)	/* a TSX abort may move the branch before it */
#define FF_E_SKD007	(1u << 2)	/* a 2-byte CYC before 0xf3 is an OVF */
#define FF_E_SKZ84	(1u << 3)	/* a bad TMA is 8 bytes: the packets after it skew */

/* NULL when memory runs out. */
struct fastflow *fastflow_new(struct image_store *img);
void fastflow_free(struct fastflow *f);
/*
 * The most blocks @f's table held at once (FASTFLOW_BLOCKS: it was full, and emptied; a
 * shared table: the slots claimed, up to a claim a thread more than it holds).
 */
uint32_t fastflow_blocks_used(const struct fastflow *f);

/*
 * Blocks shared by the threads of a run (their images must hold the same code): each is
 * cut once, by the first thread that needs it, and read by all (issue 25: -J 2 cut every
 * block in each worker). Freed after every fastflow that shares it.
 */
struct fastflow_table;
struct fastflow_table *fastflow_table_new(void);
void fastflow_table_free(struct fastflow_table *t);
/* Cut blocks into @t (until it is full), not a table of @f's own; before any block. */
void fastflow_share(struct fastflow *f, struct fastflow_table *t);

/*
 * The PSB+ at @at of @buf (@len bytes): true when a fast segment can start there (tracing
 * on, 64-bit code), with the IP of its FUP in @ip; false too where a cut at this PSB could
 * change what libipt prints: one of @f's errata could apply to the PSB+ (BDM70, BDM64,
 * SKD007) or to the segment after it (SKZ84's TMA, SKD007's CYC), a timing packet in it or
 * before the first TNT or TIP after it would be an error to libipt, or that first packet is
 * something else. run_fast() makes a cut only where this holds.
 */
bool fastflow_start(const struct fastflow *f, const uint8_t *buf, size_t len, size_t at,
		    uint64_t *ip);

/* The errata (FF_E_*) the segments after this are decoded under; none at first. */
void fastflow_set_errata(struct fastflow *f, unsigned errata);

/*
 * @timed: for a caller that shows time, which a fast segment does not follow: a segment's
 * time must be its PSB+'s TSC (fastflow_tsc()) throughout, so one with another timing
 * packet (MTC, CYC, TMA, a TSC after the PSB+) is not fast, nor is a cut before one; false
 * at first.
 */
void fastflow_set_timed(struct fastflow *f, bool timed);

/* The TSC packet's of the PSB+ at @at into @tsc; false: it has none (or is no PSB+). */
bool fastflow_tsc(const uint8_t *buf, size_t len, size_t at, uint64_t *tsc);

/*
 * Decode the segment from the PSB at @at: the counts into @st (added), each taken branch
 * to @fn (may be NULL). Returns true with the next PSB's offset in @next when the whole
 * segment was decoded (up to the next PSB+'s FUP instruction); false: not fast (@st is
 * untouched, but @fn may have been called: the caller drops what it wrote).
 */
bool fastflow_segment(struct fastflow *f, const uint8_t *buf, size_t len, size_t at,
		      struct decode_stats *st, fastflow_branch_fn *fn, void *ctx, size_t *next);

/*
 * With @on, the segments after this give @fn only their calls and returns: a jump's
 * instructions are counted with the next call's or return's (report counts nothing else).
 * Off at first.
 */
void fastflow_set_calls_only(struct fastflow *f, bool on);

/*
 * A call or return of a calls-only segment, as a batch gives it (fastflow_branch_fn's).
 * 32 bytes and no padding: a batch compares as bytes (report keeps the last few batches
 * and what they wrote, and a loop's batches come again), and is written in four stores.
 */
struct fastflow_cr {
	uint64_t from, to;
	uint64_t ninsn : 63;	/* since the call or return before, this one counted */
	uint64_t call : 1;	/* else a return */
	uint64_t next;		/* the address after it */
};
_Static_assert(sizeof(struct fastflow_cr) == 32, "a batch's entry has no padding");

/* Calls and returns in a batch at most. */
#define FASTFLOW_BATCH 256

/* @ninsn: the entries' instructions summed (what fastflow counted them from: no pass over them) */
typedef void fastflow_batch_fn(void *ctx, const struct fastflow_cr *v, unsigned n,
			       uint64_t ninsn);

/*
 * With @fn (NULL: none; none at first), a calls-only segment whose fastflow_segment() has a
 * branch function gives its calls and returns to @fn instead, in the order they ran, up to
 * FASTFLOW_BATCH at a time, the last batch before fastflow_segment() returns true (with
 * @ctx its ctx); the branch function itself is not called. One call a batch, not one a call
 * or return: report's hook cost about 6.6 ns a call and its return on the loop. As with
 * the branches, a segment that turns out not fast may have given some: the caller drops
 * them. False: no memory for the batch (then none is set).
 */
bool fastflow_set_batch(struct fastflow *f, fastflow_batch_fn *fn);

/*
 * The instructions a segment ran, a block at a time in the order they ran: @n (at most
 * FASTFLOW_BLOCK_INSNS) from @ip, 64-bit code (fastflow_insns() gives them). As with the
 * branches, a segment that turns out not fast may have said some: the caller drops them.
 */
typedef void fastflow_insn_fn(void *ctx, uint64_t ip, unsigned n);

/*
 * The segments after this say their instructions to @fn (NULL: not). With @fn, a PSB+
 * whose MODE.TSX says "in a transaction" is not fast (ptxed marks such instructions "?").
 */
void fastflow_set_insn(struct fastflow *f, fastflow_insn_fn *fn, void *ctx);

/*
 * The @n instructions from @ip, as a fastflow_insn_fn() was given them, into @out (ip, isid,
 * mode, size, raw; the rest zero): how many (fewer only when the code cannot be read).
 */
unsigned fastflow_insns(struct fastflow *f, uint64_t ip, unsigned n, struct pt_insn *out);

/* Times the block table was emptied: a cache of what the blocks hold is emptied with it. */
uint64_t fastflow_epoch(const struct fastflow *f);

/* Blocks this fastflow built (each a capstone pass over its bytes): for tests. */
uint64_t fastflow_built(const struct fastflow *f);

#endif
