// SPDX-License-Identifier: MIT
/*
 * Targets for -p whose threads misbehave:
 *   threads sleep N SECONDS     N threads that sleep until SECONDS have passed,
 *                               waking once a second
 *   threads mainexit N SECONDS  the same, but the main thread exits once
 *                               they run: the process lives on without it
 *   threads churn N SECONDS     N threads at a time that each live a few hundred
 *                               microseconds, each replaced at once, until SECONDS
 * Prints "tid N" for every thread that lives to the end (the main thread's first)
 * and then "ready" once they all run, so a test can wait for it and compare.
 * With SECONDS "stdin" (sleep and churn modes), the process lives until its
 * stdin is closed instead: a thread reads it to its end, then all exit; churn
 * then prints "round" after each N threads have lived and ended (its progress).
 */
#include <math.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double deadline;
static atomic_int eof;	/* stdin reached its end (SECONDS "stdin") */

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Wakes once a second: each thread is scheduled, and so has sideband, while traced. */
static void sleep_until(double t)
{
	while (now() < t)
		usleep(t - now() > 1 ? 1000000 : 20000);
}

static void *sleeper(void *arg)
{
	pthread_barrier_t *b = arg;

	printf("tid %ld\n", (long)syscall(SYS_gettid));
	pthread_barrier_wait(b);
	sleep_until(deadline);
	return NULL;
}

/* Lives briefly: long enough to be seen in /proc, short enough to vanish during setup. */
static void *brief(void *arg)
{
	volatile unsigned long n = 0;

	(void)arg;
	for (int i = 0; i < 20000; i++)
		n++;
	return NULL;
}

/* Reads stdin to its end, then says so. */
static void *until_eof(void *arg)
{
	char buf[256];

	(void)arg;
	while (read(0, buf, sizeof(buf)) > 0)
		;
	atomic_store(&eof, 1);
	return NULL;
}

static int churn(int nr, bool on_stdin)
{
	pthread_t *th = calloc((size_t)nr, sizeof(*th));
	pthread_t reader;

	if (!th)
		return 1;
	if (on_stdin && pthread_create(&reader, NULL, until_eof, NULL))
		return 1;
	printf("tid %d\nready\n", (int)getpid());
	fflush(stdout);
	while (now() < deadline && !atomic_load(&eof)) {
		for (int i = 0; i < nr; i++)
			if (pthread_create(&th[i], NULL, brief, NULL))
				return 1;
		for (int i = 0; i < nr; i++)
			pthread_join(th[i], NULL);
		if (on_stdin) {
			printf("round\n");
			fflush(stdout);
		}
	}
	free(th);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sleep";
	int nr = argc > 2 ? atoi(argv[2]) : 4;
	pthread_barrier_t b;
	pthread_attr_t a;
	pthread_t th;

	bool on_stdin = argc > 3 && !strcmp(argv[3], "stdin");

	deadline = on_stdin ? INFINITY : now() + (argc > 3 ? atof(argv[3]) : 2);
	if (on_stdin && !strcmp(mode, "mainexit"))
		return 2;
	if (nr < 1 || nr > 100000)
		return 2;
	if (!strcmp(mode, "churn"))
		return churn(nr, on_stdin);
	/* Small stacks: a thousand threads fit in a small machine. */
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 << 10);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_barrier_init(&b, NULL, (unsigned int)nr + 1);
	printf("tid %d\n", (int)getpid());
	for (int i = 0; i < nr; i++)
		if (pthread_create(&th, &a, sleeper, &b))
			return 1;
	pthread_barrier_wait(&b);
	printf("ready\n");
	fflush(stdout);
	/* The main thread alone exits (pthread_exit's system call, without its unwinder). */
	if (!strcmp(mode, "mainexit"))
		syscall(SYS_exit, 0);
	if (on_stdin) {
		until_eof(NULL);
		return 0;
	}
	sleep_until(deadline + 0.1);
	return 0;
}
