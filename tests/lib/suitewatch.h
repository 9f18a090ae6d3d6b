/* SPDX-License-Identifier: MIT */
/*
 * What the Criterion suites share to bound a test and to free what it made.
 *
 * The watchdog: Criterion runs each test in a process of its own; suitewatch(N) arms
 * SIGALRM there, and a test still running N seconds later prints
 * "suitewatch: SUITE::TEST hung: still running after N s" to stderr and _exit()s with
 * SUITEWATCH_EXIT, which fails it; what the test started (the process group each
 * Criterion worker leads) gets SIGTERM, then SIGKILL 2 s later, so that no target
 * of a hung test keeps running. Not Criterion's .timeout: its runner's timeout thread
 * loses an allocation when two such tests run at once, and the ASan build reports that leak.
 *
 *	SUITEWATCH(watchdog, 60)
 *	TestSuite(mysuite, .init = watchdog);
 *
 * A test that needs longer (or shorter) calls suitewatch(N) itself: the latest call holds.
 *
 * Owned strings: own(p) keeps @p (a malloc'ed path or argument a test makes as it goes)
 * until free_owned(), a suite's .fini, frees them all.
 */
#ifndef SUITEWATCH_H
#define SUITEWATCH_H

#define SUITEWATCH_EXIT 3

/* Arm the running test's watchdog: @seconds from now (0: disarm). */
void suitewatch(unsigned seconds);

/*
 * What the test waits for now (a static string; NULL: nothing named): the watchdog's
 * message adds "awaiting: WHAT", so a hang says what never came.
 */
void suitewatch_awaiting(const char *what);

/* A suite .init @name that arms the watchdog for @seconds. */
#define SUITEWATCH(name, seconds)		\
	static void name(void)			\
	{					\
		suitewatch(seconds);		\
	}

/* Keep @p (not NULL: a failed assertion else) until free_owned(); returns @p. */
char *own(char *p);

/* Free every string own() kept (a suite's .fini). */
void free_owned(void);

/* The most own() keeps in one test. */
#define OWN_MAX 512

#endif
