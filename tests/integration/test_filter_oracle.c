// SPDX-License-Identifier: MIT
/*
 * The kernel filter string, ptcollect against Linux perf: the same --filter on
 * the same fixture PMU and the same binaries must give the same string (offsets,
 * sizes, keywords, real paths, separators).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oracle.h"
#include "run.h"

struct filter_case {
	char fixture[16];
	char event[32];
	char filter[256];	/* {PIE} {NOPIE} {TWO} {DYN} {LIBC} are replaced by paths */
};

static struct filter_case cases[] = {
	/* a PIE and a non-PIE executable */
	{ "skylake", "intel_pt//u", "filter ft_global @ {PIE}" },
	{ "skylake", "intel_pt//u", "filter ft_global @ {NOPIE}" },
	/* a static function */
	{ "skylake", "intel_pt//u", "filter ft_static @ {PIE}" },
	/* a function of the system's libc */
	{ "skylake", "intel_pt//u", "filter malloc @ {LIBC}" },
	/* a binary stripped to .dynsym */
	{ "skylake", "intel_pt//u", "filter ft_global @ {DYN}" },
	/* the whole object */
	{ "skylake", "intel_pt//u", "filter * @ {PIE}" },
	/* SYM/SIZE and SYM/ENDSYM */
	{ "skylake", "intel_pt//u", "filter ft_global /0x10 @ {PIE}" },
	{ "skylake", "intel_pt//u", "filter ft_static /ft_last @ {NOPIE}" },
	/* tracestop is sent as a ranged stop */
	{ "skylake", "intel_pt//u", "tracestop ft_last @ {PIE}" },
	/* two filters in one string, comma and space separated */
	{ "skylake", "intel_pt//u", "filter ft_static @ {NOPIE}, tracestop ft_last @ {PIE}" },
	{ "skylake", "intel_pt//u", "filter ft_static @ {NOPIE} tracestop ft_last @ {NOPIE}" },
	/* four ranges on a PMU that has four */
	{ "ptwrite4", "intel_pt//u", "filter ft_global @ {PIE},filter ft_static @ {NOPIE},"
				     "tracestop ft_last @ {PIE},filter malloc @ {LIBC}" },
	/* selectors for duplicate names, and the global one */
	{ "skylake", "intel_pt//u", "filter ft_dup #2 @ {TWO}" },
	{ "skylake", "intel_pt//u", "filter ft_dup #1 /ft_other_unit @ {TWO}" },
	{ "skylake", "intel_pt//u", "filter ft_global #g @ {PIE}" },
	/* addresses as numbers */
	{ "skylake", "intel_pt//u", "filter 0x1000/0x20 @ {NOPIE}" },
	{ "skylake", "intel_pt//u", "filter 4096/ft_last @ {PIE}" },
	/* a kernel filter, from /proc/kallsyms */
	{ "skylake", "intel_pt//k", "filter schedule" },
	{ "skylake", "intel_pt//", "tracestop do_exit filter schedule /0x40" },
};

/* Directory holding the test binaries, built once (concurrent tests race to rename). */
static char *targets_dir(void)
{
	char *src = run_srcpath("tests/progs/filtertarget.c");
	char *src2 = run_srcpath("tests/progs-extra/filtertarget2.c");
	char *pie = run_testprog("filtertarget");
	char *dir, tmp[] = "/tmp/ptc-filtertargets-XXXXXX", *cmd;
	struct stat st, st2;

	cr_assert_eq(stat(src, &st), 0);
	cr_assert_eq(stat(src2, &st2), 0);
	cr_assert_eq(asprintf(&dir, "/tmp/ptc-filtertargets-%ld-%ld", (long)st.st_mtime,
			      (long)st2.st_mtime) > 0, 1);
	if (access(dir, F_OK)) {
		cr_assert_not_null(mkdtemp(tmp));
		cr_assert_eq(asprintf(&cmd,
			"cp %s %s/pie && cc -O0 -g -no-pie -o %s/nopie %s && "
			"cc -O0 -g -DFT_TWO_UNITS -o %s/two %s %s && "
			"cc -O0 -g -rdynamic -o %s/dyn.full %s && strip -o %s/dyn %s/dyn.full",
			pie, tmp, tmp, src, tmp, src, src2, tmp, src, tmp, tmp) > 0, 1);
		cr_assert_eq(system(cmd), 0, "could not build the test binaries: %s", cmd);
		free(cmd);
		if (rename(tmp, dir)) {
			cr_assert_eq(asprintf(&cmd, "rm -rf %s", tmp) > 0, 1);
			cr_assert_eq(system(cmd), 0);
			free(cmd);
		}
	}
	free(src);
	free(src2);
	free(pie);
	return dir;
}

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (strstr(info->dlpi_name, "/libc.so")) {
		snprintf(data, 4096, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static void expand(const char *in, char *out, size_t len, const char *dir)
{
	char libc[4096] = "";
	size_t o = 0;

	dl_iterate_phdr(find_libc, libc);
	cr_assert(libc[0], "this test program is not linked with a libc.so");
	while (*in && o + 1 < len) {
		const char *keys[] = { "{PIE}", "{NOPIE}", "{TWO}", "{DYN}", "{LIBC}" };
		const char *names[] = { "pie", "nopie", "two", "dyn", NULL };
		bool done = false;

		for (size_t k = 0; k < 5 && !done; k++) {
			size_t kl = strlen(keys[k]);

			if (strncmp(in, keys[k], kl))
				continue;
			if (names[k])
				o += snprintf(out + o, len - o, "%s/%s", dir, names[k]);
			else
				o += snprintf(out + o, len - o, "%s", libc);
			in += kl;
			done = true;
		}
		if (!done)
			out[o++] = *in++;
	}
	out[o < len ? o : len - 1] = '\0';
}

ParameterizedTestParameters(filter_oracle, filter_string_equals_perfs)
{
	return cr_make_param_array(struct filter_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct filter_case *c, filter_oracle, filter_string_equals_perfs,
		  .timeout = 60)
{
	char *root = oracle_fixture(c->fixture), *dir = targets_dir();
	struct oracle_attr perf, ours;
	char filter[2048];

	expand(c->filter, filter, sizeof(filter), dir);
	cr_assert_eq(oracle_perf(root, c->event, filter, &perf), 0, "perf could not be run");
	cr_assert(perf.has_filter, "'%s': perf printed no address filter:\n%s", filter, perf.log);
	cr_assert_eq(oracle_ptcollect(root, c->event, filter, &ours), 0);
	cr_assert(ours.has_filter, "'%s': ptcollect gave no filter (exit %d):\n%s", filter,
		  ours.status, ours.log);
	cr_expect_str_eq(ours.filter, perf.filter, "'%s':\n  ptcollect %s\n  perf      %s",
			 filter, ours.filter, perf.filter);
	free(root);
	free(dir);
}
