// SPDX-License-Identifier: MIT
/*
 * A multi-threaded target that keeps starting threads: spawner NTHREADS
 * INTERVAL_MS SECONDS starts a thread every INTERVAL_MS until it has
 * NTHREADS, each spinning until SECONDS have passed since start; prints
 * "tid N" for each thread (its own pid first) so a test can compare.
 * With SECONDS "stdin" the test decides when threads start and when all end:
 * the first line on stdin starts them (after "tid PID", before any other
 * thread: the test can start tracing in between), "started" is printed once
 * every thread runs, and they spin until stdin is closed.
 */
#include <stdatomic.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double deadline;
static atomic_int stop;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int running;

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
	pthread_mutex_lock(&lock);
	running++;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	while (!atomic_load(&stop) && now() < deadline)
		for (int i = 0; i < 100000; i++)
			n++;
	return NULL;
}

int main(int argc, char **argv)
{
	int nr = argc > 1 ? atoi(argv[1]) : 4;
	int interval_ms = argc > 2 ? atoi(argv[2]) : 100;
	bool until_eof = argc > 3 && !strcmp(argv[3], "stdin");
	double secs = argc > 3 && !until_eof ? atof(argv[3]) : 2;
	pthread_t th[256];

	if (nr < 0 || nr > 256)
		return 2;
	deadline = until_eof ? INFINITY : now() + secs;
	printf("tid %d\n", (int)getpid());
	fflush(stdout);
	for (char c = 0; until_eof && c != '\n';)
		if (read(0, &c, 1) != 1)
			return 0;
	for (int i = 0; i < nr; i++) {
		usleep(interval_ms * 1000);
		if (pthread_create(&th[i], NULL, spin, NULL))
			return 1;
	}
	if (until_eof) {
		char buf[256];

		pthread_mutex_lock(&lock);
		while (running < nr)
			pthread_cond_wait(&cond, &lock);
		pthread_mutex_unlock(&lock);
		printf("started\n");
		fflush(stdout);
		while (read(0, buf, sizeof(buf)) > 0)
			;
		atomic_store(&stop, 1);
	} else {
		spin(NULL);
	}
	for (int i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	return 0;
}
