// SPDX-License-Identifier: MIT
/* -S as perf spells it, and snapshot mode's sizes by perf's rules. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "plan_script.h"

struct snap_case {
	char arg[32];		/* "-": -S alone (no value at all) */
	int ret;
	uint64_t size;
};

static struct snap_case snap_cases[] = {
	{ "-", 0, 0 },
	{ "", 0, 0 },
	{ "e", 0, 0 },
	{ "65536", 0, 65536 },
	{ "0x10000", 0, 65536 },
	{ "e4096", 0, 4096 },
	{ "e0x2000", 0, 8192 },
	{ "64K", 0, 65536 },
	{ "4M", 0, 4u << 20 },
	{ "e1G", 0, 1u << 30 },
	{ "0", 0, 0 },
	{ "foo", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "12Q", -EINVAL, 0 },
	{ "0x", -EINVAL, 0 },
	{ "ee", -EINVAL, 0 },
	{ "e0xz", -EINVAL, 0 },
	{ "99999999999999999999999", -EINVAL, 0 },
};

ParameterizedTestParameters(plan_script, snapshot_size_is_spelled_as_perf_spells_it)
{
	return cr_make_param_array(struct snap_case, snap_cases,
				   sizeof(snap_cases) / sizeof(snap_cases[0]));
}

ParameterizedTest(struct snap_case *c, plan_script, snapshot_size_is_spelled_as_perf_spells_it)
{
	struct script_opts o;
	struct error e = { 0 };
	int ret;

	memset(&o, 0, sizeof(o));
	ret = script_parse_snapshot(strcmp(c->arg, "-") ? c->arg : NULL, &o, &e);
	cr_expect_eq(ret, c->ret, "-S%s: %d (%s)", c->arg, ret, e.why);
	if (!ret) {
		cr_expect(o.snapshot);
		cr_expect_eq(o.snapshot_size, c->size, "-S%s: %llu", c->arg,
			     (unsigned long long)o.snapshot_size);
	} else {
		cr_expect(e.usage);
		cr_expect(strstr(e.why, c->arg), "the message names the value: %s", e.why);
	}
}

/* @aux 0: no -m AUX; the default AUX is 4 MiB. */
static int sizes(uint64_t size, uint64_t aux_in, uint64_t *aux, uint64_t *window,
		 struct error *e)
{
	struct script_opts o = { .snapshot = true, .snapshot_size = size };

	*aux = aux_in;
	return script_snapshot_sizes(&o, 4u << 20, aux, window, e);
}

Test(plan_script, snapshot_sizes_follow_perf)
{
	uint64_t aux, win, page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct error e = { 0 };

	/* Neither: the default AUX, the window all of it. */
	cr_expect_eq(sizes(0, 0, &aux, &win, &e), 0);
	cr_expect_eq(aux, 4u << 20);
	cr_expect_eq(win, 4u << 20);
	/* SIZE alone: AUX is SIZE in pages rounded up to a power of two. */
	cr_expect_eq(sizes(100000, 0, &aux, &win, &e), 0);
	cr_expect_eq(aux, 131072);
	cr_expect_eq(win, 100000);
	cr_expect_eq(sizes(1, 0, &aux, &win, &e), 0);
	cr_expect_eq(aux, page);
	/* -m AUX alone: the window is all of it. */
	cr_expect_eq(sizes(0, 65536, &aux, &win, &e), 0);
	cr_expect_eq(win, 65536);
	/* Both: SIZE must fit. */
	cr_expect_eq(sizes(65536, 65536, &aux, &win, &e), 0);
	cr_expect_eq(sizes(65537, 65536, &aux, &win, &e), -EINVAL);
	cr_expect(strstr(e.why, "does not fit the AUX area of 65536 bytes"), "%s", e.why);
	cr_expect(strstr(e.what, "-S65537"), "%s", e.what);
	cr_expect(strstr(e.hint, "-m ,128K"), "%s", e.hint);
}

/* Whether a snapshot may be taken is decided once, by the plan, from -S. */
Test(plan_script, the_plan_says_whether_a_snapshot_may_be_taken)
{
	struct script_target t = { .workload = true };
	struct warnings w = { 0 };
	struct script_plan sp;
	struct error e = { 0 };

	for (int snap = 0; snap < 2; snap++) {
		struct script_opts o = { .snapshot = snap };

		cr_assert_eq(script_resolve(&o, &t, &sp, &e, &w), 0, "%s", e.why);
		cr_expect_eq(sp.snapshot, snap);
		err_clear(&e);
		cr_expect_eq(script_snapshot_check(&sp, &e), snap ? 0 : -EINVAL);
		if (!snap) {
			cr_expect(e.usage);
			cr_expect_str_eq(e.why, "this recording is not in snapshot mode (-S)");
		}
		script_plan_free(&sp);
	}
}
