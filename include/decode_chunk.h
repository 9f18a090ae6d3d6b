/* SPDX-License-Identifier: MIT */
/*
 * One piece of a decode run: a PSB-delimited chunk of one stream, decoded by
 * its own libipt decoder, image and sideband into its own sinks. decode_run
 * (decode.h) cuts streams into chunks, runs them on threads and merges their
 * sinks; decode_chunk() is what a thread does with one (struct decode_chunk, in
 * decode_config.h beside what the whole run is asked and reports).
 */
#ifndef PTC_DECODE_CHUNK_H
#define PTC_DECODE_CHUNK_H

#include <stdint.h>

#include "decode_config.h"
#include "error.h"

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
