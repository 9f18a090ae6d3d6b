// SPDX-License-Identifier: MIT
/*
 * --filter and `symbols` bad input: exit 2, a message that names the input and
 * says what to do, nothing on stdout, nothing created.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oracle.h"
#include "run.h"

struct filter_bad {
	char event[24];
	char filter[160];	/* {PIE} {TWO} {SRC} {NONE}: paths */
	bool all_cpus;		/* -a instead of a command */
	char says[4][96];
};

static struct filter_bad bad[] = {
	/* a missing file, a file that is not ELF */
	{ "intel_pt//u", "filter main @ {NONE}", false,
	  { "/nonexistent/prog", "No such file or directory" } },
	{ "intel_pt//u", "filter main @ {SRC}", false, { "filtertarget.c", "not an ELF file" } },
	/* an unknown symbol, with the nearest names */
	{ "intel_pt//u", "filter ft_glbal @ {PIE}", false,
	  { "no function 'ft_glbal'", "did you mean 'ft_global'" } },
	{ "intel_pt//u", "filter ft_global/0x10 @ {PIE}", false,
	  { "no function 'ft_global/0x10'", "ends only at a space", "'ft_global /0x10'" } },
	{ "intel_pt//u", "filter ft_dup #3 @ {TWO}", false,
	  { "fewer than 3 functions named 'ft_dup'" } },
	{ "intel_pt//u", "filter ft_dup #g @ {TWO}", false, { "no global function 'ft_dup #g'" } },
	/* an ambiguous symbol: every candidate with its offset and selector */
	{ "intel_pt//u", "filter ft_dup @ {TWO}", false,
	  { "2 functions are named 'ft_dup'", "'ft_dup #1'  offset 0x", "'ft_dup #2'  offset 0x",
	    "choose one with 'ft_dup #N'" } },
	/* a zero-size symbol (the last of kallsyms has no known size) */
	{ "intel_pt//k", "filter zz_last", false,
	  { "size of 'zz_last' is unknown", "'zz_last/SIZE'" } },
	/* a size that runs past the segment */
	{ "intel_pt//u", "filter ft_global /0x1000000 @ {PIE}", false,
	  { "runs past the end of its segment", "use a smaller size" } },
	/* too many ranges: both numbers named */
	{ "intel_pt//u", "filter ft_global @ {PIE}, filter ft_last @ {PIE}, filter main @ {PIE}",
	  false, { "3 ranges", "nr_addr_filters 2", "caps/num_address_ranges 2", "at most 2" } },
	/* malformed syntax, with where it broke */
	{ "intel_pt//u", "fliter ft_global @ {PIE}", false,
	  { "unknown action 'fliter'", "at character 1", "filter|stop|tracestop" } },
	{ "intel_pt//u", "filter ft_global @", false,
	  { "a file name is missing at character 19", "\n                      ^" } },
	{ "intel_pt//u", "filter ft_global #x @ {PIE}", false,
	  { "expected a number or 'g' after '#' at character 19" } },
	{ "intel_pt//u", "filter 0x99999999999999999999/4 @ {PIE}", false,
	  { "not a number that fits 64 bits", "at character 8" } },
	{ "intel_pt//u", " , ", false, { "the filter is empty" } },
	/* what the intel_pt driver refuses, and what to use instead */
	{ "intel_pt//u", "start ft_global @ {PIE}", false,
	  { "refuses 'start'", "use 'filter START[/SIZE]'" } },
	{ "intel_pt//u", "stop ft_global @ {PIE}", false,
	  { "single address", "use 'tracestop START'" } },
	{ "intel_pt//u", "filter 0x1000/0 @ {PIE}", false, { "size 0", "START/SIZE" } },
	/* a kernel filter on an event that does not trace the kernel */
	{ "intel_pt//u", "filter schedule", false,
	  { "kernel filter", "does not trace the kernel", "@ FILE" } },
	/* a file filter needs a task target */
	{ "intel_pt//u", "filter ft_global @ {PIE}", true, { "needs a process", "-a alone" } },
	/* the kernel's "a function" rule: data symbols are not functions */
	{ "intel_pt//k", "filter zz_data", false, { "no function 'zz_data'" } },
	{ "intel_pt//k", "filter zz_dup", false,
	  { "2 functions are named 'zz_dup'", "'zz_dup #1'", "'zz_dup #2'", "'zz_dup #g'" } },
};

