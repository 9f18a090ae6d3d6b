// SPDX-License-Identifier: MIT
/*
 * The trigger set: uprobe and breakpoint triggers behind one epoll
 * descriptor, their fires merged in time order, each trigger's limit applied
 * in that order and the trigger disarmed when it is reached.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "monotime.h"
#include "trigger.h"
#include "trigger_backend.h"

struct trig {
	enum trigger_kind kind;
	char *text, *path;
	uint64_t offset, limit, fires;
	bool armed;
	struct trigger_bp *bp;
};

struct fire_buf {
	struct trigger_fire *f;
	size_t nr, cap;
	int err;
};

struct trigger_set {
	int epfd;
	bool arming_done;	/* trigger_arm() was called: the set is closed */
	unsigned int nr;
	struct trig t[TRIGGER_MAX];
	struct trigger_bpf *bpf;
	struct fire_buf fresh, ready;	/* read this call; sorted and waiting for the caller */
};

int trigger_set_new(struct trigger_set **out, struct error *e)
{
	struct trigger_set *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return err_runtime(e, -ENOMEM, "out of memory");
	ts->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ts->epfd < 0) {
		int ret = -errno;

		free(ts);
		return err_runtime(e, ret, "epoll: %s", strerror(-ret));
	}
	*out = ts;
	return 0;
}

int trigger_add(struct trigger_set *ts, const struct trigger_spec *s, uint64_t limit,
		struct error *e)
{
	struct trig *t = &ts->t[ts->nr];

	if (!s->resolved)
		return err_usage(e, "'%s': not resolved (trigger_spec_resolve() first)", s->text);
	if (ts->arming_done)
		return err_usage(e, "'%s': triggers are added before arming", s->text);
	if (ts->nr == TRIGGER_MAX)
		return err_usage(e, "'%s': at most %d triggers", s->text, TRIGGER_MAX);
	t->text = strdup(s->text);
	t->path = strdup(s->path);
	if (!t->text || !t->path) {
		free(t->text);
		free(t->path);
		return err_runtime(e, -ENOMEM, "out of memory");
	}
	t->kind = s->kind;
	t->offset = s->offset;
	t->limit = limit;
	return (int)ts->nr++;
}

static void disarm(struct trigger_set *ts, unsigned int i)
{
	struct trig *t = &ts->t[i];

	if (!t->armed)
		return;
	if (t->kind == TRIGGER_UPROBE)
		trigger_bpf_detach(ts->bpf, i);
	else
		trigger_bp_disable(t->bp);
	t->armed = false;
}

static void release_all(struct trigger_set *ts)
{
	for (unsigned int i = 0; i < ts->nr; i++) {
		ts->t[i].armed = false;
		trigger_bp_close(ts->t[i].bp);
		ts->t[i].bp = NULL;
	}
	trigger_bpf_close(ts->bpf);
	ts->bpf = NULL;
}

static int arm_one(struct trigger_set *ts, unsigned int i, pid_t pid, struct error *e)
{
	struct trig *t = &ts->t[i];
	int ret;

	if (t->kind == TRIGGER_BREAKPOINT)
		return trigger_bp_open(&t->bp, i, t->path, t->offset, pid, ts->epfd, e);
	if (!ts->bpf) {
		ret = trigger_bpf_open(&ts->bpf, ts->epfd, e);
		if (ret)
			return ret;
	}
	return trigger_bpf_attach(ts->bpf, i, t->path, t->offset, pid, t->limit, e);
}

int trigger_arm(struct trigger_set *ts, pid_t pid, struct error *e)
{
	unsigned int i;
	int ret = 0;

	if (pid == 0 || pid < -1)
		return err_usage(e, "triggers: process %d: give a process id, or -1 for uprobes "
				 "on every process", (int)pid);
	if (ts->arming_done)
		return err_usage(e, "triggers: armed once already");
	ts->arming_done = true;
	for (i = 0; i < ts->nr && !ret; i++) {
		ret = arm_one(ts, i, pid, e);
		if (ret)
			err_what(e, "--trigger '%s'", ts->t[i].text);
		else if (ts->t[i].kind == TRIGGER_UPROBE)
			ts->t[i].armed = true;
	}
	/* Breakpoints start together once every trigger could be placed. */
	for (i = 0; i < ts->nr && !ret; i++) {
		if (!ts->t[i].bp)
			continue;
		ret = trigger_bp_enable(ts->t[i].bp, e);
		ts->t[i].armed = !ret;
	}
	if (ret)
		release_all(ts);
	return ret;
}

int trigger_fd(const struct trigger_set *ts)
{
	return ts->epfd;
}

static void sink(void *ctx, const struct trigger_fire *f)
{
	struct fire_buf *b = ctx;

	if (b->nr == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		struct trigger_fire *n = realloc(b->f, cap * sizeof(*n));

		if (!n) {
			b->err = -ENOMEM;
			return;
		}
		b->f = n;
		b->cap = cap;
	}
	b->f[b->nr++] = *f;
}

