// SPDX-License-Identifier: MIT
/*
 * The host kernel's count of the records a full data ring dropped
 * (PERF_FORMAT_LOST, Linux 6.0), through events_open() and
 * events_count_lost(): two inherited dummy events, one writing into the
 * other's one-page ring, children that fork many times while nothing drains.
 * The kernel writes a PERF_RECORD_LOST only at the next record that fits: with
 * none, only the count says what was dropped; with one after a drain, the LOST
 * record says exactly as much as the count.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "events.h"
#include "sideband.h"
#include "stream.h"

#define FORKS 200	/* each a FORK, an EXIT and switches: far more than a page */

struct kid {
	pid_t pid;
	int go, done, again;	/* our ends: write go, read done, write again */
};

static void wait_byte(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		_exit(1);
}

/*
 * On CPU 0, held until go; FORKS children; done; held until again (its end:
 * no more); one more child. @other: a kid started before, whose ends this
 * one must not hold, or that kid never sees its again pipe end.
 */
static void start_kid(struct kid *k, const struct kid *other)
{
	int go[2], done[2], again[2];
	cpu_set_t one;

	cr_assert_eq(pipe(go) | pipe(done) | pipe(again), 0);
	k->pid = fork();
	cr_assert_geq(k->pid, 0);
	if (k->pid == 0) {
		if (other) {
			close(other->go);
			close(other->done);
			close(other->again);
		}
		CPU_ZERO(&one);
		CPU_SET(0, &one);
		sched_setaffinity(0, sizeof(one), &one);
		close(go[1]);
		close(done[0]);
		close(again[1]);
		wait_byte(go[0]);
		for (int i = 0; i < FORKS; i++) {
			pid_t c = fork();

			if (c == 0)
				_exit(0);
			if (c > 0)
				waitpid(c, NULL, 0);
		}
		if (write(done[1], "d", 1) != 1)
			_exit(1);
		wait_byte(again[0]);
		if (fork() == 0)
			_exit(0);
		wait(NULL);
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	close(again[0]);
	k->go = go[1];
	k->done = done[0];
	k->again = again[1];
}

static void end_kid(struct kid *k)
{
	close(k->go);
	close(k->done);
	close(k->again);
	waitpid(k->pid, NULL, 0);
}

/* Linux 6.0 or later: PERF_FORMAT_LOST exists. */
static bool kernel_counts_lost(void)
{
	struct utsname u;
	unsigned int major, minor;

	return !uname(&u) && sscanf(u.release, "%u.%u", &major, &minor) == 2 && major >= 6;
}

struct fixture {
	struct stream st;
	struct kid kids[2];
	void *base;
	size_t len;
	int null_fd;
};

/* Two kids, an inherited dummy event each on CPU 0, the second writing into the first's ring. */
static void setup(struct fixture *f)
{
	struct events_config c = {
		.attr = {
			.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
			.size = sizeof(struct perf_event_attr), .sample_type = SIDEBAND_SAMPLE_TYPE,
			.sample_id_all = 1, .disabled = 1, .inherit = 1, .task = 1, .comm = 1,
			.context_switch = 1, .wakeup_events = 1,
		},
	};
	long pg = sysconf(_SC_PAGESIZE);
	struct error e = { 0 };
	int ret;

	stream_init(&f->st, 0, -1);
	for (int i = 0; i < 2; i++)
		start_kid(&f->kids[i], i ? &f->kids[0] : NULL);
	for (int i = 0; i < 2; i++) {
		ret = events_open(&c, &f->st, f->kids[i].pid, 0, &e);
		if (ret == -EACCES || ret == -EPERM) {
			for (int k = 0; k < 2; k++)
				end_kid(&f->kids[k]);
			cr_skip_test("perf_event_open of a dummy event: %s", e.why);
		}
		cr_assert_eq(ret, 0, "%s: %s", e.what, e.why);
	}
	/* One page of data ring, and no AUX area: a dummy event has none (events_map maps one). */
	f->len = (size_t)pg * 2;
	f->base = mmap(NULL, f->len, PROT_READ | PROT_WRITE, MAP_SHARED, f->st.ring_fd, 0);
	cr_assert_neq(f->base, MAP_FAILED, "%s", strerror(errno));
	auxring_attach(&f->st.ring, f->base, (uint64_t)pg, NULL, 0, false);
	cr_assert_eq(ioctl(f->st.fds[1], PERF_EVENT_IOC_SET_OUTPUT, f->st.ring_fd), 0, "%s",
		     strerror(errno));
	f->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	cr_assert_geq(f->null_fd, 0);
	events_enable(&f->st);
	/* Both kids fork while nothing drains the page. */
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(write(f->kids[i].go, "g", 1), 1);
		wait_byte(f->kids[i].done);
	}
}