/* A kallsyms of our own: duplicate names, a data symbol, a last symbol with no size. */
static const char kallsyms_text[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 t zz_dup\n"
	"ffffffff81000180 T zz_dup\n"
	"ffffffff81000200 D zz_data\n"
	"ffffffff81000300 T zz_last\n";

static void expand(const char *in, char *out, size_t len)
{
	char *pie = run_testprog("filtertarget"), *two = run_testprog("filtertarget-two");
	char *src = run_srcpath("tests/progs/filtertarget.c");
	const char *keys[] = { "{PIE}", "{TWO}", "{SRC}", "{NONE}" };
	const char *vals[] = { pie, two, src, "/nonexistent/prog" };
	size_t o = 0;

	while (*in && o + 1 < len) {
		size_t k;

		for (k = 0; k < 4; k++)
			if (!strncmp(in, keys[k], strlen(keys[k])))
				break;
		if (k < 4) {
			o += snprintf(out + o, len - o, "%s", vals[k]);
			in += strlen(keys[k]);
		} else {
			out[o++] = *in++;
		}
	}
	out[o < len ? o : len - 1] = '\0';
	free(pie);
	free(two);
	free(src);
}

ParameterizedTestParameters(filter_input, bad_filter_exits_2_with_a_named_message)
{
	return cr_make_param_array(struct filter_bad, bad, sizeof(bad) / sizeof(bad[0]));
}

ParameterizedTest(struct filter_bad *c, filter_input, bad_filter_exits_2_with_a_named_message)
{
	char *root = oracle_fixture("skylake");
	char ks[] = "/tmp/ptc-kallsyms-XXXXXX", env_sysfs[4200], env_ks[64], filter[1024];
	char outdir[] = "/tmp/ptc-filter-out-XXXXXX";
	char *env[] = { env_sysfs, env_ks, NULL };
	struct run_result r;
	int fd = mkstemp(ks);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, kallsyms_text, strlen(kallsyms_text)),
		     (ssize_t)strlen(kallsyms_text));
	close(fd);
	cr_assert_not_null(mkdtemp(outdir));
	cr_assert_eq(rmdir(outdir), 0);
	snprintf(env_sysfs, sizeof(env_sysfs), "PTCOLLECT_SYSFS=%s", root);
	snprintf(env_ks, sizeof(env_ks), "PTCOLLECT_KALLSYMS=%s", ks);
	expand(c->filter, filter, sizeof(filter));
	if (c->all_cpus)
		cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-e", c->event,
					   "--filter", filter, "-o", outdir, "-a", NULL), 0);
	else
		cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-e", c->event,
					   "--filter", filter, "-o", outdir, "--", "true",
					   NULL), 0);
	cr_expect_eq(r.status, 2, "'%s': exit %d, expected 2:\n%s", filter, r.status, r.err);
	cr_expect_str_empty(r.out, "'%s': stdout should be empty:\n%s", filter,
			    r.out);
	cr_expect_neq(access(outdir, F_OK), 0, "'%s': %s was created", filter, outdir);
	cr_expect(strstr(r.err, "ptcollect: record: --filter: ") == r.err,
		  "'%s': message should start 'ptcollect: record: --filter: ':\n%s", filter, r.err);
	for (int i = 0; i < 4 && c->says[i][0]; i++)
		cr_expect(strstr(r.err, c->says[i]), "'%s': message lacks \"%s\":\n%s", filter,
			  c->says[i], r.err);
	run_free(&r);
	unlink(ks);
	free(root);
}
