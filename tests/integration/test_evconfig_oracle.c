// SPDX-License-Identifier: MIT
/*
 * attr.config and the exclusion bits, ptcollect against Linux perf, for the
 * same event spelling on the same fixture PMU.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <inttypes.h>
#include <stdlib.h>

#include "oracle.h"

struct ev_case {
	char fixture[16];
	char event[64];
};

static struct ev_case cases[] = {
	{ "skylake", "intel_pt//u" },
	{ "skylake", "intel_pt//k" },
	{ "skylake", "intel_pt//uk" },
	{ "skylake", "intel_pt//" },
	{ "skylake", "intel_pt/cyc/u" },
	{ "skylake", "intel_pt/cyc,cyc_thresh=2/u" },
	{ "skylake", "intel_pt/mtc_period=0/u" },
	{ "skylake", "intel_pt/mtc_period=6,psb_period=2/u" },
	{ "skylake", "intel_pt/noretcomp/u" },
	{ "skylake", "intel_pt/tsc=0/u" },
	{ "skylake", "intel_pt/branch=0/u" },
	{ "skylake", "intel_pt/mtc=0/k" },
	{ "skylake", "intel_pt/config=0x2001/u" },
	{ "skylake", "intel_pt/config=0x2001,cyc/u" },
	{ "skylake", "intel_pt/psb_period=0x3/ku" },
	{ "skylake", "intel_pt/cyc_thresh=13,mtc_period=9/u" },
	{ "skylake", "intel_pt/cyc=1,cyc=0/u" },
	{ "nomtc", "intel_pt//u" },
	{ "nomtc", "intel_pt/tsc=0,noretcomp/u" },
	{ "nomtc", "intel_pt/branch=0/k" },
	{ "ptwrite4", "intel_pt//u" },
	{ "ptwrite4", "intel_pt/ptw/u" },
	{ "ptwrite4", "intel_pt/ptw,fup_on_ptw/u" },
	{ "ptwrite4", "intel_pt/pwr_evt,cyc/u" },
	{ "ptwrite4", "intel_pt/config=0x1,ptw/uk" },
	/*
	 * pt=0: perf sets pt=1 whatever the spelling ("pt=0 doesn't make sense,
	 * forcing pt=1"), so branch=0 with it means pass-through without branches,
	 * never the driver's legacy mode; the configs must stay perf's.
	 */
	{ "skylake", "intel_pt/pt=0/u" },
	{ "skylake", "intel_pt/pt=0,branch=0/u" },
	{ "skylake", "intel_pt/branch=0,pt=0/u" },
	{ "skylake", "intel_pt/pt=0,branch=1/k" },
	{ "skylake", "intel_pt/config=0x2000/u" },
	{ "nomtc", "intel_pt/pt=0,branch=0/k" },
	{ "ptwrite4", "intel_pt/pt=0,ptw/u" },
};

ParameterizedTestParameters(evconfig_oracle, config_and_exclusions_equal_perfs)
{
	return cr_make_param_array(struct ev_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct ev_case *c, evconfig_oracle, config_and_exclusions_equal_perfs)
{
	char *root = oracle_fixture(c->fixture);
	struct oracle_attr perf, ours;

	cr_assert_eq(oracle_perf(root, c->event, NULL, &perf), 0, "perf could not be run");
	cr_assert(perf.found, "%s on %s: perf printed no attr for the fixture PMU:\n%s",
		  c->event, c->fixture, perf.log);
	cr_assert_eq(oracle_ptcollect(root, c->event, NULL, &ours), 0);
	cr_assert(ours.found, "%s on %s: ptcollect printed no plan (exit %d):\n%s",
		  c->event, c->fixture, ours.status, ours.log);
	cr_expect_eq(ours.config, perf.config, "%s on %s: config 0x%" PRIx64 ", perf 0x%" PRIx64,
		     c->event, c->fixture, ours.config, perf.config);
	cr_expect_eq(ours.exclude_user, perf.exclude_user, "%s: exclude_user %d, perf %d",
		     c->event, ours.exclude_user, perf.exclude_user);
	cr_expect_eq(ours.exclude_kernel, perf.exclude_kernel, "%s: exclude_kernel %d, perf %d",
		     c->event, ours.exclude_kernel, perf.exclude_kernel);
	free(root);
}
