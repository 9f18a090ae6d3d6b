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

#include "oracle.h"
#include "run.h"

struct filter_case {
	char fixture[16];
	char event[32];
	char filter[256];	/* {PIE} {NOPIE} ... {LIBC}: paths, see expand() */
};

static struct filter_case cases[] = {
	/* a PIE and a non-PIE executable */
	{ "skylake", "intel_pt//u", "filter ft_global @ {PIE}" },
	{ "skylake", "intel_pt//u", "filter ft_global @ {NOPIE}" },
	/* a static function */
	{ "skylake", "intel_pt//u", "filter ft_static @ {PIE}" },
	/* a function of the system's libc */
	{ "skylake", "intel_pt//u", "filter malloc @ {LIBC}" },
	/* a binary stripped to .dynsym, a static one, one with a debuglink'ed debug file */
	{ "skylake", "intel_pt//u", "filter ft_global @ {DYN}" },
	{ "skylake", "intel_pt//u", "filter ft_static @ {STATIC}" },
	{ "skylake", "intel_pt//u", "filter printf @ {STATIC}" },
	{ "skylake", "intel_pt//u", "filter ft_static @ {DEBUG}" },
	/* C++: perf names functions demangled, overloads told apart by their parameters */
	{ "skylake", "intel_pt//u", "filter ft::scale(long) @ {CXX}" },
	{ "skylake", "intel_pt//u", "filter ft::scale(int) /ft::scale(long) @ {CXX}" },
	/* the last function, of size 0 in the ELF file: perf runs it to the end of its page */
	{ "skylake", "intel_pt//u", "filter _fini @ {PIE}" },
	{ "skylake", "intel_pt//u", "filter _init @ {NOPIE}" },
	/* the whole object, and the whole kernel */
	{ "skylake", "intel_pt//k", "filter *" },
	{ "skylake", "intel_pt//u", "filter * @ {PIE}" },
	/* SYM/SIZE and SYM/ENDSYM */
	{ "skylake", "intel_pt//u", "filter ft_global /0x10 @ {PIE}" },
	/* perf reads a size of 0 after a symbol as "the symbol's size" */
	{ "skylake", "intel_pt//u", "filter ft_global /0 @ {PIE}" },
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

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (strstr(info->dlpi_name, "/libc.so")) {
		snprintf(data, 4096, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

/* Test programs are built by the Makefile as filtertarget{,-nopie,-two,-dyn,...}. */
static void expand(const char *in, char *out, size_t len)
{
	char libc[4096] = "";
	size_t o = 0;

	dl_iterate_phdr(find_libc, libc);
	cr_assert(libc[0], "this test program is not linked with a libc.so");
	while (*in && o + 1 < len) {
		const char *keys[] = { "{PIE}", "{NOPIE}", "{TWO}", "{DYN}", "{STATIC}", "{DEBUG}",
				       "{CXX}", "{LIBC}" };
		const char *names[] = { "filtertarget", "filtertarget-nopie", "filtertarget-two",
					"filtertarget-dyn", "filtertarget-static",
					"filtertarget-debug", "filtertarget-cxx", NULL };
		bool done = false;

		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && !done; k++) {
			size_t kl = strlen(keys[k]);

			if (strncmp(in, keys[k], kl))
				continue;
			char *p = names[k] ? run_testprog(names[k]) : strdup(libc);

			o += snprintf(out + o, len - o, "%s", p);
			free(p);
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
	char *root = oracle_fixture(c->fixture);
	struct oracle_attr perf, ours;
	char filter[2048];

	expand(c->filter, filter, sizeof(filter));
	cr_assert_eq(oracle_perf(root, c->event, filter, &perf), 0, "perf could not be run");
	cr_assert(perf.has_filter, "'%s': perf printed no address filter:\n%s", filter, perf.log);
	cr_assert_eq(oracle_ptcollect(root, c->event, filter, &ours), 0);
	cr_assert(ours.has_filter, "'%s': ptcollect gave no filter (exit %d):\n%s", filter,
		  ours.status, ours.log);
	cr_expect_str_eq(ours.filter, perf.filter, "'%s':\n  ptcollect %s\n  perf      %s",
			 filter, ours.filter, perf.filter);
	free(root);
}
