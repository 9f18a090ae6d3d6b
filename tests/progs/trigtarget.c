// SPDX-License-Identifier: MIT
/*
 * A target for trigger tests: THREADS threads (default 1) each call trig_hit()
 * exactly N times, then trig_other() once. It prints "ready PID" and waits for
 * one byte on stdin (the go signal) so triggers can be armed first; with
 * --no-wait it starts at once (a workload held at exec instead). With
 * --spaced USEC it sleeps that long before each call, so that each fire is
 * seen on its own (the fire-to-API latency figure).
 *
 * What a tracer must not change: --stop stops itself (SIGSTOP) before the
 * calls, until someone sends SIGCONT (saying "stopping" on stderr first); --raise SIG raises SIG after them;
 * --fork K makes the calls in K child processes too (each N times, the
 * parent waiting for them); --exec-self execs itself afterwards to make the
 * calls again (at the same addresses when built non-PIE), once;
 * --say-tracer prints "tracer PID" (TracerPid, 0: none) on stderr first;
 * --churn K first forks K children one after another, each exiting at once
 * (reaped before the next), so that a tracer's table of processes that does
 * not forget the dead ones fills up.
 * --hold: after the calls it lives until its stdin reaches its end (the test's
 * word to end), not a fixed time.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
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

/* Never called: a trigger on it fires zero times. */
__attribute__((noinline)) int trig_never(int i)
{
	__asm__ volatile("" ::: "memory");
	return i * 2;
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
	bool wait = true, stop = false, exec_self = false, say_tracer = false, hold = false;
	int a = 1, threads = 1, raise_sig = 0, forks = 0, bad = 0, churn = 0;
	pthread_t tid[64];
	char go;

	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "--no-wait"))
			wait = false;
		else if (!strcmp(argv[a], "--spaced") && a + 1 < argc)
			spaced = atol(argv[++a]);
		else if (!strcmp(argv[a], "--stop"))
			stop = true;
		else if (!strcmp(argv[a], "--raise") && a + 1 < argc)
			raise_sig = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--fork") && a + 1 < argc)
			forks = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--exec-self"))
			exec_self = true;
		else if (!strcmp(argv[a], "--say-tracer"))
			say_tracer = true;
		else if (!strcmp(argv[a], "--churn") && a + 1 < argc)
			churn = atoi(argv[++a]);
		else if (!strcmp(argv[a], "--hold"))
			hold = true;
	}
	if (a >= argc) {
		fprintf(stderr, "usage: trigtarget [--no-wait] [--spaced USEC] [--stop] "
			"[--raise SIG] [--fork K] [--churn K] [--exec-self] [--hold] N [THREADS]\n");
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
	if (argc > 1000)
		return trig_never(argc);
	if (say_tracer) {
		FILE *f = fopen("/proc/self/status", "r");
		char line[128];
		int tracer = -1;

		while (f && fgets(line, sizeof(line), f))
			sscanf(line, "TracerPid: %d", &tracer);
		if (f)
			fclose(f);
		fprintf(stderr, "tracer %d\n", tracer);
	}
	if (stop) {
		fprintf(stderr, "stopping\n");
		raise(SIGSTOP);
	}
	for (int k = 0; k < churn; k++) {
		pid_t c = fork();
		int st;

		if (c < 0)
			return 5;
		if (!c)
			_exit(0);
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st))
			return 6;
	}
	for (int k = 0; k < forks; k++) {
		pid_t c = fork();

		if (c < 0)
			return 5;
		if (!c) {
			forks = 0;	/* the child makes the calls, and forks no more */
			exec_self = false;
			break;
		}
	}
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, NULL))
			return 4;
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	for (int st; forks && waitpid(-1, &st, 0) > 0;)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st);
	if (bad)
		return 6;
	if (raise_sig)
		raise(raise_sig);
	while (hold && read(0, &go, 1) > 0)
		;
	if (exec_self) {
		fflush(NULL);
		execl("/proc/self/exe", argv[0], "--no-wait", argv[a], (char *)NULL);
		return 7;
	}
	return 0;
}
