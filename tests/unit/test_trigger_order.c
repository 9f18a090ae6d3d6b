// SPDX-License-Identifier: MIT
/*
 * Trigger fires put in time order across reads (trigger_order.c), driven as
 * trigger.c drives it but with fires of our own: several rings read one
 * after the other, fires written to a ring some time after their own time,
 * some just after the reader passed that ring. Fires released only once the
 * watermark (the read's start minus the margin) is past them come out in
 * order; released as read (no watermark), the same reads do not.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "trigger_order.h"

#define MARGIN 200u

static struct trigger_fire fire(uint64_t time, unsigned int idx)
{
	return (struct trigger_fire){ .time = time, .idx = idx, .pid = 1, .tid = 1, .cpu = 0 };
}

static void hold(struct trigger_order *o, uint64_t time, unsigned int idx)
{
	struct trigger_fire f = fire(time, idx);

	trigger_order_sink(o, &f);
}

/* Everything released, taken in batches of @batch; how many into @out. */
static size_t take_all(struct trigger_order *o, struct trigger_fire *out, size_t cap, size_t batch)
{
	size_t n = 0, got;

	while (n < cap && (got = trigger_order_take(o, out + n, cap - n < batch ? cap - n : batch)))
		n += got;
	return n;
}

static size_t reached_nr;
static unsigned int reached_idx[8];

static void on_reached(void *ctx, unsigned int idx)
{
	cr_assert_eq(ctx, &reached_nr);
	if (reached_nr < 8)
		reached_idx[reached_nr] = idx;
	reached_nr++;
}

/*
 * The CI failure, by hand: the reader, at 1000, reads ring A (empty), then
 * ring B, which has fire b (1020); fire a (1010) lands in A just after A was
 * read. It comes in the next read, older than b.
 */
Test(trigger_order, a_fire_written_just_after_its_ring_was_read_still_comes_first)
{
	struct trigger_order o = { 0 };
	struct trigger_fire out[4];

	trigger_order_set_limit(&o, 0, 0);
	hold(&o, 1020, 0);				/* read 1: ring B */
	trigger_order_release(&o, 1000 - MARGIN, NULL, NULL);
	cr_expect_eq(trigger_order_take(&o, out, 4), 0, "b is younger than the watermark");
	cr_expect_eq(trigger_order_pending(&o), 1);
	cr_expect_eq(trigger_order_wake(&o, MARGIN), 1020 + MARGIN + 1);
	hold(&o, 1010, 0);				/* read 2, at 1300: ring A */
	trigger_order_release(&o, 1300 - MARGIN, NULL, NULL);
	cr_assert_eq(trigger_order_take(&o, out, 4), 2);
	cr_expect_eq(out[0].time, 1010);
	cr_expect_eq(out[1].time, 1020);
	cr_expect_eq(o.late[0], 0);
	cr_expect_eq(trigger_order_wake(&o, MARGIN), 0, "nothing held: no wake");
	trigger_order_free(&o);
}

/* Fires on 3 rings: the time they carry, when they land in their ring. */
struct sim {
	struct { uint64_t time, written; unsigned int ring; bool read; } f[3000];
	size_t nr;
};

static void sim_make(struct sim *s, unsigned int seed)
{
	uint64_t t = 10000;

	srand(seed);
	s->nr = sizeof(s->f) / sizeof(s->f[0]);
	for (size_t i = 0; i < s->nr; i++) {
		t += 1 + (uint64_t)(rand() % 40);
		s->f[i].time = t;
		/* A write up to the margin after its time (what the margin bounds). */
		s->f[i].written = t + (uint64_t)(rand() % MARGIN);
		s->f[i].ring = (unsigned int)(rand() % 3);
		s->f[i].read = false;
	}
}

/*
 * Read the rings one after the other starting at @now, each read taking 30:
 * what has landed in a ring by the time it is read is held.
 */
static void sim_read(struct sim *s, struct trigger_order *o, uint64_t now)
{
	for (unsigned int ring = 0; ring < 3; ring++, now += 30)
		for (size_t i = 0; i < s->nr; i++)
			if (!s->f[i].read && s->f[i].ring == ring && s->f[i].written <= now) {
				hold(o, s->f[i].time, ring);
				s->f[i].read = true;
			}
}

