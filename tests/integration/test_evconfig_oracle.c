// SPDX-License-Identifier: MIT
/*
 * attr.config and the exclusion bits, ptcollect against Linux perf, for the
 * same event spelling on the same fixture PMU.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
	 * pt=0: perf's rule (intel_pt_validate_config) sets pt=1 whatever the
	 * spelling ("pt=0 doesn't make sense, forcing pt=1"), so branch=0 with it
	 * means pass-through without branches, never the driver's legacy mode.
	 * See perf_config_by_its_rule() for the perf builds that skip the rule.
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

/*
 * perf's config after its pt=1 rule. Debian's perf 6.1.192 prints the rule's
 * warning text in its binary but sends pt=0 as written (its log has no
 * "forcing pt=1"; earlier 6.1 builds forced it). The 6.1 driver refuses
 * pt=0 with branch=1 and reads pt=0,branch=0 as its legacy mode, which
 * traces branches after all, so ptcollect keeps the rule: every other bit
 * must still be perf's. All three fixtures have the pt term at bit 0.
 */
static uint64_t perf_config_by_its_rule(const struct oracle_attr *perf)
{
	if (!(perf->config & 1) && !strstr(perf->log, "forcing pt=1"))
		return perf->config | 1;
	return perf->config;
}

ParameterizedTest(struct ev_case *c, evconfig_oracle, config_and_exclusions_equal_perfs)
{
	char *root = oracle_fixture(c->fixture);
	struct oracle_attr perf, ours;
	uint64_t want;

	cr_assert_eq(oracle_perf(root, c->event, NULL, &perf), 0, "perf could not be run");
	cr_assert(perf.found, "%s on %s: perf printed no attr for the fixture PMU:\n%s",
		  c->event, c->fixture, perf.log);
	cr_assert_eq(oracle_ptcollect(root, c->event, NULL, &ours), 0);
	cr_assert(ours.found, "%s on %s: ptcollect printed no plan (exit %d):\n%s",
		  c->event, c->fixture, ours.status, ours.log);
	want = perf_config_by_its_rule(&perf);
	cr_expect_eq(ours.config, want, "%s on %s: config 0x%" PRIx64 ", perf 0x%" PRIx64
		     " (0x%" PRIx64 " by its pt=1 rule)", c->event, c->fixture, ours.config,
		     perf.config, want);
	cr_expect_eq(ours.exclude_user, perf.exclude_user, "%s: exclude_user %d, perf %d",
		     c->event, ours.exclude_user, perf.exclude_user);
	cr_expect_eq(ours.exclude_kernel, perf.exclude_kernel, "%s: exclude_kernel %d, perf %d",
		     c->event, ours.exclude_kernel, perf.exclude_kernel);
	free(root);
}
