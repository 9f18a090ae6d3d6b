// SPDX-License-Identifier: MIT
/*
 * Criterion prints a skipped test only with --verbose: a test that could not run would pass
 * unseen. This prints each skip with its reason in the default output, and their count.
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>

/* Criterion counts the tests a --filter leaves out as skipped too: count the ones that ran. */
static size_t skipped;

ReportHook(POST_TEST)(struct criterion_test_stats *st)
{
	if (st->test_status != CR_STATUS_SKIPPED)
		return;
	skipped++;
	fprintf(stderr, "[SKIP] %s::%s: %s\n", st->test->category, st->test->name,
			st->message && *st->message ? st->message : "(no reason given)");
}

ReportHook(POST_ALL)(struct criterion_global_stats *g)
{
	(void)g;
	if (skipped)
		fprintf(stderr, "[====] Skipped: %zu (each with its reason above)\n", skipped);
}
