// SPDX-License-Identifier: MIT
/*
 * Uprobe triggers: the BPF program of src/kernel/bpf/trigger.bpf.c (its skeleton is
 * generated at build time) attached once per trigger, the trigger's index as
 * the attach cookie. Fires come back through one BPF ring buffer, read with
 * libbpf's ring_buffer API without blocking.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "trigger_backend.h"
#include "trigger_bpf_event.h"
#include "trigbpf.skel.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524	/* the kernel's "cannot probe that instruction" */
#endif

struct trigger_bpf {
	struct trigbpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *link[TRIGGER_BPF_MAX];
	trigger_sink_fn sink;
	void *ctx;
	bool follows;		/* the fork hook is attached: children are followed */
};

/* libbpf prints; library code must not. Its last warning goes into the error instead. */
static char libbpf_msg[512];

static int keep_message(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t n;

	if (level != LIBBPF_WARN)
		return 0;
	vsnprintf(libbpf_msg, sizeof(libbpf_msg), fmt, ap);
	n = strlen(libbpf_msg);
	while (n && (libbpf_msg[n - 1] == '\n' || libbpf_msg[n - 1] == ' '))
		libbpf_msg[--n] = '\0';
	return 0;
}

static void quiet_libbpf(void)
{
	libbpf_msg[0] = '\0';
	libbpf_set_print(keep_message);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct trigger_bpf *b = ctx;
	const struct trigger_bpf_event *ev = data;
	struct trigger_fire f;

	if (size < sizeof(*ev))
		return 0;
	f.time = ev->time;
	f.idx = ev->idx;
	f.pid = (pid_t)ev->pid;
	f.tid = (pid_t)ev->tid;
	f.cpu = (int)ev->cpu;
	b->sink(b->ctx, &f);
	return 0;
}

static int load_error(struct error *e, int ret)
{
	if (ret == -EPERM || ret == -EACCES) {
		err_runtime(e, -EPERM, "uprobe triggers: no permission to load a BPF program (%s)",
			    libbpf_msg[0] ? libbpf_msg : strerror(-ret));
		err_hint(e, "run as root, or give ptcollect CAP_BPF and CAP_PERFMON; or use a "
			 "breakpoint: trigger, which needs no BPF");
		return -EPERM;
	}
	err_runtime(e, -EOPNOTSUPP, "uprobe triggers: this kernel cannot load the trigger's BPF "
		    "program: %s", libbpf_msg[0] ? libbpf_msg : strerror(-ret));
	err_hint(e, "uprobe triggers need BPF ring buffers (Linux 5.8) and attach cookies "
		 "(Linux 5.15); use a breakpoint: trigger instead");
	return -EOPNOTSUPP;
}

int trigger_bpf_open(struct trigger_bpf **out, int epfd, struct error *e)
{
	struct trigger_bpf *b = calloc(1, sizeof(*b));
	struct epoll_event ev = { .events = EPOLLIN };
	int ret;

	if (!b)
		return err_runtime(e, -ENOMEM, "out of memory");
	quiet_libbpf();
	b->skel = trigbpf__open();
	if (!b->skel) {
		ret = load_error(e, -errno);
		goto fail;
	}
	/* Following children needs the kernel's BTF (the fork hook reads task_struct). */
	b->follows = !access("/sys/kernel/btf/vmlinux", R_OK);
	bpf_program__set_autoload(b->skel->progs.trigger_fork, b->follows);
	bpf_program__set_autoload(b->skel->progs.trigger_exit, b->follows);
	if (trigbpf__load(b->skel)) {
		ret = load_error(e, -errno);
		goto fail;
	}
	/* Kept in the skeleton, which destroys the link with it. */
	if (b->follows)
		b->skel->links.trigger_fork = bpf_program__attach(b->skel->progs.trigger_fork);
	b->follows = b->follows && b->skel->links.trigger_fork;
	/* Processes that exited leave the map (were this refused, they would stay). */
	if (b->follows)
		b->skel->links.trigger_exit = bpf_program__attach(b->skel->progs.trigger_exit);
	b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.fires), on_record, b, NULL);
	if (!b->rb) {
		ret = err_runtime(e, -errno, "uprobe triggers: BPF ring buffer: %s",
				  strerror(errno));
		goto fail;
	}
	ev.data.ptr = b;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(b->rb), &ev)) {
		ret = err_runtime(e, -errno, "epoll: %s", strerror(errno));
		goto fail;
	}
	*out = b;
	return 0;
