// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * One uprobe program for every uprobe trigger: the attach cookie says which
 * trigger fired. Each fire under the trigger's limit becomes one record in a
 * BPF ring buffer; counting in the kernel keeps the limit exact even when
 * threads on several CPUs hit the probe at once, in time order
 * (trigger_bpf_event.h). A trigger on one process is
 * attached to every process and counts those in the follow map: the process
 * and, added at their fork before they run, its descendants.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "trigger_bpf_event.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TRIGGER_BPF_RING_BYTES);
} fires SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TRIGGER_BPF_MAX);
	__type(key, __u32);
	__type(value, struct trigger_bpf_state);
} state SEC(".maps");

/* The processes (tgids) a trigger on one process follows: it and its children. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRIGGER_BPF_FOLLOW_MAX);
	__type(key, __u32);
	__type(value, __u8);
} follow SEC(".maps");

/* Children the follow map had no room for. */
__u64 unfollowed;

/* The fields read, relocated against the kernel's BTF (CO-RE). */
typedef struct {
	int counter;
} atomic_t;

struct signal_struct {
	atomic_t live;		/* the process's threads that have not begun to exit */
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	struct signal_struct *signal;
} __attribute__((preserve_access_index));

/*
 * A new process whose parent is followed is followed too: the tracepoint
 * runs in the parent after the child is made and before it is woken.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(trigger_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (ptgid == ctgid || !bpf_map_lookup_elem(&follow, &ptgid))
		return 0;
	if (bpf_map_update_elem(&follow, &ctgid, &one, BPF_ANY))
		__sync_fetch_and_add(&unfollowed, 1);
	return 0;
}

/*
 * A followed process leaves the map when its last thread exits, so that a
 * later process given its pid is not counted. The tracepoint runs in each
 * exiting thread after do_exit() has counted it out of signal->live: 0 there
 * means the whole process is going (a leader that exits first, leaving its
 * threads running, keeps it followed).
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(trigger_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (p->signal->live.counter)
		return 0;
	bpf_map_delete_elem(&follow, &tgid);
	return 0;
}

SEC("uprobe")
int trigger_fire(void *ctx)
{
	__u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 idx = (__u32)bpf_get_attach_cookie(ctx);
	struct trigger_bpf_state *st = bpf_map_lookup_elem(&state, &idx);
	struct trigger_bpf_event *ev;
	__u32 tgid = id >> 32;

	if (!st)
		return 0;
	if (st->follow && !bpf_map_lookup_elem(&follow, &tgid))
		return 0;
	trigger_bpf_seen(st, now);
	if (!trigger_bpf_count(st, now))
		return 0;
	ev = bpf_ringbuf_reserve(&fires, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&st->dropped, 1);
		return 0;
	}
	ev->time = now;
	ev->pid = id >> 32;
	ev->tid = (__u32)id;
	ev->idx = idx;
	ev->cpu = bpf_get_smp_processor_id();
	bpf_ringbuf_submit(ev, 0);
	return 0;
}
