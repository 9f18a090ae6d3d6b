/* SPDX-License-Identifier: MIT */
/*
 * The perf events of a recording's streams: open them, set the filter, map
 * and redirect their rings, enable, disable and restart them. Kernel-facing;
 * every refusal of the kernel comes back as an error that says what to do.
 * What to open is a plain struct the plan fills (plan_events()).
 */
#ifndef PTC_EVENTS_H
#define PTC_EVENTS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "stream.h"

struct events_config {
	struct perf_event_attr attr;	/* exactly what perf_event_open gets */
	const char *filter;		/* the kernel's filter string, or NULL */
	int pmu_type, nr_addr_filters;	/* for the words of a refusal */
	bool cpu_wide;			/* -a/-C: the paranoid level a refusal names */
	uint64_t data_bytes, aux_bytes;	/* each ring's */
	bool overwrite;			/* snapshot mode: a read-only AUX area */
	/* For the words of a refused mapping. */
	uint64_t mlock_need, mlock_budget;
	int nr_streams;
};

/*
 * Open the event of @c for thread @pid (-1: all) on CPU @cpu (-1: any) into
 * @st; the first event of a stream owns its ring. -ESRCH when the thread is
 * gone: the caller decides whether that matters.
 */
int events_open(const struct events_config *c, struct stream *st, pid_t pid, int cpu,
		struct error *e);
/* Map the ring of @st and redirect its other events into it. */
int events_map(const struct events_config *c, struct stream *st, struct error *e);
/* Start and stop every event of @st. */
void events_enable(const struct stream *st);
void events_disable(const struct stream *st);
/* Restart the hardware of a stream after a stop (auxring_restart_fn). */
void events_restart(void *stream);
/*
 * Read how many records the kernel dropped for want of room in the ring of
 * @st, summed over the events writing into it (PERF_FORMAT_LOST; an
 * inherited event's children count on it), into st->lost_kernel. After the
 * last drain, the events stopped. st->lost_counted says whether the count is
 * whole: false when an event was opened without it (a kernel before 6.0) or
 * a read failed.
 */
void events_count_lost(struct stream *st);
/* Unmap and close. */
void events_close(struct stream *st);

#endif
