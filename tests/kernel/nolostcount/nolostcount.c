// SPDX-License-Identifier: MIT
/*
 * nolostcount.so, an LD_PRELOAD interposer for the fault tests: perf_event_open()
 * refuses PERF_FORMAT_LOST with EINVAL, as kernels before 6.0 do, so that the
 * fallback (the events opened without the kernel's count of dropped records) runs
 * on the rig's newer kernel. Every other syscall() is the real one. When
 * NOLOSTCOUNT_LOG names a file, the counts go there at exit: "refused N opened N".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

static unsigned long refused, opened;

/* syscall(2) takes at most six arguments; those not passed are not used. */
long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_perf_event_open) {
		const struct perf_event_attr *attr = (const struct perf_event_attr *)a[0];

		if (attr && (attr->read_format & PERF_FORMAT_LOST)) {
			__atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
			errno = EINVAL;
			return -1;
		}
		__atomic_fetch_add(&opened, 1, __ATOMIC_RELAXED);
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

__attribute__((destructor)) static void report(void)
{
	const char *log = getenv("NOLOSTCOUNT_LOG");
	FILE *f;

	if (!log || !(f = fopen(log, "w")))
		return;
	fprintf(f, "refused %lu opened %lu\n", refused, opened);
	fclose(f);
}
