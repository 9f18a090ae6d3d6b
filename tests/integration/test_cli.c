// SPDX-License-Identifier: MIT
/* The command table, global options and caps. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "run.h"

Test(cli, version_and_help_exit_zero)
{
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "--version", NULL), 0);
	cr_expect_eq(r.status, 0);
	cr_expect(!strncmp(r.out, "ptcollect ", 10), "%s", r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "--help", NULL), 0);
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "record") && strstr(r.out, "caps"), "%s", r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "help", "record", NULL), 0);
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.out, "--filter") && strstr(r.out, "-m, --mmap-pages"), "%s", r.out);
	run_free(&r);
}

Test(cli, unknown_command_and_option_exit_two)
{
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "frobnicate", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "ptcollect: unknown command 'frobnicate'"), "%s", r.err);
	cr_expect_str_empty(r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "--frob", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "unknown option '--frob'"), "%s", r.err);
	run_free(&r);
	char *bare[] = { (char *)run_bin(), NULL };

	cr_assert_eq(run_argv(bare, NULL, &r), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "no command"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "caps", "--frob", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "caps: unknown option '--frob'"), "%s", r.err);
	run_free(&r);
}

Test(cli, unambiguous_prefix_selects_a_command)
{
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "help", "rec", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "ptcollect record"), "%s", r.out);
	run_free(&r);
}

Test(caps, without_pmu_says_why_and_exits_one)
{
	char *env[] = { "PTCOLLECT_SYSFS=/nonexistent-sysfs", NULL };
	struct run_result r;

	cr_assert_eq(run_ptcollect(env, &r, "caps", NULL), 0);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.out, "Intel PT usable: no"), "%s", r.out);
	cr_expect(strstr(r.err, "Intel PT is not usable here: no intel_pt PMU in "
			  "/nonexistent-sysfs/bus/event_source/devices"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(env, &r, "caps", "--json", NULL), 0);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.out, "\"available\": false"), "%s", r.out);
	cr_expect(strstr(r.out, "\"nr_addr_filters\": 0"), "%s", r.out);
	run_free(&r);
}

/* This machine (and CI) has no Intel PT: caps must say so with the real /sys. */
Test(caps, on_this_machine_reports_no_intel_pt)
{
	char *env[] = { "PTCOLLECT_SYSFS=", NULL };
	struct run_result r;

	cr_assert_eq(run_ptcollect(env, &r, "caps", NULL), 0);
	if (!strstr(r.out, "Intel PT usable: no")) {
		run_free(&r);
		cr_skip_test("this machine has a usable intel_pt PMU: the no-PT message "
			     "cannot be checked here");
	}
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "no intel_pt PMU in /sys/bus/event_source/devices"), "%s", r.err);
	cr_expect(strstr(r.out, "AMD CPU has no Intel PT") ||
		  strstr(r.out, "does not report Intel PT"), "%s", r.out);
	run_free(&r);
}

Test(caps, fixture_json_has_type_caps_and_ranges)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "ptwrite4");
	struct run_result r;

	cr_assert_eq(run_ptcollect(env, &r, "caps", "--json", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"available\": true"), "%s", r.out);
	cr_expect(strstr(r.out, "\"pmu\": {\n    \"name\": \"intel_pt\",\n    \"type\": 52\n"),
		  "%s", r.out);
	cr_expect(!strstr(r.out, "\n  \"type\""), "the type is said once, in \"pmu\": %s", r.out);
	cr_expect(strstr(r.out, "\"ptwrite\": 1"), "%s", r.out);
	cr_expect(strstr(r.out, "\"mtc_periods\": 585"), "caps are hex in sysfs: %s", r.out);
	cr_expect(strstr(r.out, "\"nr_addr_filters\": 4"), "%s", r.out);
	cr_expect(strstr(r.out, "\"mtc_period\": \"0,3,6,9\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"psb_period\": \"0-5\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"config\": \"0x300e601\""), "%s", r.out);
	run_free(&r);
}
