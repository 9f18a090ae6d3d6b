/* SPDX-License-Identifier: MIT */
/*
 * One piece of a decode run: a PSB-delimited chunk of one stream, decoded by
 * its own libipt decoder, image and sideband into its own sinks. decode_run
 * (decode.h) cuts streams into chunks, runs them on threads and merges their
 * sinks; decode_chunk() is what a thread does with one.
 */
#ifndef PTC_DECODE_CHUNK_H
#define PTC_DECODE_CHUNK_H

#include <stdbool.h>
#include <stdint.h>

#include "decode_config.h"
#include "dsink.h"
#include "error.h"
#include "memimage.h"

struct fastflow_table;
struct insnblk_shared;

/*
 * The stack decode_chunk() needs. libipt 2.1 and later (pt_insn_next() runs on its block
 * decoder) recurse in pt_blk_proceed_no_event_cached() once per lap of a loop that
 * needs no trace (a jump or call to itself, a cycle of direct jumps: decode entries in
 * the block cache), until the block's 16-bit instruction count would wrap: at most
 * 65535 frames of about 550 bytes (2.2, x86-64), 36 MiB. A thread's default stack
 * (RLIMIT_STACK, 8 MiB) overflows there; with this one the recursion ends and the
 * stall check reports the loop as it does with 2.0.5. Pages never touched cost nothing.
 */
#define DECODE_CHUNK_STACK (64u << 20)

#define CHUNK_DIAG_MAX 256

struct decode_chunk {
	/* What to decode. */
	const struct decode_config *cfg;
	size_t stream;
	const uint8_t *pt;		/* the stream's bytes */
	bool mapped;			/* pt maps a file privately: pages may be dropped */
	int fd;				/* with mapped: that file, for its holes, or -1 */
	uint64_t begin, end;		/* this chunk's range of them (begin: a PSB, or 0) */
	uint64_t len;			/* the stream's bytes in all (0: not known; end) */
	bool first, last;		/* of its stream */
	bool have_next_ip;		/* the next chunk starts at next_ip (its PSB+'s FUP) */
	uint64_t next_ip;
	/* Sideband problems this chunk reports: records after tsc_lo, up to tsc_hi. */
	uint64_t tsc_lo, tsc_hi;
	struct symcache *syms;
	struct fastflow_table *blocks;	/* the fast path's blocks, shared (NULL: its own) */
	struct insnblk_shared *lines;	/* --insn: their lines, shared (NULL: its own) */
	uint64_t *progress;		/* bytes decoded, all chunks (atomic) */

	/* What came out. */
	struct dsink out;		/* the instruction stream */
	struct dsink tl;		/* timeline records */
	struct decode_stats stats;
	struct decode_diag *diags;
	size_t nr_diags;
	uint64_t more_diags;		/* dropped beyond CHUNK_DIAG_MAX */
	int ret;			/* a failure that stopped it: negative errno, with error */
	struct error *error;		/* what it was (allocated; NULL: no memory to say) */
};

/* Load the files given by hand once, to find a bad one before any chunk starts. */
int decode_check_files(const struct decode_config *cfg, struct error *e);

/* Decode @c into its sinks. Returns c->ret. */
int decode_chunk(struct decode_chunk *c);

/*
 * What one thread keeps from a chunk to its next: the image of the files given by hand
 * and what was cut from it (decode_chunk.c). Not shared between threads.
 */
struct decode_keep;

/*
 * decode_chunk() with what the calling thread kept in *@keep (NULL at first), and keeping
 * for the next what may serve it. A chunk with sideband neither takes nor keeps.
 */
int decode_chunk_kept(struct decode_chunk *c, struct decode_keep **keep);
void decode_keep_free(struct decode_keep *k);
/* The fast path's blocks the chunks that used @k cut, all told: for tests. */
uint64_t decode_keep_built(const struct decode_keep *k);

#endif
