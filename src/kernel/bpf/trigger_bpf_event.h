/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/* What the uprobe program and user space share: the record and per-trigger state. */
#ifndef PTC_TRIGGER_BPF_EVENT_H
#define PTC_TRIGGER_BPF_EVENT_H

#include <linux/types.h>

#define TRIGGER_BPF_MAX		64
#define TRIGGER_BPF_RING_BYTES	(256 * 1024)
#define TRIGGER_BPF_FOLLOW_MAX	8192	/* processes a process trigger follows */

struct trigger_bpf_event {
	__u64 time;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid, tid;
	__u32 idx;		/* the trigger, from the attach cookie */
	__u32 cpu;
};

struct trigger_bpf_state {
	__u64 limit;		/* 0: no limit; set by user space before attaching */
	__u64 hits;		/* every hit, those past the limit too */
	__u64 dropped;		/* under the limit but the ring was full */
	__u64 follow;		/* 1: only processes in the follow map count */
};

#endif
