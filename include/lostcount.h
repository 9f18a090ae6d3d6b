/* SPDX-License-Identifier: MIT */
/*
 * The kernel's own count of the records a full ring dropped (PERF_FORMAT_LOST,
 * Linux 6.0): a LOST record says so only before the next record that fits, and
 * none may come. For every event that writes into a ring: the streams' events
 * and the breakpoint triggers'.
 */
#ifndef PTC_LOSTCOUNT_H
#define PTC_LOSTCOUNT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * perf_event_open() of @a (not changed) with PERF_FORMAT_LOST added: a kernel
 * before 6.0 refuses it (EINVAL), and it is opened again without. *@counted:
 * opened with it. The descriptor (close-on-exec), or -1 with errno.
 */
int lostcount_open(const struct perf_event_attr *a, pid_t pid, int cpu, bool *counted);
/*
 * The records dropped, summed over the @n events of @fds (each counts its own;
 * an inherited event's children count on it), all opened with the count and
 * nothing else in read_format. False: a read failed (*@sum is then not set).
 */
bool lostcount_sum(const int *fds, int n, uint64_t *sum);

#endif
