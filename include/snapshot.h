/* SPDX-License-Identifier: MIT */
/*
 * Snapshots of a recording in snapshot mode (-S): every stream's events are
 * stopped together, each stream's window (what its hardware wrote since the
 * previous snapshot, at most the plan's SIZE: auxring_snapshot()) goes to
 * snap-N/<stream>.pt in the bundle, N counting from 1, and the manifest gets
 * the snapshot's entry; then tracing goes on. man/ptcollect-bundle.5 says
 * how the files are laid out.
 */
#ifndef PTC_SNAPSHOT_H
#define PTC_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bundle.h"
#include "error.h"
#include "manifest.h"
#include "stream.h"

#define SNAPSHOT_DIR_FMT "snap-%u"

struct snapshots {
	uint64_t size;		/* the window per stream at most (the plan's) */
	unsigned int number;	/* of the last snapshot taken, 0 before the first */
	uint64_t freeze_ns;	/* CLOCK_MONOTONIC of the last one's stop */
};

struct snapshot_cause {
	const char *what;	/* "signal", "control", "trigger" or "final" */
	int trigger;		/* the trigger that fired it, or -1 */
	int cpu;		/* where it fired, -1: its stream is stopped first */
	pid_t tid;		/* which thread (per-thread streams), 0: none */
};

/*
 * Take snapshot number ++@sn->number of @streams into @b and add it to @m.
 * Every stream is stopped before the first window is read, the one that
 * traces the fire's CPU or thread first (its window holds the fire); with @resume
 * they are started again once the windows are written (a recording whose
 * tracing is off, or that is ending, leaves them stopped). Returns 0, or a
 * negative errno with @e when a window could not be written (the windows
 * written before it are in the manifest).
 */
int snapshot_take(struct snapshots *sn, struct bundle *b, struct stream *streams, int n,
		  const struct snapshot_cause *why, bool resume, struct manifest *m,
		  struct error *e);

#endif