/* Reads every 50 to 250 until every fire is in, then a flush; false: out of order. */
static bool sim_run(struct sim *s, bool watermark, struct trigger_fire *out, size_t *nr)
{
	struct trigger_order o = { 0 };
	uint64_t now = 10000, last = 0;
	bool ordered = true;
	size_t n = 0;

	for (unsigned int i = 0; i < 3; i++)
		trigger_order_set_limit(&o, i, 0);
	while (now < s->f[s->nr - 1].written + 1000) {
		size_t got;

		sim_read(s, &o, now);
		trigger_order_release(&o, watermark ? now - MARGIN : TRIGGER_ORDER_ALL, NULL,
				      NULL);
		got = take_all(&o, out + n, s->nr - n, 64);
		for (size_t i = n; i < n + got; i++) {
			ordered &= out[i].time >= last;
			last = out[i].time;
		}
		n += got;
		now += 50 + (uint64_t)(rand() % 200);
	}
	trigger_order_release(&o, TRIGGER_ORDER_ALL, NULL, NULL);
	n += take_all(&o, out + n, s->nr - n, 64);
	for (unsigned int i = 0; i < 3; i++)
		cr_expect_eq(o.late[i], 0, "ring %u: fires came late", i);
	cr_expect_eq(o.fires[0] + o.fires[1] + o.fires[2], n);
	trigger_order_free(&o);
	*nr = n;
	return ordered;
}

Test(trigger_order, fires_arriving_late_across_reads_come_out_in_time_order)
{
	static struct sim s;
	static struct trigger_fire out[3000];
	size_t n;

	for (unsigned int seed = 1; seed <= 20; seed++) {
		sim_make(&s, seed);
		cr_expect(sim_run(&s, true, out, &n), "seed %u: out of order", seed);
		cr_expect_eq(n, s.nr, "seed %u: %zu of %zu fires", seed, n, s.nr);
		for (size_t i = 1; i < n; i++)
			cr_assert_geq(out[i].time, out[i - 1].time, "seed %u, fire %zu", seed, i);
	}
}

/* The same reads, each releasing what it read: the test above can fail. */
Test(trigger_order, without_a_watermark_the_same_reads_come_out_of_order)
{
	static struct sim s;
	static struct trigger_fire out[3000];
	unsigned int disordered = 0;
	size_t n;

	for (unsigned int seed = 1; seed <= 20; seed++) {
		sim_make(&s, seed);
		disordered += !sim_run(&s, false, out, &n);
		cr_expect_eq(n, s.nr);
	}
	cr_expect_gt(disordered, 0, "no run out of order: the simulation does not race");
}

Test(trigger_order, the_flush_releases_every_held_fire_in_order)
{
	struct trigger_order o = { 0 };
	struct trigger_fire out[8];

	trigger_order_set_limit(&o, 0, 0);
	trigger_order_set_limit(&o, 1, 0);
	hold(&o, 5003, 1);
	hold(&o, 5001, 0);
	hold(&o, 5002, 1);
	hold(&o, 5001, 1);
	trigger_order_release(&o, 5000 - MARGIN, NULL, NULL);
	cr_expect_eq(trigger_order_take(&o, out, 8), 0);
	cr_expect_eq(trigger_order_pending(&o), 4);
	trigger_order_release(&o, TRIGGER_ORDER_ALL, NULL, NULL);
	cr_assert_eq(trigger_order_take(&o, out, 8), 4);
	cr_expect(out[0].time == 5001 && out[0].idx == 0, "same time: the lower trigger first");
	cr_expect(out[1].time == 5001 && out[1].idx == 1);
	cr_expect_eq(out[2].time, 5002);
	cr_expect_eq(out[3].time, 5003);
	cr_expect_eq(trigger_order_pending(&o), 0);
	trigger_order_free(&o);
}

/*
 * Limit 3: fires at 60, 70, 80 are read first, one at 50 a read later. The
 * limit keeps 50, 60, 70, and is reached once, at 70.
 */
Test(trigger_order, the_limit_keeps_the_earliest_fires_across_reads)
{
	struct trigger_order o = { 0 };
	struct trigger_fire out[8];
	size_t n;

	reached_nr = 0;
	trigger_order_set_limit(&o, 0, 3);
	trigger_order_set_limit(&o, 1, 0);
	hold(&o, 1060, 0);
	hold(&o, 1080, 0);
	hold(&o, 1070, 0);
	hold(&o, 1075, 1);
	trigger_order_release(&o, 1000 - MARGIN, on_reached, &reached_nr);
	cr_expect_eq(reached_nr, 0, "nothing released yet");
	hold(&o, 1050, 0);
	hold(&o, 1090, 0);
	trigger_order_release(&o, 1300 - MARGIN, on_reached, &reached_nr);
	n = take_all(&o, out, 8, 8);
	cr_assert_eq(n, 4, "3 under the limit and the other trigger's one: %zu", n);
	cr_expect(out[0].time == 1050 && out[1].time == 1060 && out[2].time == 1070);
	cr_expect(out[3].time == 1075 && out[3].idx == 1);
	cr_expect_eq(reached_nr, 1);
	cr_expect_eq(reached_idx[0], 0);
	cr_expect_eq(o.fires[0], 3);
	trigger_order_release(&o, TRIGGER_ORDER_ALL, on_reached, &reached_nr);
	cr_expect_eq(trigger_order_take(&o, out, 8), 0, "fires past the limit are dropped");
	cr_expect_eq(reached_nr, 1);
	cr_expect_eq(o.late[0], 0, "1050 came in time; 1090 is younger than those kept");
	trigger_order_free(&o);
}

