/* SPDX-License-Identifier: MIT */
/*
 * The record loop: opens the intel_pt events for the plan's target, maps
 * their rings, runs the workload, drains until a stop condition, and closes
 * everything cleanly. Kernel-facing (perf_event_open, ioctl, poll, signals);
 * ring protocol and file writes go through auxring, the output directory
 * through bundle.
 */
#ifndef PTC_SESSION_H
#define PTC_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "record.h"

struct session_result {
	char err[1024];		/* what failed, when the session failed */
	char hint[1024];	/* what to do about it, or empty */
	bool usage_error;	/* the failure is bad input (exit 2), not a runtime one */
	bool workload_ran;
	int workload_status;	/* exit code, or 128+signal */
	uint64_t bytes;		/* trace bytes written over all streams */
	uint64_t lost_records;	/* loss records (AUX flags, LOST) over all streams */
};

/* Returns 0 when the recording completed (possibly with losses it reported). */
int session_run(const struct record_plan *plan, struct session_result *res);

#endif
