/* SPDX-License-Identifier: MIT */
/*
 * The two trigger kinds as trigger.c drives them. Each registers its
 * descriptors in the set's epoll instance and reads its fires without
 * blocking into a sink.
 */
#ifndef PTC_TRIGGER_BACKEND_H
#define PTC_TRIGGER_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* Triggers in one set (trigger_add()). */
#define TRIGGER_MAX 64

/* One fire of a trigger, as both kinds report it. */
struct trigger_fire {
	uint64_t time;		/* CLOCK_MONOTONIC ns */
	unsigned int idx;	/* the trigger, in trigger_add() order */
	pid_t pid, tid;
	int cpu;
};

typedef void (*trigger_sink_fn)(void *ctx, const struct trigger_fire *f);

/* ---- uprobe + BPF (trigger_bpf.c): one program, one ring for all uprobes ---- */
struct trigger_bpf;

/* Load the program; -EPERM / -EOPNOTSUPP with what to do. */
int trigger_bpf_open(struct trigger_bpf **b, int epfd, struct error *e);
/* Attach trigger @idx at @path:@offset for @pid (-1: every process), at most @limit fires. */
int trigger_bpf_attach(struct trigger_bpf *b, unsigned int idx, const char *path,
		       uint64_t offset, pid_t pid, uint64_t limit, struct error *e);
void trigger_bpf_detach(struct trigger_bpf *b, unsigned int idx);
/*
 * A trigger attached for one process counts it and its descendants, each
 * added at its fork and removed when it exits (BPF programs on
 * sched_process_fork and sched_process_exit, which need the
 * kernel's BTF): whether that hook is on, and the children the map of
 * TRIGGER_BPF_FOLLOW_MAX processes had no room for.
 */
bool trigger_bpf_follows(const struct trigger_bpf *b);
uint64_t trigger_bpf_unfollowed(const struct trigger_bpf *b);
/* Every fire in the ring now; the count or -errno. */
int trigger_bpf_read(struct trigger_bpf *b, trigger_sink_fn sink, void *ctx);
/* Fires the kernel dropped for @idx (the ring was full). */
uint64_t trigger_bpf_dropped(const struct trigger_bpf *b, unsigned int idx);
void trigger_bpf_close(struct trigger_bpf *b);

/* ---- hardware breakpoint (trigger_bp.c): one per trigger, per-CPU rings ---- */
struct trigger_bp;

/* Execute breakpoint at @path:@offset as mapped in process @pid, in all its threads. */
int trigger_bp_open(struct trigger_bp **b, unsigned int idx, const char *path, uint64_t offset,
		    pid_t pid, int epfd, struct error *e);
int trigger_bp_enable(struct trigger_bp *b, struct error *e);
void trigger_bp_disable(struct trigger_bp *b);
int trigger_bp_read(struct trigger_bp *b, trigger_sink_fn sink, void *ctx);
/*
 * Fires a full ring dropped: the kernel's count (Linux 6.0), else its LOST records'
 * (*@counted false: at least that many).
 */
uint64_t trigger_bp_dropped(const struct trigger_bp *b, bool *counted);
/* THROTTLE records: the kernel stopped sampling a while (hits too frequent). */
uint64_t trigger_bp_throttled(const struct trigger_bp *b);
void trigger_bp_close(struct trigger_bp *b);

/*
 * Where @path's file offset @offset is mapped in @pid (from /proc/PID/maps,
 * matched by device and inode). 0, or -ENOENT (not mapped) / -ESRCH.
 */
int trigger_map_address(pid_t pid, const char *path, uint64_t offset, uint64_t *addr);

#endif
