// SPDX-License-Identifier: MIT
/*
 * Address filters: ptcollect's kernel filter string against the one Linux
 * perf computes ("Address filter: ..." with -vv) for the same spelling on
 * the same fixture PMU; and every class of bad filter input.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "run.h"

/* "@PIE" and friends stand for the test programs, whose paths are known at run time. */
static const struct {
	const char *tag, *prog;
} progs[] = {
	{ "@PIE", "filtertarget" }, { "@NOPIE", "filtertarget-nopie" },
	{ "@STATIC", "filtertarget-static" }, { "@DYNSYM", "filtertarget-dynsym" },
	{ "@DUP", "dupsyms" }, { "@ZERO", "zerosize" }, { "@DEBUG", "filtertarget-debug" },
	{ "@CXX", "cxx" },
};

static char *expand(const char *spec)
{
	char *out = strdup(spec);

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		char *hit;

		while ((hit = strstr(out, progs[i].tag)) &&
		       !isalnum((unsigned char)hit[strlen(progs[i].tag)])) {
			char *path = run_testprog(progs[i].prog), *n;

			cr_assert(asprintf(&n, "%.*s@ %s%s", (int)(hit - out), out, path,
					   hit + strlen(progs[i].tag)) > 0);
			free(path);
			free(out);
			out = n;
		}
	}
	return out;
}

struct fcase {
	char fixture[16];
	char event[32];
	char filter[200];
};

static struct fcase fcases[] = {
	{ "skylake", "intel_pt//u", "filter work @PIE" },
	{ "skylake", "intel_pt//u", "filter work @NOPIE" },
	{ "skylake", "intel_pt//u", "filter helper @PIE" },
	{ "skylake", "intel_pt//u", "filter work @STATIC" },
	{ "skylake", "intel_pt//u", "filter getpid @ /lib/x86_64-linux-gnu/libc.so.6" },
	{ "skylake", "intel_pt//u", "filter work @DYNSYM" },
	{ "skylake", "intel_pt//u", "filter * @PIE" },
	{ "skylake", "intel_pt//u", "filter work / 0x20 @PIE" },
	{ "skylake", "intel_pt//u", "filter work / compute @NOPIE" },
	{ "skylake", "intel_pt//u", "tracestop helper @PIE" },
	{ "skylake", "intel_pt//u", "filter work @PIE, tracestop helper @PIE" },
	{ "skylake", "intel_pt//u", "filter work @PIE tracestop compute @NOPIE" },
	{ "skylake", "intel_pt//u", "filter dup #2 @DUP" },
	{ "skylake", "intel_pt//u", "filter dup #1 / call_a @DUP" },
	{ "skylake", "intel_pt//u", "filter work #g @PIE" },
	{ "skylake", "intel_pt//u", "filter helper @DEBUG" },
	{ "skylake", "intel_pt//u", "filter 4096/compute @PIE" },
	{ "skylake", "intel_pt//", "tracestop vfs_read filter ksys_read /0x40" },
	{ "skylake", "intel_pt//u", "filter 0x1000/0x100 @PIE" },
	{ "skylake", "intel_pt//uk", "filter vfs_read" },
	{ "skylake", "intel_pt//k", "filter vfs_read / ksys_read" },
	{ "ptwrite4", "intel_pt//u",
	  "filter work @PIE, filter compute @PIE, tracestop helper @NOPIE, filter main @STATIC" },
	/* C++: perf looks functions up demangled, overloads told apart by their parameters */
	{ "skylake", "intel_pt//u", "filter ft::scale(long) @CXX" },
	{ "skylake", "intel_pt//u", "filter ft::scale(int) / ft::scale(long) @CXX" },
	/* the whole kernel, and the whole of libc */
	{ "skylake", "intel_pt//k", "filter *" },
	{ "skylake", "intel_pt//u", "filter * @ /lib/x86_64-linux-gnu/libc.so.6" },
	/* a size of 0 after a symbol means the symbol's size, in perf */
	{ "skylake", "intel_pt//u", "filter work / 0 @PIE" },
	/* an IFUNC of libc, and a ranged stop */
	{ "skylake", "intel_pt//u", "filter memcpy @ /lib/x86_64-linux-gnu/libc.so.6" },
	{ "skylake", "intel_pt//u", "stop work / 8 @PIE" },
};

ParameterizedTestParameters(filter_oracle, kernel_filter_string_equals_perfs)
{
	return cr_make_param_array(struct fcase, fcases, sizeof(fcases) / sizeof(fcases[0]));
}

ParameterizedTest(struct fcase *c, filter_oracle, kernel_filter_string_equals_perfs)
{
	char *root = oracle_fixture(c->fixture), *spec = expand(c->filter);
	struct oracle_attr perf, ours;

	cr_assert_eq(oracle_perf(root, c->event, spec, &perf), 0, "perf could not be run");
	cr_assert(perf.has_filter, "'%s': perf printed no address filter:\n%s", spec, perf.log);
	cr_assert_eq(oracle_ptcollect(root, c->event, spec, &ours), 0);
	cr_assert(ours.has_filter, "'%s': ptcollect printed no filter (exit %d):\n%s", spec,
		  ours.status, ours.log);
	cr_expect_str_eq(ours.filter, perf.filter, "'%s':\n  ptcollect %s\n  perf      %s", spec,
			 ours.filter, perf.filter);
	free(spec);
	free(root);
}

