// SPDX-License-Identifier: MIT
/* perf_event_open for a recording's streams, and what the kernel's refusals mean. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "events.h"
#include "lostcount.h"
#include "privs.h"

static int open_error(const struct events_config *c, int err, pid_t pid, int cpu, struct error *e)
{
	struct privs pv;

	if (cpu >= 0 && pid >= 0)
		err_what(e, "perf_event_open for thread %d on CPU %d", pid, cpu);
	else if (cpu >= 0)
		err_what(e, "perf_event_open for CPU %d", cpu);
	else
		err_what(e, "perf_event_open for thread %d", pid);
	privs_read(&pv);
	switch (err) {
	case EACCES:
	case EPERM:
		err_hint(e, "perf_event_paranoid is %d: run as root, give the binary CAP_PERFMON "
			 "(setcap cap_perfmon+ep), or lower it with 'sysctl "
			 "kernel.perf_event_paranoid=%d'", pv.paranoid,
			 c->cpu_wide ? 0 : 1);
		return err_runtime(e, -err, "permission denied");
	case EBUSY:
		err_hint(e, "another tool is using Intel PT (a perf record, another ptcollect?); "
			 "stop it and try again");
		return err_runtime(e, -err, "Intel PT is busy");
	case ESRCH:
		return err_runtime(e, -err, "the thread does not exist any more");
	case ENOENT:
	case ENODEV:
		err_hint(e, "'ptcollect caps' says whether Intel PT is usable here");
		return err_runtime(e, -err, "the kernel has no PMU of type %d", c->pmu_type);
	case EINVAL:
		err_hint(e, "the kernel refused config=0x%" PRIx64 "; 'ptcollect caps' lists what "
			 "this PMU supports", (uint64_t)c->attr.config);
		return err_runtime(e, -err, "invalid argument");
	default:
		return err_runtime(e, -err, "%s", strerror(err));
	}
}

static int set_filter(const struct events_config *c, int fd, struct error *e)
{
	int ret;

	if (!c->filter || !ioctl(fd, PERF_EVENT_IOC_SET_FILTER, c->filter))
		return 0;
	ret = -errno;
	err_hint(e, "the intel_pt driver refuses 'start' filters, zero-size ranges and more "
		 "ranges than the PMU has (%d)", c->nr_addr_filters);
	err_runtime(e, ret, "the kernel refused the address filter '%s': %s", c->filter,
		    strerror(-ret));
	/* The driver's own refusals are about the filter the user wrote. */
	e->usage = ret == -EOPNOTSUPP || ret == -EINVAL;
	return ret;
}

int events_open(const struct events_config *c, struct stream *st, pid_t pid, int cpu,
		struct error *e)
{
	bool counted;
	int *n;
	/*
	 * Counting the records the ring had no room for (lostcount.h): without the
	 * count (a kernel before 6.0) the stream's lost count is only the LOST
	 * records.
	 */
	int fd = lostcount_open(&c->attr, pid, cpu, &counted);

	if (fd >= 0 && !counted)
		st->nr_uncounted++;
	if (fd < 0)
		return open_error(c, errno, pid, cpu, e);
	n = realloc(st->fds, ((size_t)st->nr_fds + 1) * sizeof(*n));
	if (!n) {
		close(fd);
		return err_runtime(e, -ENOMEM, "out of memory");
	}
	st->fds = n;
	st->fds[st->nr_fds++] = fd;
	if (st->ring_fd < 0)
		st->ring_fd = fd;
	return set_filter(c, fd, e);
}

int events_map(const struct events_config *c, struct stream *st, struct error *e)
{
	/* Snapshot mode: a read-only AUX area, which the kernel overwrites. */
	int ret = auxring_mmap(&st->ring, st->ring_fd, c->data_bytes, c->aux_bytes,
			       c->overwrite);

	if (ret == -EPERM || ret == -ENOMEM) {
		err_hint(e, "the plan counted %" PRIu64 " KiB for %d ring(s) against a budget of "
			 "%" PRIu64 " KiB; locked memory of other perf users counts too: use "
			 "smaller rings (-m), or raise 'sysctl kernel.perf_event_mlock_kb'",
			 c->mlock_need >> 10, c->nr_streams, c->mlock_budget >> 10);
		return err_runtime(e, ret, "cannot map the ring buffers: the locked memory limit "
				   "is reached");
	}
	if (ret)
		return err_runtime(e, ret, "cannot map the ring buffers: %s", strerror(-ret));
	st->mapped = true;
	/* The other threads' events on this CPU write into the mapped ring. */
	for (int j = 0; j < st->nr_fds; j++)
		if (st->fds[j] != st->ring_fd &&
		    ioctl(st->fds[j], PERF_EVENT_IOC_SET_OUTPUT, st->ring_fd))
			return err_runtime(e, -errno, "cannot redirect a thread's event into the ring "
					   "of %s: %s", st->trace, strerror(errno));
	return 0;
}

static void events_ioctl(const struct stream *st, unsigned long req)
{
	for (int j = 0; j < st->nr_fds; j++)
		ioctl(st->fds[j], req, 0);
}

void events_enable(const struct stream *st)
{
	events_ioctl(st, PERF_EVENT_IOC_ENABLE);
}

void events_disable(const struct stream *st)
{
	events_ioctl(st, PERF_EVENT_IOC_DISABLE);
}

/*
 * The core disables the event after TRUNCATED, except on some kernels when
 * the buffer filled on CPU 0: a bare ENABLE then does nothing, DISABLE
 * followed by ENABLE resumes in both cases (tests/kernel/README.md, finding 2).
 */
void events_restart(void *stream)
{
	events_ioctl(stream, PERF_EVENT_IOC_DISABLE);
	events_ioctl(stream, PERF_EVENT_IOC_ENABLE);
}

void events_count_lost(struct stream *st)
{
	st->lost_counted = !st->nr_uncounted && st->nr_fds &&
			   lostcount_sum(st->fds, st->nr_fds, &st->lost_kernel);
}

void events_close(struct stream *st)
{
	if (st->mapped)
		auxring_unmap(&st->ring);
	st->mapped = false;
	for (int j = 0; j < st->nr_fds; j++)
		close(st->fds[j]);
	free(st->fds);
	st->fds = NULL;
	st->nr_fds = 0;
	st->nr_uncounted = 0;
	st->ring_fd = -1;
}
