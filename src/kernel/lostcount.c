// SPDX-License-Identifier: MIT
/* The kernel's count of the records a full ring dropped (lostcount.h). */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lostcount.h"

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)	/* Linux 6.0 */
#endif

int lostcount_open(const struct perf_event_attr *attr, pid_t pid, int cpu, bool *counted)
{
	struct perf_event_attr a = *attr;
	int fd;

	a.read_format |= PERF_FORMAT_LOST;
	fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {
		a.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
		fd = (int)syscall(SYS_perf_event_open, &a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	*counted = a.read_format & PERF_FORMAT_LOST;
	return fd;
}

bool lostcount_sum(const int *fds, int n, uint64_t *sum)
{
	uint64_t s = 0;

	for (int i = 0; i < n; i++) {
		uint64_t v[2];	/* read_format PERF_FORMAT_LOST alone: { value, lost } */
		ssize_t r;

		do
			r = read(fds[i], v, sizeof(v));
		while (r < 0 && errno == EINTR);
		if (r != (ssize_t)sizeof(v))
			return false;
		s += v[1];
	}
	*sum = s;
	return true;
}
