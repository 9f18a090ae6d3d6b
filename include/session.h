/* SPDX-License-Identifier: MIT */
/*
 * A recording: carries out a plan. Opens the plan's events, maps their
 * rings, makes the bundle, runs the workload, drains until a stop condition
 * and closes everything cleanly. It decides nothing the plan decided, and it
 * prints nothing: problems that do not stop it and the once-a-second figures
 * go to the caller's callbacks, the rest is in the result.
 */
#ifndef PTC_SESSION_H
#define PTC_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "plan.h"
#include "stream.h"

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

/*
 * Returns 0 when the recording completed (possibly with losses it counted),
 * else a negative errno with @e; when @res->began the bundle keeps what was
 * captured and its manifest says what is missing.
 */
int session_run(const struct plan *p, const struct session_ops *ops,
		struct session_result *res, struct error *e);
void session_result_free(struct session_result *res);

#endif