fail:
	trigger_bpf_close(b);
	return ret;
}

static int attach_error(struct error *e, int ret, const char *path, uint64_t offset, pid_t pid)
{
	const char *why = libbpf_msg[0] ? libbpf_msg : strerror(-ret);

	if (ret == -EPERM || ret == -EACCES) {
		err_runtime(e, -EPERM, "%s: no permission to place a uprobe at offset 0x%" PRIx64
			    " (%s)", path, offset, why);
		err_hint(e, "run as root, or give ptcollect CAP_PERFMON and CAP_BPF");
		return -EPERM;
	}
	if (ret == -ESRCH) {
		err_runtime(e, -ESRCH, "uprobe trigger: process %d is gone", (int)pid);
		return -ESRCH;
	}
	if (ret == -ENOTSUPP || ret == -EINVAL)
		err_runtime(e, ret, "%s: the kernel refuses a uprobe at offset 0x%" PRIx64 ": %s "
			    "(it cannot probe that instruction, or the offset is not code)",
			    path, offset, why);
	else
		err_runtime(e, ret, "%s: cannot place a uprobe at offset 0x%" PRIx64 ": %s", path,
			    offset, why);
	return ret;
}

static int follow(struct trigger_bpf *b, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;

	return bpf_map_update_elem(bpf_map__fd(b->skel->maps.follow), &key, &one, BPF_ANY) ?
	       -errno : 0;
}

int trigger_bpf_attach(struct trigger_bpf *b, unsigned int idx, const char *path,
		       uint64_t offset, pid_t pid, uint64_t limit, struct error *e)
{
	struct trigger_bpf_state st = { .limit = limit, .follow = pid > 0 };
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = idx);
	__u32 key = idx;

	if (idx >= TRIGGER_BPF_MAX)
		return err_usage(e, "at most %d uprobe triggers", TRIGGER_BPF_MAX);
	if (pid > 0 && kill(pid, 0) && errno == ESRCH)
		return attach_error(e, -ESRCH, path, offset, pid);
	if (pid > 0 && follow(b, pid))
		return err_runtime(e, -errno, "uprobe triggers: BPF map: %s", strerror(errno));
	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.state), &key, &st, BPF_ANY))
		return err_runtime(e, -errno, "uprobe triggers: BPF map: %s", strerror(errno));
	quiet_libbpf();
	/* On every process, so that the followed children are covered: the map filters. */
	b->link[idx] = bpf_program__attach_uprobe_opts(b->skel->progs.trigger_fire, -1, path,
						       offset, &o);
	if (!b->link[idx])
		return attach_error(e, -errno, path, offset, pid);
	return 0;
}


bool trigger_bpf_follows(const struct trigger_bpf *b)
{
	return b->follows;
}

uint64_t trigger_bpf_unfollowed(const struct trigger_bpf *b)
{
	return b->skel->bss->unfollowed;
}

void trigger_bpf_detach(struct trigger_bpf *b, unsigned int idx)
{
	if (idx < TRIGGER_BPF_MAX && b->link[idx]) {
		bpf_link__destroy(b->link[idx]);
		b->link[idx] = NULL;
	}
}

int trigger_bpf_read(struct trigger_bpf *b, trigger_sink_fn sink, void *ctx)
{
	b->sink = sink;
	b->ctx = ctx;
	return ring_buffer__consume(b->rb);
}

uint64_t trigger_bpf_dropped(const struct trigger_bpf *b, unsigned int idx)
{
	struct trigger_bpf_state st;
	__u32 key = idx;

	if (bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.state), &key, &st))
		return 0;
	return st.dropped;
}

void trigger_bpf_close(struct trigger_bpf *b)
{
	if (!b)
		return;
	for (unsigned int i = 0; i < TRIGGER_BPF_MAX; i++)
		trigger_bpf_detach(b, i);
	ring_buffer__free(b->rb);
	trigbpf__destroy(b->skel);
	free(b);
}
