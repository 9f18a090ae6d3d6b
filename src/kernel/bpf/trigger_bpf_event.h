/* SPDX-License-Identifier: (MIT OR GPL-2.0) */
/* What the uprobe program and user space share: the record and per-trigger state. */
#ifndef PTC_TRIGGER_BPF_EVENT_H
#define PTC_TRIGGER_BPF_EVENT_H

#include <linux/types.h>

#define TRIGGER_BPF_MAX		64
/* 32 bytes a fire: 131,072 fires held while user space catches up. At 256 KiB two threads
 * hitting a probe 40,000 times at full speed lost 6-25 % of the fires; at 4 MiB none. */
#define TRIGGER_BPF_RING_BYTES	(4096 * 1024)
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
	__u64 dropped;		/* reported (under the limit, or maybe) but the ring was full */
	__u64 follow;		/* 1: only processes in the follow map count */
	__u64 latest;		/* the youngest time of the hits counted, and some more */
	__u64 unsure;		/* 1: a hit's time may be missing from @latest */
};

#define TRIGGER_BPF_LATEST_TRIES 64

/*
 * The limit keeps the first hits in time, not in the order their count was
 * taken: a hit takes its time, then its count, and on two CPUs the older one
 * can get the later count. So each hit raises @latest to its time before it
 * is counted (trigger_bpf_seen()), and one counted past the limit is still
 * reported when it is older than @latest (trigger_bpf_count()): a hit counted
 * before it was younger, so it may be one of the first. User space keeps the
 * first by time of what comes (trigger_order.c). Taking time and count under
 * one bpf_spin_lock would be simpler, but the verifier refuses the lock in
 * uprobe programs ("tracing progs cannot use bpf_spin_lock yet") and any
 * helper call under it.
 */
static inline __attribute__((always_inline))
void trigger_bpf_seen(struct trigger_bpf_state *st, __u64 now)
{
	for (int i = 0; i < TRIGGER_BPF_LATEST_TRIES; i++) {
		__u64 old = *(volatile __u64 *)&st->latest;

		/* A failed swap: another hit raised it in between, maybe still below @now. */
		if (old >= now || __sync_val_compare_and_swap(&st->latest, old, now) == old)
			return;
	}
	/* As many hits raced in as tries (never seen): every hit past the limit is reported. */
	st->unsure = 1;
}

/* Counts the hit (after trigger_bpf_seen()); whether to report it. */
static inline __attribute__((always_inline))
int trigger_bpf_count(struct trigger_bpf_state *st, __u64 now)
{
	__u64 n = __sync_fetch_and_add(&st->hits, 1);

	if (!st->limit || n < st->limit)
		return 1;
	return now < *(volatile __u64 *)&st->latest || *(volatile __u64 *)&st->unsure;
}

#endif
