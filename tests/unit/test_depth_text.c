// SPDX-License-Identifier: MIT
/*
 * "[depth N] " kept from line to line (depth_text.h): moved by one in place, it must say
 * what snprintf() says, across a change in the number of digits either way and after a
 * jump.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "depth_text.h"
#include "xorshift.h"

static void says(const struct depth_text *t, uint64_t depth)
{
	char want[40];
	int n = snprintf(want, sizeof(want), "[depth %" PRIu64 "] ", depth);

	cr_assert_eq(t->depth, depth);
	cr_assert_eq(t->len, (uint32_t)n, "len %u for %" PRIu64, t->len, depth);
	cr_assert(!memcmp(t->s, want, (size_t)n), "%.*s for %s", (int)t->len, t->s, want);
}

Test(depth_text, steps_across_each_change_of_digits_up_and_down)
{
	struct depth_text t = { 0 };
	uint64_t d;

	for (d = 0; d <= 100500; d++) {
		depth_text_at(&t, d);
		says(&t, d);
	}
	for (d = 100500; d-- > 0;) {
		depth_text_at(&t, d);
		says(&t, d);
	}
}

Test(depth_text, steps_at_the_ends_of_uint64)
{
	struct depth_text t = { 0 };
	uint64_t d;

	for (d = UINT64_MAX - 1002; d != 0; d++) {
		depth_text_at(&t, d);
		says(&t, d);
	}
	for (d = UINT64_MAX; d >= UINT64_MAX - 1002; d--) {
		depth_text_at(&t, d);
		says(&t, d);
	}
	depth_text_at(&t, 0);
	says(&t, 0);
	depth_text_at(&t, 1);
	says(&t, 1);
	depth_text_at(&t, 0);
	says(&t, 0);
}

Test(depth_text, a_walk_with_jumps_says_each_depth)
{
	struct depth_text t = { 0 };
	uint32_t x = 12345;
	uint64_t d = 995;

	for (int i = 0; i < 200000; i++) {
		uint32_t r = xorshift32(&x);

		if (r % 1000 == 0)
			d = r % 3 ? r % 20000 : (uint64_t)r * r;
		else if (r & 1)
			d++;
		else if (d)
			d--;
		depth_text_at(&t, d);
		says(&t, d);
	}
}