/*
 * Limit 2: 100 and 300 are released and reach it; 200, held up past the
 * margin, comes after: its place went to 300, so it is counted late (the
 * kept fires are not the first two), and 400 is past the limit rightly.
 */
Test(trigger_order, a_late_fire_past_the_limit_a_younger_one_took_is_counted_late)
{
	struct trigger_order o = { 0 };
	struct trigger_fire out[8];

	reached_nr = 0;
	trigger_order_set_limit(&o, 0, 2);
	hold(&o, 100, 0);
	hold(&o, 300, 0);
	trigger_order_release(&o, 500, on_reached, &reached_nr);
	cr_assert_eq(take_all(&o, out, 8, 8), 2);
	cr_expect_eq(reached_nr, 1);
	hold(&o, 400, 0);
	hold(&o, 200, 0);
	trigger_order_release(&o, 600, on_reached, &reached_nr);
	cr_expect_eq(trigger_order_take(&o, out, 8), 0, "past the limit");
	cr_expect_eq(o.fires[0], 2);
	cr_expect_eq(o.late[0], 1, "200: a younger fire took its place; 400 is past it rightly");
	trigger_order_free(&o);
}

Test(trigger_order, fires_of_a_trigger_not_added_are_dropped)
{
	struct trigger_order o = { 0 };
	struct trigger_fire out[4];

	trigger_order_set_limit(&o, 0, 0);
	hold(&o, 10, 1);
	hold(&o, 20, 0);
	trigger_order_release(&o, TRIGGER_ORDER_ALL, NULL, NULL);
	cr_assert_eq(trigger_order_take(&o, out, 4), 1);
	cr_expect_eq(out[0].idx, 0);
	trigger_order_free(&o);
}

/*
 * A fire older than a watermark already passed (its writer was held up longer
 * than the margin) is not lost: it comes, counted late, and in order with
 * the released fires the caller has not taken yet.
 */
Test(trigger_order, a_fire_later_than_the_margin_is_returned_and_counted_late)
{
	struct trigger_order o = { 0 };
	struct trigger_fire out[8];

	trigger_order_set_limit(&o, 0, 0);
	hold(&o, 100, 0);
	hold(&o, 300, 0);
	trigger_order_release(&o, 500, NULL, NULL);
	cr_assert_eq(trigger_order_take(&o, out, 1), 1);
	cr_expect_eq(out[0].time, 100);
	cr_expect_eq(trigger_order_wake(&o, MARGIN), 1, "300 waits to be taken: wake at once");
	hold(&o, 200, 0);
	trigger_order_release(&o, 600, NULL, NULL);
	cr_assert_eq(trigger_order_take(&o, out, 8), 2);
	cr_expect_eq(out[0].time, 200, "before 300, which was not taken yet");
	cr_expect_eq(out[1].time, 300);
	cr_expect_eq(o.late[0], 1);
	trigger_order_free(&o);
}

/* Many fires at once (a full ring read after the target exited), taken in small batches. */
Test(trigger_order, a_large_read_is_taken_in_batches_in_order)
{
	struct trigger_order o = { 0 };
	static struct trigger_fire out[20000];
	size_t n;

	trigger_order_set_limit(&o, 0, 0);
	for (uint64_t i = 0; i < 20000; i++)
		hold(&o, 1000000 - (i * 7919) % 20000, 0);	/* a permutation */
	trigger_order_release(&o, TRIGGER_ORDER_ALL, NULL, NULL);
	cr_expect_eq(trigger_order_error(&o), 0);
	n = take_all(&o, out, 20000, 64);
	cr_assert_eq(n, 20000);
	for (size_t i = 1; i < n; i++)
		cr_assert_lt(out[i - 1].time, out[i].time, "fire %zu", i);
	trigger_order_free(&o);
}
