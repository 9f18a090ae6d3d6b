// SPDX-License-Identifier: MIT
/*
 * The suites' watchdog: a hung test fails with SUITEWATCH_EXIT and takes what it
 * started with it, so that its targets do not load the rest of the suite.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "suitewatch.h"

SUITEWATCH(watchdog, 60)

TestSuite(suitewatch, .init = watchdog);

/* A target that lives until it is killed; @deaf: deaf to SIGTERM too. */
static pid_t target(bool deaf)
{
	pid_t pid = fork();

	if (pid == 0) {
		close(STDERR_FILENO);	/* the test reads the hung test's stderr to its end */
		if (deaf)
			signal(SIGTERM, SIG_IGN);
		for (;;)
			pause();
	}
	return pid;
}

/*
 * A hung test (the child) starts two targets, one deaf to SIGTERM, and hangs; its
 * watchdog fires after 1 s: the test exits SUITEWATCH_EXIT, says it hung, and both
 * targets end (the deaf one by SIGKILL after the grace).
 */
Test(suitewatch, a_hung_test_ends_what_it_started)
{
	int pids[2], go[2], err[2], st, fds[2];
	pid_t child, t[2];
	char msg[512] = "";
	ssize_t n;

	cr_assert_eq(pipe(pids), 0);
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(err), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		char c;

		dup2(err[1], STDERR_FILENO);
		setpgid(0, 0);		/* a group of its own, as a Criterion worker leads */
		t[0] = target(false);
		t[1] = target(true);
		if (write(pids[1], t, sizeof(t)) != sizeof(t) || read(go[0], &c, 1) != 1)
			_exit(1);
		suitewatch(1);
		for (;;)
			pause();
	}
	close(err[1]);
	cr_assert_eq(read(pids[0], t, sizeof(t)), (ssize_t)sizeof(t));
	/* pidfds before the child can end: the targets' pids cannot be taken by others */
	for (int i = 0; i < 2; i++) {
		fds[i] = (int)syscall(SYS_pidfd_open, t[i], 0);
		cr_assert_geq(fds[i], 0, "pidfd_open(%d): %s", (int)t[i], strerror(errno));
	}
	cr_assert_eq(write(go[1], "g", 1), 1);
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == SUITEWATCH_EXIT, "status 0x%x", st);
	n = read(err[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	cr_expect(strstr(msg, " hung: still running after 1 s"), "%s", msg);
	for (int i = 0; i < 2; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLIN };

		/* the bound: the grace (2 s) and a loaded machine's slack */
		int ready = poll(&p, 1, 20000);

		cr_expect_eq(ready, 1, "target %d (%s) still runs", (int)t[i],
			     i ? "deaf to SIGTERM" : "plain");
		if (ready != 1)
			syscall(SYS_pidfd_send_signal, fds[i], SIGKILL, NULL, 0);
		close(fds[i]);
	}
}
