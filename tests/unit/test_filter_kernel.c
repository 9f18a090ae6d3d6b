// SPDX-License-Identifier: MIT
/*
 * Kernel filters on a kallsyms of our own: perf's find_kern_sym rules (size to
 * the next line, selectors, weak symbols, '*' to a page past the last
 * function) and its refusals, without depending on the running kernel.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"

static const char ks_text[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 t k_dup\n"
	"ffffffff81000180 T k_dup\n"
	"ffffffff81000200 t k_func\n"
	"ffffffff81000200 t k_alias\n"
	"ffffffff81000240 d k_data\n"
	"ffffffff81001234 W k_weak\n"
	"ffffffff81002000 T k_last\n";

static int build_text(const char *text, const char *spec, char **out, struct error *e)
{
	char ks[] = "/tmp/ptc-unit-kallsyms-XXXXXX";
	struct filter_opts o = {
		.traces_kernel = true, .task_target = true, .nr_addr_filters = 4,
		.num_address_ranges = 4, .kallsyms = ks,
	};
	int fd = mkstemp(ks), ret;

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	*out = NULL;
	ret = filter_build(spec, &o, out, e, NULL);
	unlink(ks);
	return ret;
}

static int build_on(const char *spec, char **out, struct error *e)
{
	return build_text(ks_text, spec, out, e);
}

static void build(const char *spec, const char *want)
{
	struct error e = { 0 };
	char *out;

	cr_assert_eq(build_on(spec, &out, &e), 0, "'%s': %s", spec, e.why);
	cr_expect_str_eq(out, want, "'%s'", spec);
	free(out);
}

static void refuse(const char *spec, const char *says)
{
	struct error e = { 0 };
	char *out;

	cr_assert_eq(build_on(spec, &out, &e), -EINVAL, "'%s' was accepted", spec);
	cr_expect_null(out);
	cr_expect(e.usage, "'%s': a refusal is a usage error", spec);
	cr_expect(strstr(e.why, says), "'%s': '%s' lacks '%s'", spec, e.why, says);
}

Test(filter_kernel, tracestop_becomes_ranged_stop)
{
	build("tracestop k_func", "stop 0xffffffff81000200/0x40");
}

Test(filter_kernel, size_runs_to_the_next_line_of_kallsyms_even_past_an_alias)
{
	/* k_func's next line has the same address: perf looks one line further. */
	build("filter k_func", "filter 0xffffffff81000200/0x40");
}

Test(filter_kernel, selectors_pick_the_nth_and_the_global)
{
	build("filter k_dup #1", "filter 0xffffffff81000100/0x80");
	build("filter k_dup #2", "filter 0xffffffff81000180/0x80");
	build("filter k_dup #g", "filter 0xffffffff81000180/0x80");
	build("filter k_dup #G", "filter 0xffffffff81000180/0x80");
	build("filter k_dup #0", "filter 0xffffffff81000180/0x80");
}

Test(filter_kernel, whole_kernel_is_first_function_to_a_page_past_the_last)
{
	build("filter *", "filter 0xffffffff81000000/0x3000");
}

Test(filter_kernel, weak_symbols_are_functions)
{
	build("filter k_weak /16", "filter 0xffffffff81001234/0x10");
}

Test(filter_kernel, start_to_end_symbol_covers_the_end_symbol)
{
	build("filter k_dup #1 / k_func", "filter 0xffffffff81000100/0x140");
}

Test(filter_kernel, numbers_pass_through_and_filters_join_with_a_comma)
{
	build("filter 0x10/0x20 tracestop 32/8,tracestop 0xffffffff81000000 / 4096",
	      "filter 0x10/0x20,stop 0x20/0x8,stop 0xffffffff81000000/0x1000");
}

Test(filter_kernel, refusals_name_the_symbol)
{
	refuse("filter k_dup", "k_dup #2   at 0xffffffff81000180 (global)");
	refuse("filter k_data", "k_data");
	refuse("filter k_last", "k_last");
	refuse("filter k_func / k_dup #1", "k_dup");
	refuse("filter k_dup #3", "k_dup");
}

Test(filter_kernel, the_last_line_needs_a_size_only_when_none_is_given)
{
	refuse("filter k_last", "cannot tell the size of kernel function 'k_last'");
	build("filter k_last / 16", "filter 0xffffffff81002000/0x10");
}

Test(filter_kernel, a_modules_function_is_not_the_kernels_as_in_perf)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "ffffffff81000100 T k_func\n"
				   "ffffffff81000200 T k_next\n"
				   "ffffffffc0001000 t k_func\t[ext4]\n"
				   "ffffffffc0001100 t m_only\t[ext4]\n"
				   "ffffffffc0001200 t m_end\t[ext4]\n";
	struct error e = { 0 };
	char *out;

	cr_assert_eq(build_text(text, "filter k_func", &out, &e), 0, "%s", e.why);
	cr_expect_str_eq(out, "filter 0xffffffff81000100/0x100", "not ambiguous with [ext4]'s");
	free(out);
	cr_assert_eq(build_text(text, "filter m_only", &out, &e), -EINVAL);
	cr_expect(strstr(e.why, "no kernel function 'm_only'") &&
		  strstr(e.why, "it is in module [ext4]"), "%s", e.why);
}

Test(filter_kernel, numeric_ranges_that_wrap_past_2_64_are_refused)
{
	refuse("filter 0xfffffffffffff000/0x2000", "0xfffffffffffff000/0x2000");
	refuse("filter 0xffffffffffffffff/2", "0xffffffffffffffff/0x2");
	refuse("filter 0xffffffffffffffff/2", "past the top of the address space");
	refuse("tracestop 0xfffffffffffff000 / 0x1000", "wrap");
	build("filter 0xffffffffffffe000/0x1000", "filter 0xffffffffffffe000/0x1000");
}

Test(filter_kernel, start_end_forms_that_wrap_past_2_64_are_refused)
{
	/* kallsyms is not in address order: "top" runs to a lower line, a size that wraps. */
	static const char text[] = "ffffffff81000000 T _stext\n"
				   "fffffffffffff000 T top\n"
				   "ffffffff81000100 T after\n"
				   "ffffffff81000200 T end\n";
	struct error e = { 0 };
	char *out;

	cr_assert_eq(build_text(text, "filter _stext / top", &out, &e), -EINVAL);
	cr_expect(strstr(e.why, "'top'") && strstr(e.why, "past the top of the address space"),
		  "%s", e.why);
	cr_assert_eq(build_text(text, "filter top", &out, &e), -EINVAL);
	cr_expect(strstr(e.why, "0xfffffffffffff000/0xffffffff81001100") &&
		  strstr(e.why, "wrap"), "%s", e.why);
	cr_assert_eq(build_text(text, "filter 0xffffffffffffff00 / after", &out, &e), -EINVAL);
	cr_expect(strstr(e.why, "comes before the start"), "%s", e.why);
	cr_assert_eq(build_text(text, "filter _stext / after", &out, &e), 0, "%s", e.why);
	cr_expect_str_eq(out, "filter 0xffffffff81000000/0x200");
	free(out);
}
