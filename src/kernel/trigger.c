// SPDX-License-Identifier: MIT
/*
 * The trigger set: uprobe and breakpoint triggers behind one epoll
 * descriptor, their fires merged in time order across calls
 * (trigger_order.c), each trigger's limit applied in that order and the
 * trigger disarmed when it is reached.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "monotime.h"
#include "trigger.h"
#include "trigger_backend.h"
#include "trigger_order.h"

struct trig {
	enum trigger_kind kind;
	char *text, *path;
	uint64_t offset, limit;
	bool armed;
	struct trigger_bp *bp;
};

struct trigger_set {
	int epfd;
	bool arming_done;	/* trigger_arm() was called: the set is closed */
	unsigned int nr;
	struct trig t[TRIGGER_MAX];
	struct trigger_bpf *bpf;
	struct trigger_order order;	/* fires read, held or released, not yet returned */
	int timer_fd;			/* in epfd: readable when held fires are ripe */
	uint64_t timer_at;		/* its absolute expiry, 0: off */
};

int trigger_set_new(struct trigger_set **out, struct error *e)
{
	struct trigger_set *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return err_runtime(e, -ENOMEM, "out of memory");
	ts->timer_fd = -1;
	ts->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ts->epfd < 0) {
		int ret = -errno;

		free(ts);
		return err_runtime(e, ret, "epoll: %s", strerror(-ret));
	}
	ts->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (ts->timer_fd < 0 ||
	    epoll_ctl(ts->epfd, EPOLL_CTL_ADD, ts->timer_fd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.fd = ts->timer_fd })) {
		int ret = -errno;

		trigger_set_free(ts);
		return err_runtime(e, ret, "trigger timer: %s", strerror(-ret));
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
	trigger_order_set_limit(&ts->order, ts->nr, limit);
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

/* Read every backend into the order's held fires. */
static int read_backends(struct trigger_set *ts)
{
	struct epoll_event ev[16];
	int ret;

	/* Only to empty epoll's ready list; every ring is read below anyway. */
	while (epoll_wait(ts->epfd, ev, 16, 0) == 16)
		;
	if (ts->bpf) {
		ret = trigger_bpf_read(ts->bpf, trigger_order_sink, &ts->order);
		if (ret < 0)
			return ret;
	}
	for (unsigned int i = 0; i < ts->nr; i++)
		if (ts->t[i].bp)
			trigger_bp_read(ts->t[i].bp, trigger_order_sink, &ts->order);
	return 0;
}

static void reached(void *ctx, unsigned int idx)
{
	disarm(ctx, idx);
}

/*
 * The timer makes trigger_fd() readable at @at (CLOCK_MONOTONIC; 0: never):
 * a poller must not sleep on fires the set holds. Setting it clears an
 * expiry not yet read.
 */
static void set_timer(struct trigger_set *ts, uint64_t at)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(at / 1000000000u),
			      .tv_nsec = (long)(at % 1000000000u) },
	};

	if (!at && !ts->timer_at)
		return;
	/* An absolute time already past expires at once, which is what a late wake needs. */
	if (!timerfd_settime(ts->timer_fd, TFD_TIMER_ABSTIME, &its, NULL))
		ts->timer_at = at;
}

/*
 * The hold, TRIGGER_HOLD_NS (trigger.h), is how much older than its write a
 * fire can be: the watermark is the time taken before reading the rings minus
 * this. A fire written after we read its ring was written after the
 * watermark's time, and carries a time taken before its write: at most this
 * much before, so it is younger than the watermark minus this and was held,
 * not passed.
 *
 * Breakpoints: perf takes the sample's time (the event's clock) as it
 * prepares the sample in the debug exception, then writes the record and
 * moves the ring's head in the same handler, interrupts off: microseconds.
 * Uprobes: the program takes bpf_ktime_get_ns() first, then reserves and
 * submits its record: some hundred instructions. On recent kernels the
 * program runs with migration off but preemptible, and a vCPU can be
 * descheduled by its host anywhere: those stalls have no bound a hold could
 * afford, so a fire they delay past this margin is still returned, at once,
 * and counted late (trigger_stats). Measured here (2-vCPU VM, load 5, a busy
 * loop beside, 8 runs of trigger/ *): of the fires read in a call, those
 * older than the previous call's start were at most 52 ns older. 200 us is
 * that many times over, and what a fire's hold adds to its latency at most
 * (plus the timer's slack and a second wake).
 */
static int poll_fires(struct trigger_set *ts, struct trigger_fire *out, size_t max, bool flush,
		      struct error *e)
{
	/* Taken before any ring is read: what comes after was written after it. */
	uint64_t now = monotime_ns(), before;
	size_t n;
	int ret;

	before = flush ? TRIGGER_ORDER_ALL : now > TRIGGER_HOLD_NS ? now - TRIGGER_HOLD_NS : 0;
	ret = read_backends(ts);
	trigger_order_release(&ts->order, before, reached, ts);
	ret = ret ? ret : trigger_order_error(&ts->order);
	n = ret ? 0 : trigger_order_take(&ts->order, out, max);
	set_timer(ts, trigger_order_wake(&ts->order, TRIGGER_HOLD_NS));
	if (ret)
		return err_runtime(e, ret, "reading trigger fires: %s", strerror(-ret));
	return (int)n;
}

int trigger_poll_fires(struct trigger_set *ts, struct trigger_fire *out, size_t max,
		       struct error *e)
{
	return poll_fires(ts, out, max, false, e);
}

int trigger_flush_fires(struct trigger_set *ts, struct trigger_fire *out, size_t max,
			struct error *e)
{
	return poll_fires(ts, out, max, true, e);
}

size_t trigger_pending(const struct trigger_set *ts)
{
	return trigger_order_pending(&ts->order);
}

void trigger_get_stats(const struct trigger_set *ts, unsigned int idx, struct trigger_stats *st)
{
	const struct trig *t;

	memset(st, 0, sizeof(*st));
	if (idx >= ts->nr)
		return;
	t = &ts->t[idx];
	st->fires = ts->order.fires[idx];
	st->late = ts->order.late[idx];
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
	trigger_order_free(&ts->order);
	if (ts->timer_fd >= 0)
		close(ts->timer_fd);
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
