// SPDX-License-Identifier: MIT
/*
 * The freeze threads on this machine's kernel, with a cpu-clock event per
 * CPU standing in for each CPU's trace: when the triggers' descriptor (here
 * an eventfd) becomes readable, every CPU's event is stopped without the
 * loop doing anything; a release starts them again, or leaves them stopped
 * when tracing is off; round after round, with the release at any moment of
 * the threads' work, nothing is left stopped. (A freeze that lands after its
 * release, which the threads take back themselves, is too rare to provoke
 * here: the threads wake within microseconds of the fire.)
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpuset.h"
#include "freeze.h"
#include "stream.h"
#include "suitewatch.h"

SUITEWATCH(watchdog, 60)

TestSuite(freeze, .init = watchdog);

struct rig {
	struct stream st[8];
	int n;
	int fd;			/* the "triggers" */
};

static void rig_open(struct rig *r)
{
	int cpus[64], nr;
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(a), .config = PERF_COUNT_SW_CPU_CLOCK,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED,
	};

	cr_assert_eq(cpuset_online(cpus, &nr, NULL), 0);
	memset(r, 0, sizeof(*r));
	for (int i = 0; i < nr && i < 8; i++) {
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpus[i], -1,
				      PERF_FLAG_FD_CLOEXEC);

		if (fd < 0)
			cr_skip_test("a CPU-wide cpu-clock event: %s", strerror(errno));
		stream_init(&r->st[i], cpus[i], -1);
		r->st[i].fds = malloc(sizeof(int));
		r->st[i].fds[0] = fd;
		r->st[i].nr_fds = 1;
		r->st[i].ring_fd = fd;
		r->n++;
	}
	r->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	cr_assert_geq(r->fd, 0);
}

static void rig_close(struct rig *r)
{
	for (int i = 0; i < r->n; i++) {
		close(r->st[i].fds[0]);
		free(r->st[i].fds);
	}
	close(r->fd);
}

static uint64_t enabled_ns(const struct stream *st)
{
	uint64_t v[2];

	cr_assert_eq(read(st->fds[0], v, sizeof(v)), (ssize_t)sizeof(v));
	return v[1];
}

/* Whether each CPU's event counts time now: its enabled time grows over @us. */
static int running_for(struct rig *r, bool *on, useconds_t us)
{
	uint64_t before[8];
	int n = 0;

	for (int i = 0; i < r->n; i++)
		before[i] = enabled_ns(&r->st[i]);
	usleep(us);
	for (int i = 0; i < r->n; i++) {
		on[i] = enabled_ns(&r->st[i]) > before[i];
		n += on[i];
	}
	return n;
}

static int running(struct rig *r, bool *on)
{
	return running_for(r, on, 20000);
}

static void fire(struct rig *r)
{
	uint64_t one = 1;

	cr_assert_eq(write(r->fd, &one, sizeof(one)), (ssize_t)sizeof(one));
}

/* What the loop does with the fires: reads them, so the descriptor is quiet again. */
static void consume(struct rig *r)
{
	uint64_t v;

	cr_assert_eq(read(r->fd, &v, sizeof(v)), (ssize_t)sizeof(v));
}

/* Polls until every CPU's event is stopped, for at most 20 s: how many still run. */
static int wait_stopped(struct rig *r)
{
	bool on[8];
	int n = r->n;

	for (int k = 0; k < 1000 && n; k++)
		n = running(r, on);
	return n;
}

/* Polls until every CPU's event runs, for at most 10 s: how many run. */
static int wait_running(struct rig *r)
{
	bool on[8];
	int n = 0;

	for (int k = 0; k < 2000 && n != r->n; k++)
		n = running_for(r, on, 5000);
	return n;
}

/* The events counting, and the freeze threads started and waiting. */
static struct freezer *start(struct rig *r)
{
	struct freezer *fz;
	struct error e = { 0 };
	bool on[8];

	rig_open(r);
	for (int i = 0; i < r->n; i++)
		ioctl(r->st[i].fds[0], PERF_EVENT_IOC_ENABLE, 0);
	cr_assert_eq(running(r, on), r->n, "the events count before any fire");
	cr_assert_eq(freeze_start(&fz, r->st, r->n, r->fd, &e), 0, "%s", e.why);
	/* The threads need not be waiting yet: a fire stays on the descriptor until consumed. */
	return fz;
}

Test(freeze, a_fire_stops_every_cpu_and_a_release_starts_them)
{
	struct rig r;
	struct freezer *fz = start(&r);
	bool on[8];

	cr_expect_eq(running(&r, on), r.n, "no fire, no freeze");
	fire(&r);
	cr_expect_eq(wait_stopped(&r), 0, "a fire stops every CPU's event");
	consume(&r);
	freeze_release(fz, true);
	cr_expect_eq(running(&r, on), r.n, "a release starts them again");
	/* With tracing off, a release leaves them stopped. */
	fire(&r);
	cr_expect_eq(wait_stopped(&r), 0);
	consume(&r);
	freeze_release(fz, false);
	cr_expect_eq(running(&r, on), 0, "tracing is off: they stay stopped");
	freeze_stop(fz);
	rig_close(&r);
}

Test(freeze, every_round_of_fires_is_released_with_nothing_left_stopped)
{
	struct rig r;
	struct freezer *fz = start(&r);

	/*
	 * Rounds of fire, act, release, the release at every moment of a
	 * thread's wakeup (0 to 200 us after the fire): after each, once the
	 * threads are done (polled, up to 10 s), none is left stopped.
	 */
	for (int k = 0; k < 160; k++) {
		int n;

		fire(&r);
		if (k % 40)
			usleep((useconds_t)(k % 40) * 5);
		consume(&r);
		freeze_release(fz, true);
		n = wait_running(&r);
		cr_expect_eq(n, r.n, "round %d: %d of %d running after the release", k, n, r.n);
		if (n != r.n)
			break;
	}
	freeze_stop(fz);
	rig_close(&r);
}
