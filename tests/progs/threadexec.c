// SPDX-License-Identifier: MIT
/*
 * A process whose thread other than its leader execs: it prints "ready PID" and
 * waits for one byte on stdin (the go); then a new thread execs this program
 * again with "after", and the leader never returns from its wait. The kernel
 * ends the leader, and the thread that exec'd takes the leader's id (PID): its
 * own id is gone without an exit anyone sees, but a tracer's
 * PTRACE_GETEVENTMSG at the exec stop names it. The new image prints
 * "after PID" and lives until stdin reaches its end (the test's word to end).
 * trig_hit() is a function for a breakpoint trigger (which makes record -p
 * seize the threads); it is called once before and once after the exec.
 *
 *	threadexec [after]
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char *self;

__attribute__((noinline)) int trig_hit(int i)
{
	__asm__ volatile("" ::: "memory");
	return i + 1;
}

static void *execer(void *arg)
{
	char *argv[] = { self, "after", NULL };

	(void)arg;
	execv("/proc/self/exe", argv);
	perror("threadexec: execv");
	_exit(126);
}

int main(int argc, char **argv)
{
	pthread_t t;
	char c;

	self = argv[0];
	if (argc > 1 && !strcmp(argv[1], "after")) {
		printf("after %d\n", (int)getpid());
		fflush(stdout);
		trig_hit(1);
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (read(0, &c, 1) != 1)
		return 1;
	trig_hit(0);
	if (pthread_create(&t, NULL, execer, NULL))
		return 1;
	/* The exec ends this thread; the join never returns. */
	pthread_join(t, NULL);
	return 1;
}
