// SPDX-License-Identifier: MIT
/*
 * A target for trigger tests: THREADS threads (default 1) each call trig_hit()
 * exactly N times, then trig_other() once. It prints "ready PID" and waits for
 * one byte on stdin (the go signal) so triggers can be armed first; with
 * --no-wait it starts at once (a workload held at exec instead). With
 * --spaced USEC it sleeps that long before each call, so that each fire is
 * seen on its own (the fire-to-API latency figure).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long calls;
static long spaced;	/* microseconds before each call */

__attribute__((noinline)) int trig_hit(int i)
{
	__asm__ volatile("" ::: "memory");
	return i + 1;
}

__attribute__((noinline)) int trig_other(int i)
{
	__asm__ volatile("" ::: "memory");
	return i - 1;
}

static void *worker(void *arg)
{
	long s = 0;

	(void)arg;
	for (long i = 0; i < calls; i++) {
		if (spaced)
			usleep((useconds_t)spaced);
		s += trig_hit((int)i);
	}
	s += trig_other((int)s);
	return (void *)s;
}

int main(int argc, char **argv)
{
	bool wait = true;
	int a = 1, threads = 1;
	pthread_t tid[64];
	char go;

	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--no-wait"))
			wait = false;
		else if (!strcmp(argv[a], "--spaced") && a + 1 < argc)
			spaced = atol(argv[++a]);
	}
	if (a >= argc) {
		fprintf(stderr, "usage: trigtarget [--no-wait] [--spaced USEC] N [THREADS]\n");
		return 2;
	}
	calls = atol(argv[a]);
	if (a + 1 < argc)
		threads = atoi(argv[a + 1]);
	if (threads < 1 || threads > 64)
		return 2;
	if (wait) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (read(0, &go, 1) != 1)
			return 3;
	}
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, NULL))
			return 4;
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	return 0;
}
