/* SPDX-License-Identifier: MIT */
/*
 * One stream of a recording: a ring (the data ring and the AUX area of one
 * perf event), the events that write into it, and the bundle's two files it
 * is drained into. The plan names streams, the session opens their events
 * and drains them, the bundle creates their files and reports their counts
 * in the manifest (bundle_describe_stream()): all through this one object.
 */
#ifndef PTC_STREAM_H
#define PTC_STREAM_H

#include <stdbool.h>
#include <sys/types.h>

#include "auxring.h"

struct stream {
	int cpu;		/* -1 in per-thread mode */
	pid_t tid;		/* -1 in per-CPU mode; 0 for the workload not started yet */
	char trace[32];		/* "cpuN.pt" or "tidN.pt" */
	char sideband[40];	/* the matching ".pevent" */
	int trace_fd, sb_fd;	/* the bundle's files, -1 when closed */
	int ring_fd;		/* the event whose ring this is, -1 before it is open */
	int *fds;		/* every event writing into the ring */
	int nr_fds;
	struct auxring ring;	/* with the stream's counts */
	/*
	 * The records the kernel could not fit in the ring, as its events count
	 * them (PERF_FORMAT_LOST, Linux 6.0): a LOST record reports them only at
	 * the next record that fits, which may never come. Valid when
	 * lost_counted: every event was opened with the count and read at the end.
	 */
	uint64_t lost_kernel;
	bool lost_counted;
	int nr_uncounted;	/* events the kernel opened without the count (< 6.0) */
	bool mapped;
	bool hup;		/* every event of the stream has exited */
};

/* A closed stream of CPU @cpu (@tid -1) or thread @tid (@cpu -1), named. */
void stream_init(struct stream *s, int cpu, pid_t tid);
/* Name it again (the workload's thread id became known). */
void stream_name(struct stream *s);
/*
 * The records the kernel dropped from the ring that no LOST record reported, in
 * *@n (its count less the LOST records'); false: not counted (*@n 0).
 */
bool stream_unreported(const struct stream *s, uint64_t *n);

#endif
