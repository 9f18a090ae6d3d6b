// SPDX-License-Identifier: MIT
/* The command table, global options and caps. */
#include <criterion/criterion.h>
#include <intel-pt.h>
#include <jansson.h>
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

/* The libipt in use, as pt_library_version() of the same library reports it. */
static void ipt_version(char *buf, size_t size, bool *event_trace, bool *trig)
{
	struct pt_version v = pt_library_version();
	unsigned n = (unsigned)v.major << 8 | v.minor;
	unsigned h = LIBIPT_VERSION_MAJOR << 8 | LIBIPT_VERSION_MINOR;

	snprintf(buf, size, "%u.%u.%u", v.major, v.minor, v.patch);
	if (h < n)
		n = h;
	*event_trace = n >= 0x201;
	*trig = n >= 0x202;
}

Test(cli, version_and_caps_name_the_libipt_and_what_it_decodes)
{
	char want[128], ver[32];
	bool et, trig;
	struct run_result r;
	json_t *j, *ipt;

	ipt_version(ver, sizeof(ver), &et, &trig);
	cr_assert_eq(run_ptcollect(NULL, &r, "--version", NULL), 0);
	cr_expect_eq(r.status, 0);
	snprintf(want, sizeof(want), "\nlibipt %s", ver);
	cr_expect(strstr(r.out, want), "%s in %s", want, r.out);
	cr_expect(strstr(r.out, et ? "decodes Event Trace" : "no Event Trace"), "%s", r.out);
	cr_expect(strstr(r.out, trig ? "decodes TRIG" : "no TRIG"), "%s", r.out);
	run_free(&r);

	cr_assert_eq(run_ptcollect(NULL, &r, "caps", NULL), 0);
	snprintf(want, sizeof(want), "libipt (decode, dump):\n  version: %s\n", ver);
	cr_expect(strstr(r.out, want), "%s in %s", want, r.out);
	cr_expect(strstr(r.out, "errata it knows: bdm70 bdm64 "), "%s", r.out);
	/* Skylake (6/78) is known to every libipt 2.x. */
	cr_expect(strstr(r.out, " 6/78 "), "%s", r.out);
	run_free(&r);

	cr_assert_eq(run_ptcollect(NULL, &r, "caps", "--json", NULL), 0);
	j = json_loads(r.out, 0, NULL);
	cr_assert(j, "%s", r.out);
	ipt = json_object_get(j, "libipt");
	cr_expect_str_eq(json_string_value(json_object_get(ipt, "version")), ver);
	cr_expect_eq(json_is_true(json_object_get(ipt, "event_trace")), et);
	cr_expect_eq(json_is_true(json_object_get(ipt, "trig")), trig);
	cr_expect_gt(json_array_size(json_object_get(ipt, "cpus")), 20);
	cr_expect_str_eq(json_string_value(json_array_get(json_object_get(ipt, "errata"), 5)),
			 "skl014");
	/* 2.2 knows Meteor Lake's (6/170) errata, 2.0.5 does not. */
	if (trig)
		cr_expect(strstr(r.out, "\"6/170\""), "%s", r.out);
	json_decref(j);
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
