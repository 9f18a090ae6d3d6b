/* SPDX-License-Identifier: MIT */
/*
 * ptcollect report: where the time went, per function. A renderer
 * (render_report.c) of the decoder's records: in each chunk it writes one
 * byte per instruction and a compact record per call, return, gap, thread
 * switch and trace on/off; at the merge, in stream order, it keeps a call
 * stack per thread and folds every call into its function's row:
 *
 * - calls: entries (a call record into it); incomplete: those cut by a trace
 *   gap (decode error, overflow, loss, the stream's start or end, tracing
 *   turned off elsewhere, a thread table full), which never enter a duration;
 * - instructions: self (every instruction executed in it, exact), total (its
 *   complete calls, each with what it called, a recursive call counted once);
 * - time: a call lasts from its call to the matching return, or to a return
 *   past it (the stack unwinds: longjmp, exceptions; a tail call's jump is no
 *   call, as for perf); minus the time its thread was switched out, had
 *   tracing off (syscalls in a user-only trace) or was in an interrupt. The
 *   clock is perf time (ns) when the trace has timing, else instructions.
 *
 * Memory is bounded: REPORT_FUNCS_MAX rows, REPORT_THREADS_MAX stacks per
 * stream of REPORT_DEPTH_MAX frames, REPORT_NODES_MAX call-stack nodes; each
 * row keeps REPORT_EXACT_MAX durations exactly, then a log histogram.
 */
#ifndef PTC_RENDER_REPORT_H
#define PTC_RENDER_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#define REPORT_FUNCS_MAX 65536
#define REPORT_THREADS_MAX 256
#define REPORT_DEPTH_MAX 1024
#define REPORT_NODES_MAX (1u << 20)
#define REPORT_EXACT_MAX 1024
#define REPORT_OUTLIERS_MAX 1000
/* The histogram's sub-buckets per power of two: quantiles within 1/32 (3.2%). */
#define REPORT_HIST_SUB 32

enum report_sort {
	REPORT_SORT_TOTAL,
	REPORT_SORT_CALLS,
	REPORT_SORT_SELF,
	REPORT_SORT_P99,
	REPORT_SORT_MAX,
	REPORT_SORT_INSNS,
};

enum report_view {
	REPORT_FUNCTIONS,	/* the table (text or JSON) */
	REPORT_FOLDED,		/* comm;outer;...;inner WEIGHT */
};

struct report_config {
	enum report_view view;
	enum report_sort sort;
	uint64_t top;			/* rows per group, 0: all */
	const char *function;		/* fnmatch(3) glob of the names shown, NULL: all */
	uint64_t outliers;		/* the N longest calls of each function shown */
	bool weight_insns;		/* --folded weights: instructions (else time) */
	bool clock_insns;		/* --clock insns: durations in instructions */
	bool per_thread;		/* a group of rows per thread */
	bool per_stream;		/* a group per stream (a snapshot's window) */
	bool json;
	bool sum_count;			/* the table says how many calls the workers summed */
	bool sum_play;			/* the merge plays those calls, never folds them */
	/*
	 * With sum_count: the batches workers wrote again from one they kept, and with
	 * again_check (each also summed, the sums' bytes kept) those whose copy was not what
	 * summing wrote or left (atomic).
	 */
	uint64_t *again, *again_bad;
	bool again_check;
	/* With function: set to the functions (with any call or instruction) it matched and
	 * those there were, for the command's note when it matched none. */
	uint64_t *matched, *active;
};

#endif