static int by_time(const void *a, const void *b)
{
	const struct trigger_fire *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Read every backend into ts->fresh. */
static int read_backends(struct trigger_set *ts)
{
	struct epoll_event ev[16];
	int ret;

	/* Only to empty epoll's ready list; every ring is read below anyway. */
	while (epoll_wait(ts->epfd, ev, 16, 0) == 16)
		;
	if (ts->bpf) {
		ret = trigger_bpf_read(ts->bpf, sink, &ts->fresh);
		if (ret < 0)
			return ret;
	}
	for (unsigned int i = 0; i < ts->nr; i++)
		if (ts->t[i].bp)
			trigger_bp_read(ts->t[i].bp, sink, &ts->fresh);
	return ts->fresh.err;
}

/* Move the fresh fires under their trigger's limit to ready, in time order. */
static void apply_limits(struct trigger_set *ts)
{
	struct fire_buf *f = &ts->fresh, *r = &ts->ready;

	if (f->nr)	/* f->f is NULL before the first fire */
		qsort(f->f, f->nr, sizeof(*f->f), by_time);
	for (size_t i = 0; i < f->nr; i++) {
		struct trig *t = &ts->t[f->f[i].idx < ts->nr ? f->f[i].idx : 0];

		if (f->f[i].idx >= ts->nr || (t->limit && t->fires >= t->limit))
			continue;
		t->fires++;
		sink(r, &f->f[i]);
		if (t->limit && t->fires == t->limit)
			disarm(ts, f->f[i].idx);
	}
	f->nr = 0;
	if (r->nr > 1)
		qsort(r->f, r->nr, sizeof(*r->f), by_time);
}

int trigger_poll_fires(struct trigger_set *ts, struct trigger_fire *out, size_t max,
		       struct error *e)
{
	size_t n;
	int ret = read_backends(ts);

	apply_limits(ts);
	if (ret || ts->ready.err) {
		ret = ret ? ret : ts->ready.err;
		ts->fresh.err = ts->ready.err = 0;
		return err_runtime(e, ret, "reading trigger fires: %s", strerror(-ret));
	}
	n = ts->ready.nr < max ? ts->ready.nr : max;
	if (!n)		/* ready.f is NULL before the first fire */
		return 0;
	memcpy(out, ts->ready.f, n * sizeof(*out));
	memmove(ts->ready.f, ts->ready.f + n, (ts->ready.nr - n) * sizeof(*out));
	ts->ready.nr -= n;
	return (int)n;
}

void trigger_get_stats(const struct trigger_set *ts, unsigned int idx, struct trigger_stats *st)
{
	const struct trig *t;

	memset(st, 0, sizeof(*st));
	if (idx >= ts->nr)
		return;
	t = &ts->t[idx];
	st->fires = t->fires;
	st->limit = t->limit;
	st->armed = t->armed;
	if (t->kind == TRIGGER_UPROBE && ts->bpf) {
		st->dropped = trigger_bpf_dropped(ts->bpf, idx);
		st->dropped_counted = true;	/* the program counts each fire it could not put */
	}
	if (t->bp) {
		st->dropped = trigger_bp_dropped(t->bp, &st->dropped_counted);
		st->throttled = trigger_bp_throttled(t->bp);
	}
}

int trigger_children(const struct trigger_set *ts, uint64_t *unfollowed)
{
	*unfollowed = 0;
	if (!ts->bpf)
		return 1;
	*unfollowed = trigger_bpf_unfollowed(ts->bpf);
	return trigger_bpf_follows(ts->bpf);
}

unsigned int trigger_count(const struct trigger_set *ts)
{
	return ts->nr;
}

void trigger_disarm_all(struct trigger_set *ts)
{
	for (unsigned int i = 0; i < ts->nr; i++)
		disarm(ts, i);
}

void trigger_set_free(struct trigger_set *ts)
{
	if (!ts)
		return;
	release_all(ts);
	for (unsigned int i = 0; i < ts->nr; i++) {
		free(ts->t[i].text);
		free(ts->t[i].path);
	}
	free(ts->fresh.f);
	free(ts->ready.f);
	close(ts->epfd);
	free(ts);
}

/* ---- perf's clock against CLOCK_MONOTONIC ------------------------------------ */

/* The time of the last COMM record in the ring, or 0. */
static uint64_t last_comm_time(const struct perf_event_mmap_page *pc)
{
	const uint8_t *data = (const uint8_t *)pc + pc->data_offset;
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE), pos = 0, t = 0;

	/* A handful of small records: the ring never wraps here. */
	while (pos + sizeof(struct perf_event_header) <= head && head <= pc->data_size) {
		const struct perf_event_header *h = (const void *)(data + pos);

		if (h->size < sizeof(*h) + 8 || pos + h->size > head)
			break;
		if (h->type == PERF_RECORD_COMM)
			memcpy(&t, data + pos + h->size - 8, 8);	/* sample_id: TIME */
		pos += h->size;
	}
	return t;
}

int trigger_perf_clock_offset(int64_t *offset_ns, uint64_t *err_ns, struct error *e)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(a), .config = PERF_COUNT_SW_DUMMY,
		.comm = 1, .sample_id_all = 1, .sample_type = PERF_SAMPLE_TIME,
		.exclude_kernel = 1, .exclude_hv = 1,
	};
	size_t len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	uint64_t best = UINT64_MAX;
	struct perf_event_mmap_page *pc;
	char name[17] = "";
	int fd, ret = 0;

	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return err_runtime(e, -errno, "perf clock: dummy event: %s", strerror(errno));
	pc = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pc == MAP_FAILED) {
		ret = err_runtime(e, -errno, "perf clock: mmap: %s", strerror(errno));
		close(fd);
		return ret;
	}
	prctl(PR_GET_NAME, name);
	/* Setting the thread's own name again makes a COMM record, timed in the kernel. */
	for (int i = 0; i < 8; i++) {
		uint64_t t0 = monotime_ns(), t1, tp;

		prctl(PR_SET_NAME, name);
		t1 = monotime_ns();
		tp = last_comm_time(pc);
		if (tp && t1 - t0 < best) {
			best = t1 - t0;
			*offset_ns = (int64_t)(tp - (t0 + best / 2));
			*err_ns = best / 2 + 1;
		}
	}
	munmap(pc, len);
	close(fd);
	if (best == UINT64_MAX)
		return err_runtime(e, -ENODATA, "perf clock: no COMM record came back");
	return 0;
}
