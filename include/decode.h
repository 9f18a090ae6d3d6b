/* SPDX-License-Identifier: MIT */
/*
 * Instruction-flow decoding of Intel PT streams with libipt's instruction
 * decoder (no XED): the run that decodes every stream of a configuration
 * (decode_config.h) into the chosen outputs.
 *
 * A run decodes like ptxed: MODE packets set 16/32/64-bit code, events are
 * reported where libipt reports them, an error is reported at its trace
 * offset in libipt's words and decoding resumes at the next PSB, and
 * sideband (decode_sb.h) switches the memory image (memimage.h) as time passes.
 * Memory does not grow with the trace: nothing is kept per instruction.
 *
 * With jobs > 1, streams and PSB-delimited chunks of one stream are decoded
 * in parallel and their output merged in order (dsink.h). A chunk's decoder
 * is fed only that chunk's bytes and starts from what its first PSB+ says;
 * what the decoder carried over a PSB in one pass is lost there:
 *
 * - the return-compression stack (the CPU starts a new one at a PSB, so no
 *   compressed return needs it);
 * - the instructions between the last packet before the PSB and the PSB's
 *   IP: the earlier chunk decodes them (past its end, up to the first that
 *   needs a packet) and keeps those before the next chunk's first IP, so
 *   each is decoded once;
 * - the call depth (--calls) and open functions (--timeline): records carry
 *   them to the merge, which keeps the depth across chunks;
 * - CYC/MTC timing calibration: times restart from the PSB's TSC;
 * - a context switch that sideband postponed (waiting for the kernel) is
 *   made at the chunk's first event instead.
 *
 * So -j N prints what -j 1 prints, byte for byte, except around decode errors
 * detected past a PSB, timestamps of CYC-timed traces, and postponed switches.
 */
#ifndef PTC_DECODE_H
#define PTC_DECODE_H

#include <stdint.h>

#include "decode_config.h"
#include "error.h"

typedef void decode_diag_fn(void *ctx, size_t stream, const struct decode_diag *d);
typedef void decode_progress_fn(void *ctx, uint64_t done, uint64_t total);

struct decode_io {
	int out_fd;		/* the instruction stream (mode, json); -1: none */
	int timeline_fd;	/* Chrome trace-event JSON; -1: none */
	decode_diag_fn *diag;	/* called in stream order, from decode_run()'s thread */
	decode_progress_fn *progress;	/* NULL: none; else about 4 times a second */
	void *ctx;
	struct decode_acct *acct;	/* NULL: none; else filled by decode_run() */
};

/*
 * Where a run's time went, thread by thread (a debug count: PTCOLLECT_DECODE_THREADS):
 * each thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), and the wall time it was blocked
 * and how often, per wait; the wall time before the first chunk started (planning,
 * image loading) and after the last one started (the tail).
 */
#define DECODE_ACCT_WORKERS 8
struct decode_acct {
	uint64_t wall_ns, start_ns, tail_ns;
	uint64_t main_cpu_ns;		/* the merge's thread, the start-up with it */
	uint64_t prep_cpu_ns;		/* of which before the workers started */
	uint64_t merge_wait_ns[3], merge_waits[3];	/* planned, decoded, its turn's output */
	/* Planning: the cuts, those whose PSB+ it could not read, and the bytes it read. */
	uint64_t cuts, cuts_unread, plan_bytes;
	unsigned workers;
	struct {
		uint64_t cpu_ns, decode_cpu_ns, chunks;
		uint64_t start_wait_ns, start_waits;	/* the mark, or AHEAD_PER_JOB */
		uint64_t room_wait_ns, room_waits;	/* writing: the mark, or its turn */
		uint64_t end_ns;	/* wall time from the start to when it found no chunk */
	} w[DECODE_ACCT_WORKERS];
};


/*
 * Threads when the configuration says none (jobs 0): the CPUs this process may use, or 1
 * when the load average says none is free.
 */
unsigned decode_default_jobs(void);
/*
 * With @jobs threads, what the output waiting for its turn holds in memory before the
 * workers wait (for the merge, or for their chunk's turn): the peak memory's bound
 * beside the caches' (decode_cache_bound()), in bytes.
 */
uint64_t decode_wait_mark(unsigned jobs);

/*
 * Decode every stream of @c (its sideband files are read for the run, and
 * released after it). @stats (c->nr_streams of them) gets each
 * stream's counts. Returns 0 when every stream was decoded (with or without
 * decode errors: they are counted and reported through io->diag), or a
 * negative errno with @e when inputs could not be read or output not written.
 */
int decode_run(struct decode_config *c, const struct decode_io *io,
	       struct decode_stats *stats, struct error *e);

#endif
