// SPDX-License-Identifier: MIT
/*
 * `ptcollect dump` on its own: bad input named and refused, what it says on
 * stderr where ptdump says nothing, and the typed JSON of packets and
 * records. (test_dump_oracle.c holds the lines against ptdump's.)
 */
#include <criterion/criterion.h>
#include <intel-pt.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"
#include "suitewatch.h"
#include "tempfile.h"

/* PSB, PSBEND, TIP.PGE full, TSC, TNT-8 !.!, then a byte no packet starts with. */
static size_t small_trace(uint8_t *buf, size_t cap, bool bad_tail)
{
	struct pt_packet pk[] = {
		{ .type = ppt_psb }, { .type = ppt_psbend },
		{ .type = ppt_tip_pge, .payload.ip = { pt_ipc_full, 0xffffffff81000000ull } },
		{ .type = ppt_tsc, .payload.tsc.tsc = 0x2fa1088fac05e2ull },
		{ .type = ppt_tnt_8, .payload.tnt = { .bit_size = 3, .payload = 5 } },
	};
	struct pt_config cfg;
	struct pt_encoder *e;
	uint64_t len;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + cap;
	e = pt_alloc_encoder(&cfg);
	for (size_t i = 0; i < sizeof(pk) / sizeof(pk[0]); i++)
		cr_assert_geq(pt_enc_next(e, &pk[i]), 0);
	pt_enc_get_offset(e, &len);
	pt_free_encoder(e);
	if (bad_tail)
		buf[len++] = 0xc9;	/* no packet has this opcode */
	return (size_t)len;
}

Test(dump_input, pt_options_on_a_pevent_file_are_refused_by_name)
{
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--lastip", "x.pevent", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--lastip applies to a .pt trace"), "%s", r.err);
	cr_expect_str_empty(r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--sample-type", "-1", "x.pevent", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--sample-type '-1' is not a number"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--sb:filename", "x.pt", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "unknown option '--sb:filename'"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--format", "perf", "x.pt", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--format 'perf': use pevent or pt"), "%s", r.err);
	run_free(&r);
}

/* --cpu F/M[/S] as ptdump takes it: bad values refused by name, exit 2. */
Test(dump_input, bad_cpu_values_are_refused_by_name)
{
	static const char *const bad[] = { "6", "6/", "6/x", "6/256", "65536/1", "-6/85", "6/-85",
					   "6/85/4/1", "6/85/", "auto", " 6/85", "6/+85", "" };
	struct run_result r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[64];

		cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--cpu", bad[i], "x.pt", NULL), 0);
		cr_expect_eq(r.status, 2, "--cpu '%s': %s", bad[i], r.err);
		snprintf(want, sizeof(want), "--cpu '%s': give family/model[/stepping]", bad[i]);
		cr_expect(strstr(r.err, want), "%s in %s", want, r.err);
		cr_expect_str_empty(r.out);
		run_free(&r);
	}
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--cpu=6/85", "x.pevent", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--cpu applies to a .pt trace"), "%s", r.err);
	run_free(&r);
}

/* ptdump's time options: bad values and combinations refused by name, exit 2. */
Test(dump_input, bad_time_options_are_refused_by_name)
{
	static const struct { const char *argv[4]; const char *says; } bad[] = {
		{ { "--mtc-freq", "16" }, "--mtc-freq '16': give a number from 0 to 15" },
		{ { "--mtc-freq", "x" }, "--mtc-freq 'x': give a number from 0 to 15" },
		{ { "--nom-freq", "256" }, "--nom-freq '256': give a number from 0 to 255" },
		{ { "--nom-freq", "-1" }, "--nom-freq '-1': give a number from 0 to 255" },
		{ { "--nom-freq", "" }, "--nom-freq '': give a number from 0 to 255" },
		{ { "--cpuid-0x15.eax", "4294967296" },
		  "--cpuid-0x15.eax '4294967296': give a number from 0 to 4294967295" },
		{ { "--cpuid-0x15.ebx", "1x" }, "--cpuid-0x15.ebx '1x': give a number" },
		{ { "--time", "--tcal" }, "--time and --tcal share one column" },
		{ { "--time-delta" }, "--time-delta changes the time column: give --time or --tcal" },
		{ { "--no-wall-clock" }, "--no-wall-clock changes the time column" },
		{ { "--keep-tcal-on-ovf" }, "--keep-tcal-on-ovf changes the time column" },
	};
	struct run_result r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *a[4] = { bad[i].argv[0], bad[i].argv[1], bad[i].argv[2], "x.pt" };

		/* The arguments up to the first NULL, then the file. */
		for (int k = 0; k < 3; k++)
			if (!a[k]) {
				a[k] = "x.pt";
				a[k + 1] = NULL;
				break;
			}
		cr_assert_eq(run_ptcollect(NULL, &r, "dump", a[0], a[1], a[2], a[3], NULL), 0);
		cr_expect_eq(r.status, 2, "%s: %s", bad[i].says, r.err);
		cr_expect(strstr(r.err, bad[i].says), "%s in %s", bad[i].says, r.err);
		cr_expect_str_empty(r.out);
		run_free(&r);
	}
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--time", "x.pevent", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--time applies to a .pt trace"), "%s", r.err);
	run_free(&r);
}

