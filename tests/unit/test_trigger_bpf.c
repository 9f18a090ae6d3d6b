// SPDX-License-Identifier: MIT
/*
 * The uprobe program's limit (trigger_bpf_event.h), its two steps run by hand
 * in the interleavings two CPUs can make: each hit takes its time, raises the
 * latest time seen, then takes its count. The hits reported must hold the
 * first ones in time, which trigger_order.c then keeps.
 */
#include <criterion/criterion.h>

#include "trigger_bpf_event.h"
#include "trigger_order.h"

static void hold(struct trigger_order *o, uint64_t time)
{
	struct trigger_fire f = { .time = time, .idx = 0, .pid = 1, .tid = 1 };

	trigger_order_sink(o, &f);
}

/*
 * Limit 1. CPU A takes its time (100), CPU B its own (200); B counts first
 * and gets the one place. A, counted past the limit, is older than a hit
 * counted before it: reported, and the order keeps it, not B. Counting alone
 * (the program before) dropped A and kept B.
 */
Test(trigger_bpf, an_older_hit_counted_second_is_the_one_kept)
{
	struct trigger_bpf_state st = { .limit = 1 };
	struct trigger_order o = { 0 };
	struct trigger_fire out[4];

	trigger_bpf_seen(&st, 100);
	trigger_bpf_seen(&st, 200);
	cr_expect(trigger_bpf_count(&st, 200), "B: the first count");
	cr_expect(trigger_bpf_count(&st, 100), "A: past the limit but older than B");
	cr_expect_eq(st.hits, 2);
	trigger_order_set_limit(&o, 0, 1);
	hold(&o, 200);
	hold(&o, 100);
	trigger_order_release(&o, TRIGGER_ORDER_ALL, NULL, NULL);
	cr_assert_eq(trigger_order_take(&o, out, 4), 1);
	cr_expect_eq(out[0].time, 100, "the first hit in time");
	trigger_order_free(&o);
}

/* Hits one after the other (time and count agree): exactly the limit's are reported. */
Test(trigger_bpf, hits_in_order_report_exactly_the_limit)
{
	struct trigger_bpf_state st = { .limit = 2 };
	int reported = 0;

	for (uint64_t t = 100; t <= 1000; t += 100) {
		trigger_bpf_seen(&st, t);
		reported += trigger_bpf_count(&st, t);
	}
	cr_expect_eq(reported, 2);
	cr_expect_eq(st.hits, 10);
	cr_expect_eq(st.latest, 1000);
	cr_expect_eq(st.unsure, 0);
}

/*
 * A hit that raised the latest time but was counted after the older one
 * (B takes 200 and raises, A takes 100 and counts first): time and count
 * agree, the younger past the limit is not reported.
 */
Test(trigger_bpf, a_younger_hit_counted_second_is_not_reported)
{
	struct trigger_bpf_state st = { .limit = 1 };

	trigger_bpf_seen(&st, 200);
	trigger_bpf_seen(&st, 100);
	cr_expect_eq(st.latest, 200, "an older time does not lower it");
	cr_expect(trigger_bpf_count(&st, 100));
	cr_expect(!trigger_bpf_count(&st, 200));
}

/* No limit: every hit is reported. */
Test(trigger_bpf, without_a_limit_every_hit_is_reported)
{
	struct trigger_bpf_state st = { 0 };

	for (uint64_t t = 300; t > 0; t -= 100) {
		trigger_bpf_seen(&st, t);
		cr_expect(trigger_bpf_count(&st, t));
	}
}