static void teardown(struct fixture *f)
{
	munmap(f->base, f->len);
	f->st.mapped = false;
	events_close(&f->st);
	close(f->null_fd);
}

/* No record after the overflow: no LOST record, the count has it all. */
Test(lost_count, a_full_ring_with_no_record_after_is_counted_by_the_kernel_alone)
{
	struct fixture f;

	if (!kernel_counts_lost())
		cr_skip_test("PERF_FORMAT_LOST needs Linux 6.0");
	setup(&f);
	for (int i = 0; i < 2; i++) {
		close(f.kids[i].again);
		f.kids[i].again = -1;
		waitpid(f.kids[i].pid, NULL, 0);
	}
	events_disable(&f.st);
	cr_assert_eq(auxring_read_data(&f.st.ring, f.null_fd), 0);
	events_count_lost(&f.st);
	cr_assert(f.st.lost_counted, "every event was opened with the count (nr_uncounted %d)",
		  f.st.nr_uncounted);
	cr_log_info("dropped %llu, LOST records %llu", (unsigned long long)f.st.lost_kernel,
		    (unsigned long long)f.st.ring.stats.lost);
	cr_expect_eq(f.st.ring.stats.lost, 0, "no record came after the overflow: no LOST record");
	cr_expect_gt(f.st.lost_kernel, 0, "%d forks into one page: the kernel dropped records",
		     2 * FORKS);
	teardown(&f);
	for (int i = 0; i < 2; i++)
		end_kid(&f.kids[i]);
}

/* A record after a drain: the LOST record it brings says as much as the count. */
Test(lost_count, a_lost_record_after_a_drain_says_what_the_kernel_counted)
{
	struct fixture f;

	if (!kernel_counts_lost())
		cr_skip_test("PERF_FORMAT_LOST needs Linux 6.0");
	setup(&f);
	cr_assert_eq(auxring_read_data(&f.st.ring, f.null_fd), 0);
	cr_expect_eq(f.st.ring.stats.lost, 0);
	/* The ring is empty now: each kid's next fork fits, with the LOST record before it. */
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(write(f.kids[i].again, "a", 1), 1);
		waitpid(f.kids[i].pid, NULL, 0);
	}
	events_disable(&f.st);
	cr_assert_eq(auxring_read_data(&f.st.ring, f.null_fd), 0);
	events_count_lost(&f.st);
	cr_assert(f.st.lost_counted);
	cr_log_info("dropped %llu, LOST records %llu saying %llu", (unsigned long long)f.st.lost_kernel,
		    (unsigned long long)f.st.ring.stats.lost,
		    (unsigned long long)f.st.ring.stats.lost_events);
	cr_expect_geq(f.st.ring.stats.lost, 1, "a record after the drain brings a LOST record");
	cr_expect_gt(f.st.lost_kernel, 0);
	cr_expect_eq(f.st.lost_kernel, f.st.ring.stats.lost_events,
		     "the events count %llu dropped, the LOST records say %llu",
		     (unsigned long long)f.st.lost_kernel,
		     (unsigned long long)f.st.ring.stats.lost_events);
	teardown(&f);
	for (int i = 0; i < 2; i++)
		end_kid(&f.kids[i]);
}
