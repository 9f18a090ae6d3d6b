/* SPDX-License-Identifier: MIT */
/*
 * What a script asks of a running recording, heard in its poll loop: the
 * fires of --trigger (each recorded in the manifest with its time and
 * thread, its action carried out, --trigger-count applied), the commands of
 * --control (each answered on ACK), and the ready signal (--ready). The
 * actions themselves (a snapshot, tracing on or off, the end) are the
 * session's: steer calls them through struct steer_ops and prints nothing.
 */
#ifndef PTC_STEER_H
#define PTC_STEER_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "manifest.h"
#include "plan_script.h"
#include "snapshot.h"

#define STEER_MAX_FDS 3		/* the triggers, CTL, ACK */

/* What status answers, from the session. */
struct steer_status {
	const char *state;	/* "tracing", "stopped" (tracing off) or "no-trace" */
	double seconds;
	uint64_t bytes, losses;
	int streams;
	pid_t workload;		/* 0: none */
};

struct steer_ops {
	void *arg;
	/*
	 * Take a snapshot: its number, or a negative errno with @e (a usage error
	 * when the plan is not in snapshot mode: script_snapshot_check()).
	 */
	int (*snapshot)(void *arg, const struct snapshot_cause *why, struct error *e);
	/* Tracing on or off. 0, or a negative errno with @e (no trace to turn). */
	int (*tracing)(void *arg, bool on, struct error *e);
	/* End the recording. */
	void (*stop)(void *arg, const char *why);
	void (*status)(void *arg, struct steer_status *st);
	/* A problem that does not stop the recording. */
	void (*warn)(void *arg, const struct error *e);
};

struct steer;

/*
 * For the plan's script: open the control channel, make the trigger set
 * (not armed yet) and measure perf's clock against CLOCK_MONOTONIC into
 * @m->clock (fires and snapshots get times on both). @m receives fires,
 * marks and the triggers' counts from then on; it must outlive @st.
 */
int steer_open(struct steer **st, const struct script_plan *sp, const struct steer_ops *ops,
	       struct manifest *m, struct error *e);
/* The triggers' descriptor (readable when a fire waits), -1 without triggers. */
int steer_trigger_fd(const struct steer *st);
/* Arm them, once: @pid is the workload's for SCOPE_WORKLOAD, else ignored. */
int steer_arm(struct steer *st, pid_t pid, struct error *e);
/* Whether uprobes follow the target's children: trigger_children(). */
int steer_children(const struct steer *st, uint64_t *unfollowed);
/* Tracing is live: write --ready's file, or its line on ACK. */
int steer_ready(struct steer *st, struct error *e);
/* The descriptors to poll now, into @pf (STEER_MAX_FDS at most); how many. */
int steer_fds(const struct steer *st, struct pollfd *pf);
/* After poll(): act on what @pf (as steer_fds() filled it) says is ready. */
void steer_handle(struct steer *st, const struct pollfd *pf, int n);
/* Commands read and not yet handled: poll without waiting, then call steer_handle() again. */
bool steer_pending(const struct steer *st);
/*
 * Trigger fires read and held back for their time order (trigger.h): not
 * acted on yet, so an early freeze for them still stands.
 */
bool steer_holding(const struct steer *st);
/* The triggers' counts into the manifest (fires, dropped, throttled, late). */
void steer_sync(struct steer *st);
/* Disarm the triggers: the recording is ending. */
void steer_quiet(struct steer *st);
void steer_close(struct steer *st);

#endif
