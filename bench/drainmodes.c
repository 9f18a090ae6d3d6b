// SPDX-License-Identifier: MIT
/*
 * drainmodes MODE SECONDS AUX_KIB: one poll loop over every CPU's ring, or
 * one thread per ring, on the real perf core (the kernel rig's simulated
 * intel_pt PMU). It opens one event per CPU, maps each ring with auxring,
 * drains with the session's auxring_pass() (DISABLE + ENABLE after a stop)
 * for SECONDS, and prints one line:
 *
 *   DRAIN MODE AUX_KIB BYTES TRUNCATED CPU_SECONDS WAKEUPS
 *
 * CPU is this process's user+system time; WAKEUPS the poll() returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "auxring.h"

#define MAX_CPUS 64

struct ring {
	int fd, trace_fd, sb_fd;
	struct auxring r;
	uint64_t wakeups;
};

static struct ring rings[MAX_CPUS];
static int nr_rings;
static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "drainmodes: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void check(int ret, const char *what)
{
	if (ret) {
		errno = -ret;
		die(what);
	}
}

/* After a stop: DISABLE then ENABLE, as the session (tests/kernel/README.md, finding 2). */
static void restart_ring(void *arg)
{
	struct ring *g = arg;

	ioctl(g->fd, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(g->fd, PERF_EVENT_IOC_ENABLE, 0);
}

static void drain(struct ring *g)
{
	check(auxring_pass(&g->r, g->trace_fd, g->sb_fd, false, restart_ring, g), "writing");
}

static void *one_ring(void *arg)
{
	struct ring *g = arg;
	struct pollfd pf = { .fd = g->fd, .events = POLLIN };

	while (!stop) {
		if (poll(&pf, 1, 100) > 0)
			g->wakeups++;
		drain(g);
	}
	return NULL;
}

static void poll_loop(void)
{
	struct pollfd pf[MAX_CPUS];

	for (int i = 0; i < nr_rings; i++)
		pf[i] = (struct pollfd){ .fd = rings[i].fd, .events = POLLIN };
	while (!stop) {
		if (poll(pf, nr_rings, 100) > 0)
			rings[0].wakeups++;
		for (int i = 0; i < nr_rings; i++)
			drain(&rings[i]);
	}
}

static void open_ring(struct ring *g, int type, int cpu, uint64_t aux)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = (uint32_t)type, .config = 1,	/* pt */
		.disabled = 1, .exclude_kernel = 1, .exclude_hv = 1,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME, .sample_id_all = 1,
		.aux_watermark = auxring_watermark(aux),
	};
	char path[64];

	g->fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (g->fd < 0)
		die("perf_event_open");
	check(auxring_mmap(&g->r, g->fd, 64 << 10, aux, false), "mmap");
	snprintf(path, sizeof(path), "/tmp/drain-cpu%d.pt", cpu);
	g->trace_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	snprintf(path, sizeof(path), "/tmp/drain-cpu%d.pevent", cpu);
	g->sb_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (g->trace_fd < 0 || g->sb_fd < 0)
		die(path);
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_CPUS];
	struct rusage ru;
	uint64_t bytes = 0, trunc = 0, wakeups = 0;
	bool threads;
	double secs;
	FILE *f;
	int type;

	if (argc != 4 || (strcmp(argv[1], "poll") && strcmp(argv[1], "threads"))) {
		fprintf(stderr, "usage: drainmodes poll|threads SECONDS AUX_KIB\n");
		return 2;
	}
	threads = !strcmp(argv[1], "threads");
	secs = atof(argv[2]);
	f = fopen("/sys/bus/event_source/devices/intel_pt/type", "r");
	if (!f || fscanf(f, "%d", &type) != 1)
		die("intel_pt/type");
	fclose(f);
	nr_rings = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (nr_rings > MAX_CPUS)
		nr_rings = MAX_CPUS;
	for (int i = 0; i < nr_rings; i++)
		open_ring(&rings[i], type, i, strtoull(argv[3], NULL, 0) << 10);
	for (int i = 0; i < nr_rings; i++)
		ioctl(rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &(struct itimerval){ .it_value = {
		.tv_sec = (time_t)secs, .tv_usec = (suseconds_t)((secs - (time_t)secs) * 1e6) } },
		  NULL);
	if (threads) {
		for (int i = 0; i < nr_rings; i++)
			if (pthread_create(&th[i], NULL, one_ring, &rings[i]))
				die("pthread_create");
		for (int i = 0; i < nr_rings; i++)
			pthread_join(th[i], NULL);
	} else {
		poll_loop();
	}
	for (int i = 0; i < nr_rings; i++) {
		ioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		check(auxring_pass(&rings[i].r, rings[i].trace_fd, rings[i].sb_fd, true, NULL, NULL),
		      "writing");
		bytes += rings[i].r.stats.aux_bytes;
		trunc += rings[i].r.stats.truncated;
		wakeups += rings[i].wakeups;
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("DRAIN %s %s %llu %llu %.3f %llu\n", argv[1], argv[3], (unsigned long long)bytes,
	       (unsigned long long)trunc,
	       ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
	       (unsigned long long)wakeups);
	return 0;
}
