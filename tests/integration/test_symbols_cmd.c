// SPDX-License-Identifier: MIT
/* ptcollect symbols: what it lists is what --filter resolves to; bad files exit 2. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "run.h"

/* The "filter 0xOFF/0xSIZE@..." record --dry-run computes for @spec (perf-verified elsewhere). */
static void dry_run_range(const char *spec, char *range, size_t len)
{
	char *root = oracle_fixture("skylake");
	struct oracle_attr a;

	cr_assert_eq(oracle_ptcollect(root, "intel_pt//u", spec, &a), 0);
	cr_assert(a.has_filter, "'%s': no filter:\n%s", spec, a.log);
	snprintf(range, len, "%.*s", (int)strcspn(a.filter, "@"), a.filter);
	free(root);
}

Test(symbols_cmd, lists_the_offsets_and_sizes_filter_uses_with_selectors)
{
	char *two = run_testprog("filtertarget-two"), spec[4200], want[128], row[128];
	struct run_result r;
	char *line;

	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", two, "ft_dup", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "OFFSET"), "%s", r.out);
	for (int n = 1; n <= 2; n++) {
		unsigned long long off, size;

		snprintf(spec, sizeof(spec), "filter ft_dup #%d @ %s", n, two);
		dry_run_range(spec, want, sizeof(want));
		snprintf(row, sizeof(row), "ft_dup #%d", n);
		line = strstr(r.out, row);
		cr_assert_not_null(line, "no '%s' in:\n%s", row, r.out);
		while (line > r.out && line[-1] != '\n')
			line--;
		cr_assert_eq(sscanf(line, "%llx %llx", &off, &size), 2, "%s", line);
		snprintf(row, sizeof(row), "filter 0x%llx/0x%llx", off, size);
		cr_expect_str_eq(row, want, "symbols says %s, --filter resolves %s", row, want);
	}
	cr_expect_null(strstr(r.out, "ft_global"), "the glob selects:\n%s", r.out);
	run_free(&r);
	free(two);
}

Test(symbols_cmd, json_and_names_give_the_same_functions)
{
	char *dyn = run_testprog("filtertarget-dyn");
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "--json", "symbols", dyn, "ft_*", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"table\": \".dynsym\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"name\": \"ft_global\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"bind\": \"global\""), "%s", r.out);
	cr_expect_null(strstr(r.out, "ft_static"), "a static function is not in .dynsym:\n%s",
		       r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", "--names", dyn, "ft_*", NULL), 0);
	cr_expect_str_eq(r.out, "ft_global\nft_last\n");
	run_free(&r);
	free(dyn);
}

Test(symbols_cmd, bad_files_exit_2_naming_the_file)
{
	char *src = run_srcpath("tests/progs/filtertarget.c");
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", "/nonexistent/prog", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "ptcollect: symbols: /nonexistent/prog: No such file"), "%s",
		  r.err);
	cr_expect_str_empty(r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", src, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "filtertarget.c: not an ELF file"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "missing FILE"), "%s", r.err);
	run_free(&r);
	free(src);
}
