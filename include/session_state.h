/* SPDX-License-Identifier: MIT */
/*
 * A recording's state, shared by its modules: what the caller gives it
 * (struct session_ops) and gets back (struct session_result), and what it
 * holds while it runs (struct session), with the helpers every part of it
 * uses: a warning, the stop, the clock, the totals, the manifest kept in step.
 */
#ifndef PTC_SESSION_STATE_H
#define PTC_SESSION_STATE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "bundle.h"
#include "error.h"
#include "events.h"
#include "exechold.h"
#include "freeze.h"
#include "manifest.h"
#include "plan.h"
#include "snapshot.h"
#include "steer.h"
#include "stream.h"
#include "workload.h"

struct session_ops {
	void *arg;
	/* A problem that does not stop the recording (it is also in the manifest). */
	void (*warn)(void *arg, const struct error *e);
	/* What the recording does that the caller should say (may be NULL). */
	void (*note)(void *arg, const char *text);
	/* Once a second while tracing. */
	void (*tick)(void *arg, double seconds, uint64_t bytes, uint64_t losses);
};

struct session_result {
	bool began;		/* tracing started: the bundle is kept, whatever follows */
	bool workload_ran;
	int workload_status;	/* exit code, or 128+signal */
	const char *stop_reason;
	uint64_t bytes;		/* trace bytes written over all streams */
	uint64_t losses;	/* loss records (AUX flags, LOST) over all streams */
	double seconds;
	struct stream *streams;	/* with their final counts; session_result_free() */
	int nr_streams;
	struct manifest manifest;	/* as last written: snapshots, fires, marks */
	bool manifest_written;	/* the last manifest is on disk: it says what the files hold */
};

struct session {
	const struct plan *p;
	struct events_config ev;	/* what the plan opens, for the kernel layer */
	const struct session_ops *ops;
	struct session_result *res;
	struct bundle *bundle;
	struct manifest m;
	struct stream *streams;
	int nr_streams;
	pid_t *tids;		/* the task target's threads, as opened */
	int nr_tids;
	struct workload w;
	struct steer *steer;	/* triggers, control, ready */
	const struct script_plan *sp;	/* the plan's, or script when -p could not be seized */
	struct script_plan *script;	/* a copy with breakpoints armed as uprobes, or NULL */
	struct exechold_group *pg;	/* -p with breakpoints: its threads, our tracees */
	struct freezer *fz;	/* early freezes for snapshot triggers, or NULL */
	struct snapshots snaps;
	bool tracing;		/* the events are on (not stopped by a trigger or the control) */
	int proc_fd;		/* proc.pevent, -1 until a running target needs it */
	int sig_fd, timer_fd;
	sigset_t old_mask;
	bool stop;
	bool child_signalled;	/* a stop signal was passed on to the workload */
	unsigned int ticks;
	struct timespec t0;
	struct error write_err;	/* the first write that failed while tracing */
};

/* A problem that does not stop the recording, to the caller's warn(). */
__attribute__((format(printf, 3, 4)))
void session_warn(struct session *s, int code, const char *fmt, ...);

/* Stop the recording, the first @why being the result's stop reason. */
void session_stop(struct session *s, const char *why);

/* Seconds since tracing began. */
double session_elapsed(const struct session *s);

/* Trace bytes and loss records over all streams. */
void session_totals(const struct session *s, uint64_t *bytes, uint64_t *losses);

/* The manifest rewritten with the streams' counts now. */
int session_sync_manifest(struct session *s, struct error *e);

#endif
