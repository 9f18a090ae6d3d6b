// SPDX-License-Identifier: MIT
/*
 * A multi-threaded target that keeps starting threads: spawner NTHREADS
 * INTERVAL_MS SECONDS starts a thread every INTERVAL_MS until it has
 * NTHREADS, each spinning until SECONDS have passed since start; prints
 * "tid N" for each thread (its own pid first) so a test can compare.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double deadline;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *spin(void *arg)
{
	volatile unsigned long n = 0;

	(void)arg;
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	while (now() < deadline)
		for (int i = 0; i < 100000; i++)
			n++;
	return NULL;
}

int main(int argc, char **argv)
{
	int nr = argc > 1 ? atoi(argv[1]) : 4;
	int interval_ms = argc > 2 ? atoi(argv[2]) : 100;
	double secs = argc > 3 ? atof(argv[3]) : 2;
	pthread_t th[256];

	if (nr < 0 || nr > 256)
		return 2;
	deadline = now() + secs;
	printf("tid %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < nr; i++) {
		usleep(interval_ms * 1000);
		if (pthread_create(&th[i], NULL, spin, NULL))
			return 1;
	}
	spin(NULL);
	for (int i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	return 0;
}
