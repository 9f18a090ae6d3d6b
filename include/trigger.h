/* SPDX-License-Identifier: MIT */
/*
 * Triggers: code locations whose execution the session hears about, as fires
 * (which trigger, when, which thread, which CPU). Two kinds behind one set:
 *
 *	uprobe		a BPF program on a uprobe at FILE's offset (trigger_bpf.c);
 *			every process that runs FILE, or one process
 *	breakpoint	a perf hardware execute breakpoint in one process's threads
 *			(trigger_bp.c), no BPF
 *
 * Event-loop use: add the resolved specs, arm once before tracing starts (a
 * trigger that cannot be armed is an error then, with nothing left armed),
 * poll trigger_fd() for POLLIN, and call trigger_poll_fires() when it is
 * readable (or whenever: it never blocks). At the end (disarmed, or the
 * target gone) call trigger_flush_fires() until it returns 0: it returns the
 * fires still held. A trigger with a limit disarms itself after that many
 * fires, counted in time order; fires past it are not returned.
 *
 * Fires come in time order across calls: a fire is returned once it is older
 * than the time the call began reading minus a margin (TRIGGER_HOLD_NS, its
 * reasoning in trigger.c), so that one written to a ring after that ring was
 * read, which carries a time taken before its write, still comes before it.
 * Younger fires are held for a later call; trigger_fd() turns readable when
 * they are old enough. A fire whose writer was held up longer than the
 * margin (a preempted uprobe program, a descheduled vCPU) is returned when it
 * comes and counted late.
 *
 * Times are CLOCK_MONOTONIC nanoseconds on both kinds (bpf_ktime_get_ns();
 * breakpoints use perf's use_clockid). perf's default sample clock is not
 * CLOCK_MONOTONIC (it is local_clock()); trigger_perf_clock_offset() measures
 * the difference, to put fires on the sideband's time line.
 */
#ifndef PTC_TRIGGER_H
#define PTC_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "trigger_backend.h"
#include "trigger_spec.h"

/* How long a fire is held for older ones to come (the margin above): 200 us. */
#define TRIGGER_HOLD_NS 200000ull

struct trigger_stats {
	uint64_t fires;		/* released in time order (returned, or to be) */
	uint64_t late;		/* came older than fires already released (past the limit too) */
	uint64_t dropped;	/* lost before user space saw them (a full ring) */
	bool dropped_counted;	/* @dropped is exact: false, at least (the LOST records' sum) */
	uint64_t throttled;	/* breakpoints: times the kernel paused it (hits too often) */
	uint64_t limit;		/* 0: none */
	bool armed;		/* false before arming and once the limit is reached */
};

struct trigger_set;

int trigger_set_new(struct trigger_set **ts, struct error *e);
/*
 * Add a resolved spec with a fire limit (0: none). Returns its index, or a
 * negative errno with @e (too many triggers, an unresolved spec).
 */
int trigger_add(struct trigger_set *ts, const struct trigger_spec *s, uint64_t limit,
		struct error *e);
/*
 * Arm every trigger, once (add them all first): uprobes on @pid's process, or
 * on every process when @pid is -1; breakpoints in every thread of @pid (and
 * the threads and children they start later), which must have mapped FILE
 * already. On error nothing stays armed (the set can only be freed): -EPERM
 * (no permission, with what to change), -ENOSPC (no breakpoint slot),
 * -ENOENT (FILE not mapped), -EOPNOTSUPP (no BPF), -EINVAL (no process).
 */
int trigger_arm(struct trigger_set *ts, pid_t pid, struct error *e);
/*
 * One descriptor to poll for POLLIN (an epoll instance), from
 * trigger_set_new() on: readable when a ring has fires, and while the set
 * holds fires, once the oldest is past the margin.
 */
int trigger_fd(const struct trigger_set *ts);
/*
 * Up to @max fires, in time order, without blocking: those older than the
 * call's start minus the margin; younger ones are held. Returns how many, or
 * a negative errno with @e. A call that returns @max may leave more: call
 * again until it returns less.
 */
int trigger_poll_fires(struct trigger_set *ts, struct trigger_fire *out, size_t max,
		       struct error *e);
/*
 * As trigger_poll_fires(), holding nothing back: every fire read, in time
 * order. For the last reads, once no more fires are to come in time order
 * with them (the triggers disarmed, the target exited).
 */
int trigger_flush_fires(struct trigger_set *ts, struct trigger_fire *out, size_t max,
			struct error *e);
/* Fires read and not yet returned (held, or released past a call's @max). */
size_t trigger_pending(const struct trigger_set *ts);
void trigger_get_stats(const struct trigger_set *ts, unsigned int idx, struct trigger_stats *st);
/*
 * Uprobes armed on one process count it and its descendants, each followed
 * from its fork, before it runs (breakpoints follow children by inherit).
 * 1 when they do, 0 when this kernel cannot (no BTF: the process alone is
 * counted); *@unfollowed: children missed because the map was full.
 */
int trigger_children(const struct trigger_set *ts, uint64_t *unfollowed);
/* The number of triggers added. */
unsigned int trigger_count(const struct trigger_set *ts);
/* Disarm every trigger now (fires already in flight are still returned: flush them). */
void trigger_disarm_all(struct trigger_set *ts);
void trigger_set_free(struct trigger_set *ts);

/*
 * perf's default sample clock minus CLOCK_MONOTONIC, in ns, measured on a
 * COMM record of this thread; *@err_ns bounds the error. 0 or -errno.
 */
int trigger_perf_clock_offset(int64_t *offset_ns, uint64_t *err_ns, struct error *e);

#endif