struct fbad {
	char args[4][200];	/* record arguments before "-- true" ("" ends) */
	char says[3][120];
};

static struct fbad fbad[] = {
	{ { "--filter", "filter work @ /nonexistent/prog" },
	  { "/nonexistent/prog", "No such file" } },
	{ { "--filter", "filter work @ /etc/hostname" }, { "/etc/hostname: not an ELF file" } },
	{ { "--filter", "filter wrok @PIE" }, { "no function 'wrok'", "did you mean work" } },
	{ { "--filter", "filter dup @DUP" },
	  { "'dup' is ambiguous", "dup #1   at 0x", "dup #2   at 0x" } },
	{ { "--filter", "filter zerofn @ZERO" }, { "'zerofn' has size 0", "zerofn / 0x40" } },
	{ { "--filter", "filter work / 0x10000000 @PIE" }, { "runs past the end of its segment" } },
	{ { "--filter", "filter work @PIE, filter main @PIE, filter compute @PIE" },
	  { "3 filters", "nr_addr_filters 2", "caps/num_address_ranges 2" } },
	{ { "--filter", "filter work / @PIE" }, { "the size or end symbol", "^" } },
	{ { "--filter", "filtr work @PIE" }, { "'filtr' is not an action", "\n  filtr work" } },
	{ { "--filter", "filter main #x @PIE" }, { "'#' must be followed by a number or g" } },
	{ { "--filter", "filter work/8 @PIE" }, { "put spaces around '/'" } },
	{ { "--filter", "start work @PIE" }, { "does not support 'start' filters", "tracestop" } },
	{ { "--filter", "stop work @PIE" }, { "needs a range", "tracestop" } },
	{ { "--filter", "filter 0x1000/0 @PIE" }, { "size 0" } },
	{ { "--filter", "filter vfs_read" }, { "kernel filter", "does not trace the kernel" } },
	{ { "-a", "--filter", "filter work @PIE" }, { "needs a task", "-p or -t" } },
	{ { "--filter", "" }, { "the filter is empty" } },
	/* ranges whose end lies past 2^64, on a file and on the kernel */
	{ { "--filter", "filter 0xffffffffffffffff/2 @PIE" },
	  { "0xffffffffffffffff/0x2", "past the top of the address space" } },
	{ { "-e", "intel_pt//k", "--filter", "filter 0xfffffffffffff000/0x2000" },
	  { "0xfffffffffffff000/0x2000", "wrap around" } },
};

ParameterizedTestParameters(filter_input, bad_filters_exit_two_and_say_why)
{
	return cr_make_param_array(struct fbad, fbad, sizeof(fbad) / sizeof(fbad[0]));
}

ParameterizedTest(struct fbad *c, filter_input, bad_filters_exit_two_and_say_why)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	char *argv[16], *expanded[4] = { NULL };
	struct run_result r;
	int n = 0;

	argv[n++] = (char *)run_bin();
	argv[n++] = "record";
	argv[n++] = "--dry-run";
	argv[n++] = "-o";
	argv[n++] = "/nonexistent/out";
	for (int i = 0; i < 4 && (c->args[i][0] || (i && !strcmp(c->args[i - 1], "--filter"))); i++)
		argv[n++] = expanded[i] = expand(c->args[i]);
	if (strcmp(c->args[0], "-a"))
		argv[n++] = "--", argv[n++] = "true";
	argv[n] = NULL;
	cr_assert_eq(run_argv(argv, env, &r), 0);
	cr_expect_eq(r.status, 2, "%s: exit %d, stderr:\n%s", c->args[1], r.status, r.err);
	for (int i = 0; i < 3 && c->says[i][0]; i++)
		cr_expect(strstr(r.err, c->says[i]), "'%s': stderr lacks \"%s\":\n%s", c->args[1],
			  c->says[i], r.err);
	cr_expect_str_empty(r.out);
	run_free(&r);
	for (int i = 0; i < 4; i++)
		free(expanded[i]);
}

Test(symbols_cmd, lists_functions_with_offsets_and_filters_by_glob)
{
	char *pie = run_testprog("filtertarget");
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", pie, "wor*", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, " g work\n"), "%s", r.out);
	cr_expect(!strstr(r.out, "compute"), "the glob keeps only work: %s", r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", "--json", pie, NULL), 0);
	cr_expect(strstr(r.out, "\"name\": \"helper\"") && strstr(r.out, "\"binding\": \"local\""),
		  "%s", r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", "/etc/hostname", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "not an ELF file"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "no FILE given"), "%s", r.err);
	run_free(&r);
	free(pie);
}

Test(filter_input, a_filter_at_a_segment_start_warns_about_the_kernel)
{
	struct oracle_env oe;
	char **env = oracle_fixture_env(&oe, "skylake");
	char *spec = expand("filter _init / 0x10 @PIE");
	struct run_result r;

	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--filter", spec, "-o",
				   "/nonexistent/x", "--", "true", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "warning: --filter: '_init' starts exactly where a segment") &&
		  strstr(r.err, "size-0 range"), "%s", r.err);
	run_free(&r);
	free(spec);
}