/* --time: libipt's TSC estimate after the TSC; --time-delta: its change. */
Test(dump, time_columns_follow_the_tsc)
{
	char *dir = temp_dir("ptc-dump"), *pt = temp_path(dir, "t.pt");
	uint8_t buf[256];
	size_t len = small_trace(buf, sizeof(buf), false);
	struct run_result r;
	FILE *f = fopen(pt, "w");

	cr_assert(f && fwrite(buf, 1, len, f) == len && !fclose(f));
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--time", pt, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "  tsc        2fa1088fac05e2            tsc  002fa1088fac05e2\n"),
		  "%s", r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--time", "--time-delta", "--no-tcal", pt,
				   NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "tsc  +2fa1088fac05e2\n"), "%s", r.out);
	run_free(&r);
	unlink(pt);
	free(pt);
	temp_dir_remove(dir);
}

/* ptdump's sideband options: bad values and combinations refused by name, exit 2. */
Test(dump_input, bad_sideband_options_are_refused_by_name)
{
	static const struct { const char *argv[3]; const char *says; } bad[] = {
		{ { "--pevent:time-mult", "0" }, "--pevent:time-mult '0': give a number from 1" },
		{ { "--pevent:time-shift", "64" }, "--pevent:time-shift '64': give a number from 0 to 63" },
		{ { "--pevent:time-zero", "-1" }, "--pevent:time-zero '-1': give a number" },
		{ { "--pevent:sample-type", "x" }, "--pevent:sample-type 'x': give a number" },
		{ { "--pevent:tsc-offset", "" }, "--pevent:tsc-offset '': give a number" },
		{ { "--pevent:primary", "/nonexistent/x.pevent" }, "/nonexistent/x.pevent" },
		{ { "--sb:verbose" }, "unknown option '--sb:verbose'" },
	};
	char *dir = temp_dir("ptc-dump"), *pt = temp_path(dir, "t.pt");
	uint8_t buf[256];
	size_t len = small_trace(buf, sizeof(buf), false);
	struct run_result r;
	FILE *f = fopen(pt, "w");

	cr_assert(f && fwrite(buf, 1, len, f) == len && !fclose(f));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (bad[i].argv[1])
			cr_assert_eq(run_ptcollect(NULL, &r, "dump", bad[i].argv[0], bad[i].argv[1],
						   pt, NULL), 0);
		else
			cr_assert_eq(run_ptcollect(NULL, &r, "dump", bad[i].argv[0], pt, NULL), 0);
		cr_expect_eq(r.status, 2, "%s: %s", bad[i].says, r.err);
		cr_expect(strstr(r.err, bad[i].says), "%s in %s", bad[i].says, r.err);
		cr_expect_str_empty(r.out);
		run_free(&r);
	}
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--json", "--pevent:primary", pt, pt, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "with --json dump each .pevent file by itself"), "%s", r.err);
	run_free(&r);
	unlink(pt);
	free(pt);
	temp_dir_remove(dir);
}

