/* SPDX-License-Identifier: MIT */
/*
 * The perf events of a plan's streams: open them, set the filter, map and
 * redirect their rings, enable, disable and restart them. Kernel-facing;
 * every refusal of the kernel comes back as an error that says what to do.
 */
#ifndef PTC_EVENTS_H
#define PTC_EVENTS_H

#include <sys/types.h>

#include "error.h"
#include "plan.h"
#include "stream.h"

/*
 * Open the plan's event for thread @pid (-1: all) on CPU @cpu (-1: any) into
 * @st; the first event of a stream owns its ring. -ESRCH when the thread is
 * gone: the caller decides whether that matters.
 */
int events_open(const struct plan *p, struct stream *st, pid_t pid, int cpu, struct error *e);
/* Map the ring of @st and redirect its other events into it. */
int events_map(const struct plan *p, struct stream *st, struct error *e);
/* @req (PERF_EVENT_IOC_ENABLE, ...) on every event of @st. */
void events_ioctl(const struct stream *st, unsigned long req);
/* Restart the hardware of a stream after a stop (auxring_restart_fn). */
void events_restart(void *stream);
/* Unmap and close. */
void events_close(struct stream *st);

#endif
