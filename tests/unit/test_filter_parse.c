// SPDX-License-Identifier: MIT
/* filter and symbols as plain functions: grammar, kallsyms rules, ELF lookups. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"
#include "symbols.h"

static const struct filter_opts kopts_base = {
	.kernel = true, .task_target = true, .nr_addr_filters = 4, .num_address_ranges = 4,
};

/* A kallsyms file with the given text; the path is malloc'd. */
static char *kallsyms(const char *text)
{
	char *p = strdup("/tmp/ptc-unit-kallsyms-XXXXXX");
	int fd = mkstemp(p);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return p;
}

static const char ks_text[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 t k_dup\n"
	"ffffffff81000180 T k_dup\n"
	"ffffffff81000200 t k_func\n"
	"ffffffff81000200 t k_alias\n"
	"ffffffff81000240 d k_data\n"
	"ffffffff81001234 W k_weak\n"
	"ffffffff81002000 T k_last\n";

static void build(const char *spec, const char *want)
{
	struct filter_opts o = kopts_base;
	char *ks = kallsyms(ks_text), *out = NULL, err[2048] = "";

	o.kallsyms = ks;
	cr_assert_eq(filter_build(spec, &o, &out, err, sizeof(err)), 0, "'%s': %s", spec, err);
	cr_expect_str_eq(out, want, "'%s'", spec);
	free(out);
	unlink(ks);
	free(ks);
}

static void refuse(const char *spec, const char *says)
{
	struct filter_opts o = kopts_base;
	char *ks = kallsyms(ks_text), *out = NULL, err[2048] = "";

	o.kallsyms = ks;
	cr_assert_eq(filter_build(spec, &o, &out, err, sizeof(err)), -EINVAL, "'%s'", spec);
	cr_expect_null(out);
	cr_expect(strstr(err, says), "'%s': '%s' lacks '%s'", spec, err, says);
	unlink(ks);
	free(ks);
}

Test(filter_unit, filter_tracestop_becomes_ranged_stop)
{
	build("tracestop k_func", "stop 0xffffffff81000200/0x40");
}

Test(filter_unit, kernel_size_runs_to_the_next_line_of_kallsyms_even_past_an_alias)
{
	/* k_func's next line has the same address: perf looks one line further. */
	build("filter k_func", "filter 0xffffffff81000200/0x40");
}

Test(filter_unit, kernel_selectors_pick_the_nth_and_the_global)
{
	build("filter k_dup #1", "filter 0xffffffff81000100/0x80");
	build("filter k_dup #2", "filter 0xffffffff81000180/0x80");
	build("filter k_dup #g", "filter 0xffffffff81000180/0x80");
	build("filter k_dup #G", "filter 0xffffffff81000180/0x80");
	build("filter k_dup #0", "filter 0xffffffff81000180/0x80");
}

Test(filter_unit, kernel_whole_is_first_function_to_a_page_past_the_last)
{
	build("filter *", "filter 0xffffffff81000000/0x3000");
}

Test(filter_unit, weak_kernel_symbols_are_functions)
{
	build("filter k_weak /16", "filter 0xffffffff81001234/0x10");
}

Test(filter_unit, start_to_end_symbol_covers_the_end_symbol)
{
	build("filter k_dup #1 / k_func", "filter 0xffffffff81000100/0x140");
}

Test(filter_unit, numbers_pass_through_and_filters_join_with_a_comma)
{
	build("filter 0x10/0x20 stop 32/8,tracestop 0xffffffff81000000 / 4096",
	      "filter 0x10/0x20,stop 0x20/0x8,stop 0xffffffff81000000/0x1000");
}

Test(filter_unit, kernel_refusals_name_the_symbol)
{
	refuse("filter k_dup", "'k_dup #1'");
	refuse("filter k_data", "no function 'k_data'");
	refuse("filter k_last", "size of 'k_last' is unknown");
	refuse("filter k_func / k_dup #1", "comes before the start");
	refuse("filter k_fucn", "did you mean 'k_func'");
}

Test(filter_unit, parse_reports_positions)
{
	struct filter_list l;
	char err[1024];

	cr_assert_eq(filter_parse("filter a #2 / b #g @ /x/y , stop 4", &l, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(l.nr, 2);
	cr_expect_str_eq(l.items[0].start_sym, "a");
	cr_expect_eq(l.items[0].start_idx, 2);
	cr_expect_str_eq(l.items[0].end_sym, "b");
	cr_expect_eq(l.items[0].end_idx, 0);
	cr_expect_str_eq(l.items[0].file, "/x/y");
	cr_expect_eq(l.items[1].pos, 28);
	cr_expect_eq(l.items[1].start, 4);
	cr_expect(!l.items[1].range);
	filter_list_free(&l);
	cr_expect_eq(filter_parse("filter a @ 1file", &l, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "a file name cannot start with a digit (write ./NAME) at "
			 "character 12"), "%s", err);
}

Test(filter_unit, ranges_are_limited_by_the_smaller_of_the_two_numbers)
{
	struct filter_opts o = kopts_base;
	char *out = NULL, err[1024];

	o.nr_addr_filters = 4;
	o.num_address_ranges = 1;
	cr_assert_eq(filter_build("filter 1/2 filter 3/4", &o, &out, err, sizeof(err)),
		     -EINVAL);
	cr_expect(strstr(err, "2 ranges, but this PMU has 1 (nr_addr_filters 4, "
			 "caps/num_address_ranges 1)"), "%s", err);
	o.nr_addr_filters = 0;
	cr_assert_eq(filter_build("filter 1/2", &o, &out, err, sizeof(err)), -EINVAL);
	cr_expect(strstr(err, "no address filters"), "%s", err);
}

static char *prog(const char *name)
{
	char *p;

	cr_assert_eq(asprintf(&p, "%s/%s", getenv("PTCOLLECT_TESTPROGS") ?
			      getenv("PTCOLLECT_TESTPROGS") : "build/tests/progs", name) > 0, 1);
	if (access(p, R_OK))
		cr_skip_test("%s is not built (make check builds it)", p);
	return p;
}

static const struct symbols_sym *find(const struct symbols *s, const char *name)
{
	for (int i = 0; i < s->nr; i++)
		if (!strcmp(s->syms[i].name, name))
			return &s->syms[i];
	return NULL;
}

Test(symbols_unit, non_pie_offsets_come_through_the_load_segment)
{
	char *p = prog("filtertarget-nopie"), err[512];
	const struct symbols_sym *g;
	struct symbols s;

	cr_assert_eq(symbols_load(p, &s, err, sizeof(err)), 0, "%s", err);
	g = find(&s, "ft_global");
	cr_assert_not_null(g);
	cr_expect_geq(g->addr, 0x400000, "non-PIE text is linked high: 0x%lx", (long)g->addr);
	cr_expect_lt(g->offset, s.file_size);
	cr_expect_eq(g->addr - g->offset, 0x400000);
	cr_expect_str_eq(s.table, ".symtab");
	symbols_free(&s);
	free(p);
}

Test(symbols_unit, static_binary_has_its_own_and_libc_functions)
{
	char *p = prog("filtertarget-static"), err[512];
	struct symbols s;

	cr_assert_eq(symbols_load(p, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_not_null(find(&s, "ft_static"));
	cr_expect_not_null(find(&s, "printf"));
	cr_expect_null(find(&s, "not_a_function_here"));
	symbols_free(&s);
	free(p);
}

Test(symbols_unit, stripped_file_reads_its_debug_file_by_build_id)
{
	char *p = prog("filtertarget-debug"), *cmd, err[512], root[] = "/tmp/ptc-dbg-XXXXXX";
	struct symbols s;
	FILE *f;
	char id[128] = "";

	cr_assert_not_null(mkdtemp(root));
	/* Only the build-id path is offered: the debuglink'ed file is moved away. */
	cr_assert_eq(asprintf(&cmd, "cp %s %s/prog && readelf -n %s | "
			      "sed -n 's/.*Build ID: //p'", p, root, p) > 0, 1);
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(id, sizeof(id), f));
	pclose(f);
	free(cmd);
	id[strcspn(id, "\n")] = '\0';
	cr_assert_gt(strlen(id), 2);
	cr_assert_eq(asprintf(&cmd, "mkdir -p %s/.build-id/%.2s && cp %s.debug "
			      "%s/.build-id/%.2s/%s.debug", root, id, p, root, id, id + 2) > 0, 1);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	setenv("PTCOLLECT_DEBUG_ROOT", root, 1);
	cr_assert_eq(asprintf(&cmd, "%s/prog", root) > 0, 1);
	cr_assert_eq(symbols_load(cmd, &s, err, sizeof(err)), 0, "%s", err);
	cr_expect_not_null(find(&s, "ft_static"), "ft_static comes from the debug file");
	cr_expect(strstr(s.symfile, "/.build-id/"), "symbols from %s", s.symfile);
	symbols_free(&s);
	free(cmd);
	cr_assert_eq(asprintf(&cmd, "rm -rf %s", root) > 0, 1);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	unsetenv("PTCOLLECT_DEBUG_ROOT");
	free(p);
}

Test(symbols_unit, bad_files_are_named_with_the_reason)
{
	struct symbols s;
	char err[512];

	cr_expect_eq(symbols_load("/nonexistent/x", &s, err, sizeof(err)), -ENOENT);
	cr_expect(strstr(err, "/nonexistent/x: No such file"), "%s", err);
	cr_expect_eq(symbols_load("/etc/hostname", &s, err, sizeof(err)), -ENOEXEC);
	cr_expect(strstr(err, "not an ELF file"), "%s", err);
	cr_expect_eq(symbols_load("/etc", &s, err, sizeof(err)), -ENOEXEC);
	cr_expect(strstr(err, "not a regular file"), "%s", err);
}
