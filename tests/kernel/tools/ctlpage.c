// SPDX-License-Identifier: MIT
/*
 * ctlpage: the time conversion of a perf control page, read independently of ptcollect.
 * ctlpage TSC...: also each TSC as perf time (ns), by the control page's formula.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* perf_event.h: the perf time of a TSC value when cap_user_time_zero is set */
static unsigned long long tsc_to_time(const struct perf_event_mmap_page *pc, unsigned long long tsc)
{
	unsigned long long quot = tsc >> pc->time_shift;
	unsigned long long rem = tsc & ((1ULL << pc->time_shift) - 1);

	return pc->time_zero + quot * pc->time_mult + ((rem * pc->time_mult) >> pc->time_shift);
}

int main(int argc, char **argv)
{
	struct perf_event_attr a;
	struct perf_event_mmap_page *pc;
	long pg = sysconf(_SC_PAGESIZE);
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("perf_event_open");
		return 1;
	}
	pc = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pc == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	printf("%s %llu %u %u\n", pc->cap_user_time_zero ? "true" : "false",
	       (unsigned long long)pc->time_zero, pc->time_mult, (unsigned)pc->time_shift);
	for (int i = 1; i < argc; i++)
		printf("%llu\n", tsc_to_time(pc, strtoull(argv[i], NULL, 0)));
	return 0;
}
