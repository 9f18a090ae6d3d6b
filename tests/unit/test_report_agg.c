// SPDX-License-Identifier: MIT
/*
 * report's merge (report_agg.c): when it looks ahead of its records. The look-ahead only
 * fetches (its output is the same either way: the integration tests compare), so what is
 * tested is the rule, at the rates of T_ADEFs measured in docs/benchmarks.md.
 */
#include <criterion/criterion.h>

/* (the merge's own header, src/decode's: the Makefile adds that directory for this test) */
#include "report_agg.h"

Test(report_agg, looks_ahead_only_where_slot_definitions_are_frequent)
{
	/* 512 worker slots, ptwalk over 2,000 functions: a record in 3 to 4 a T_ADEF */
	cr_expect(report_ahead_wanted(44430, 44430 + 72678 + 60000));
	/* a record in 8: still on */
	cr_expect(report_ahead_wanted(1000, 8000));
	/* the walk with 32,768 slots: 135,414 T_ADEFs in about 2.7 M records (a loss) */
	cr_expect(!report_ahead_wanted(135414, 2700000));
	/* one in 32 (the rule before turned it on there) */
	cr_expect(!report_ahead_wanted(1000, 32000));
	/* the loop: a few T_ADEFs among many records */
	cr_expect(!report_ahead_wanted(12, 101000));
}