/* A CPU libipt knows no errata for: ptdump's line first, then the packets; exit 0. */
Test(dump, a_cpu_without_errata_is_ptdumps_line_and_the_dump_goes_on)
{
	char *dir = temp_dir("ptc-dump"), *pt = temp_path(dir, "t.pt");
	uint8_t buf[256];
	size_t len = small_trace(buf, sizeof(buf), false);
	struct run_result r;
	FILE *f = fopen(pt, "w");

	cr_assert(f && fwrite(buf, 1, len, f) == len && !fclose(f));
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--cpu", "3/2", pt, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(!strncmp(r.out, "[0: failed to determine errata: unknown cpu]\n"
			   "0000000000000000  psb\n", 64), "%s", r.out);
	cr_expect(!strstr(r.err, "decoding errors"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--cpu", "6/85/4", pt, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(!strncmp(r.out, "0000000000000000  psb\n", 22), "%s", r.out);
	run_free(&r);
	unlink(pt);
	free(pt);
	temp_dir_remove(dir);
}

SUITEWATCH(watch_10s, 10)

Test(dump_input, a_fifo_is_refused_without_waiting_for_a_writer, .init = watch_10s)
{
	char path[] = "/tmp/ptc-dump-fifo-XXXXXX";
	char *fifo;
	struct run_result r;

	cr_assert(mkdtemp(path));
	cr_assert(asprintf(&fifo, "%s/cpu0.pt", path) > 0);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", fifo, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "not a regular file (a FIFO)"), "%s", r.err);
	run_free(&r);
	unlink(fifo);
	rmdir(path);
	free(fifo);
}

Test(dump_input, empty_and_psb_less_traces_print_nothing_and_say_why_on_stderr)
{
	uint8_t zeroes[32] = { 0 };
	char *empty = temp_file(".pt", zeroes, 0);
	char *nopsb = temp_file(".pt", zeroes, sizeof(zeroes));
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "dump", empty, NULL), 0);
	cr_expect_eq(r.status, 0);
	cr_expect_str_empty(r.out);
	cr_expect(strstr(r.err, "holds no bytes"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", nopsb, NULL), 0);
	cr_expect_eq(r.status, 0, "ptdump exits 0 on a trace without PSB");
	cr_expect_str_empty(r.out);
	cr_expect(strstr(r.err, "no PSB packet") && strstr(r.err, "--no-sync"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--no-sync", nopsb, NULL), 0);
	cr_expect(strstr(r.out, "000000000000001f  pad\n"), "%s", r.out);
	run_free(&r);
	unlink(empty);
	unlink(nopsb);
	free(empty);
	free(nopsb);
}

Test(dump, decoding_errors_are_lines_exit_zero_as_ptdump_and_are_counted_on_stderr)
{
	uint8_t buf[256];
	size_t len = small_trace(buf, sizeof(buf), true);
	char *path = temp_file(".pt", buf, len), want[64];
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "dump", path, NULL), 0);
	cr_expect_eq(r.status, 0);
	snprintf(want, sizeof(want), "[%zx: error decoding packet: unknown opcode]\n", len - 1);
	cr_expect(strstr(r.out, want), "%s", r.out);
	cr_expect(strstr(r.out, "tip.pge    6: ffffffff81000000\n"), "%s", r.out);
	cr_expect(strstr(r.out, "tnt.8      !.!\n"), "%s", r.out);
	cr_expect(strstr(r.err, "1 decoding errors"), "%s", r.err);
	run_free(&r);
	unlink(path);
	free(path);
}

Test(dump_json, packets_carry_typed_payloads_and_errors_in_order)
{
	uint8_t buf[256];
	size_t len = small_trace(buf, sizeof(buf), true);
	char *path = temp_file(".pt", buf, len);
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--json", path, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"type\": \"tip.pge\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"compression\": \"full\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"ip\": \"0xffffffff81000000\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"tsc\": \"0x2fa1088fac05e2\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"bits\": 3") && strstr(r.out, "\"tnt\": \"!.!\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"error\": \"unknown opcode\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"context\": \"error decoding packet\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"count\": 5") && strstr(r.out, "\"errors\": 1"), "%s", r.out);
	run_free(&r);
	unlink(path);
	free(path);
}

Test(dump_json, pevent_records_carry_typed_fields_and_their_sample)
{
	uint8_t buf[256] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_ITRACE_START, .size = 48 };
	uint32_t ids[2] = { 4242, 4243 };
	uint64_t time = 123456789012345ull;
	char *path;
	struct run_result r;

	memcpy(buf, &h, 8);
	memcpy(buf + 8, ids, 8);
	memcpy(buf + 16, ids, 8);
	memcpy(buf + 24, &time, 8);
	/* TIME_CONV, stepped over */
	h = (struct perf_event_header){ .type = 79, .size = 16 };
	memcpy(buf + 48, &h, 8);
	h = (struct perf_event_header){ .type = 100, .size = 12 };	/* no name, odd size */
	memcpy(buf + 64, &h, 8);
	path = temp_file(".pevent", buf, 76);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--json", path, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"type\": \"ITRACE_START\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"pid\": 4242"), "%s", r.out);
	cr_expect(strstr(r.out, "\"time\": \"123456789012345\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"type\": \"TIME_CONV\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"read_by_libipt\": false"), "%s", r.out);
	cr_expect(strstr(r.out, "\"type\": 100"), "%s", r.out);
	cr_expect(strstr(r.out, "\"count\": 3"), "%s", r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", path, NULL), 0);
	cr_expect(strstr(r.out, "0000000000000030  PERF_RECORD_TIME_CONV (4f, 0)  { }\n"), "%s",
		  r.out);
	cr_expect(strstr(r.out, "0000000000000040  UNKNOWN (64, 0)  { }\n"), "%s", r.out);
	run_free(&r);
	unlink(path);
	free(path);
}

/*
 * Issue 22 item 9: a newline in a quoted name is shown as \n, so a file name cannot forge
 * a line of ptcollect's ("ptcollect: hint: all fine"); the message names it, exit 2.
 */
Test(dump_input, item9_a_newline_in_a_quoted_name_starts_no_line)
{
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "/x\nptcollect: hint: all fine.pt", NULL), 0);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect_null(strstr(r.err, "\nptcollect: hint: all fine"), "%s", r.err);
	cr_expect(strstr(r.err, "ptcollect: dump: /x\\nptcollect: hint: all fine.pt: "), "%s", r.err);
	run_free(&r);
}
