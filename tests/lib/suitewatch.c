// SPDX-License-Identifier: MIT
/* The suites' watchdog and owned strings (suitewatch.h). */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "suitewatch.h"

static volatile sig_atomic_t armed_s;
static const char *volatile awaiting;

static void put(const char *s)
{
	ssize_t n = write(STDERR_FILENO, s, strlen(s));

	(void)n;
}

#define REAP_GRACE_MS 2000	/* from SIGTERM to SIGKILL for what the hung test started */

/*
 * What the hung test started (its targets, a ptcollect and its workload: the process
 * group Criterion's worker leads, which they join) must not outlive it and load the
 * rest of the suite: a child in a group of its own asks them to end, then kills what
 * is left, while the test exits at once with its status.
 */
static void reap_group(void)
{
	pid_t group = getpgrp();
	struct sigaction sa;

	if (group != getpid())
		return;		/* not a group of the test's own: nothing known to reap */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGTERM, &sa, NULL);	/* the test ends by its own _exit(), below */
	if (fork() == 0) {
		struct timespec grace = { REAP_GRACE_MS / 1000, 0 };

		setpgid(0, 0);
		kill(-group, SIGTERM);
		nanosleep(&grace, NULL);
		kill(-group, SIGKILL);
		_exit(0);
	}
}

/* Only async-signal-safe calls: write(), sigaction(), fork(), kill(), _exit(). */
static void on_alarm(int sig)
{
	const struct criterion_test *t = criterion_current_test;
	char num[24], *p = num + sizeof(num) - 1;
	unsigned long s = (unsigned long)armed_s;

	(void)sig;
	*p = '\0';
	do
		*--p = (char)('0' + s % 10);
	while (s /= 10);
	put("suitewatch: ");
	put(t && t->category ? t->category : "?");
	put("::");
	put(t && t->name ? t->name : "?");
	put(" hung: still running after ");
	put(p);
	put(" s");
	if (awaiting) {
		put(", awaiting: ");
		put(awaiting);
	}
	put("\n");
	reap_group();
	_exit(SUITEWATCH_EXIT);
}

void suitewatch(unsigned seconds)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
	armed_s = (sig_atomic_t)seconds;
	alarm(seconds);
}

void suitewatch_awaiting(const char *what)
{
	awaiting = what;
}

static char *owned[OWN_MAX];
static size_t nr_owned;

char *own(char *p)
{
	cr_assert(p);
	cr_assert_lt(nr_owned, sizeof(owned) / sizeof(owned[0]));
	owned[nr_owned++] = p;
	return p;
}

void free_owned(void)
{
	while (nr_owned)
		free(owned[--nr_owned]);
}
