// SPDX-License-Identifier: MIT
/*
 * A -p target whose leader is a zombie: main starts N threads, each prints
 * "tid N" (the main thread's first), and main ends with pthread_exit(): the
 * process lives on in its threads; "ready" once the main thread is a zombie. They spin (so a
 * tracer has work to record) until their standard input reaches end of file
 * or a line: the test closes the pipe or writes to it to end them, and needs
 * no sleep and no clock.
 *
 *   zombielead N      N spinning threads (1 to 64) and the one that reads stdin
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int done;
static pthread_barrier_t started;

static void *worker(void *arg)
{
	volatile unsigned long n = 0;

	(void)arg;
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	pthread_barrier_wait(&started);
	while (!done) {
		for (int i = 0; i < 100000; i++)
			n++;
		sched_yield();
	}
	return NULL;
}

/* The main thread's state letter in /proc ('Z' once it exited), 0 if unreadable. */
static char leader_state(void)
{
	char path[64], buf[512], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)getpid());
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * Says "ready" once the main thread is a zombie (within 10 s), then waits on
 * stdin: end of file or a line ends every thread.
 */
static void *watcher(void *arg)
{
	char c;

	(void)arg;
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	pthread_barrier_wait(&started);
	for (int i = 0; i < 10000 && leader_state() != 'Z'; i++)
		usleep(1000);
	printf(leader_state() == 'Z' ? "ready\n" : "not a zombie\n");
	fflush(stdout);
	while (read(0, &c, 1) < 0)
		;
	done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	int nr = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t th;

	if (nr < 1 || nr > 64)
		return 2;
	pthread_barrier_init(&started, NULL, (unsigned int)nr + 2);
	printf("tid %d\n", (int)getpid());
	for (int i = 0; i < nr; i++)
		if (pthread_create(&th, NULL, worker, NULL))
			return 1;
	if (pthread_create(&th, NULL, watcher, NULL))
		return 1;
	fflush(stdout);
	pthread_barrier_wait(&started);
	pthread_exit(NULL);
}
