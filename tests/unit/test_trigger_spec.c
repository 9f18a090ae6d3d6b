// SPDX-License-Identifier: MIT
/*
 * --trigger SPEC and --trigger-count N: the grammar, and symbols resolved in
 * this test binary itself (/proc/self/exe), whose probe function has a known
 * instruction layout.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols.h"
#include "trigger_spec.h"

/* movabs (10 bytes), nop, ret: instructions start at +0, +10, +11; 12 bytes long. */
__asm__(".text\n"
	".globl spec_probe_fn\n"
	".type spec_probe_fn, @function\n"
	"spec_probe_fn:\n"
	"\tmovabs $0x1122334455667788, %rax\n"
	"\tnop\n"
	"\tret\n"
	".size spec_probe_fn, .-spec_probe_fn\n");

struct good_case {
	char text[96];
	enum trigger_kind kind;
	char file[32], symbol[48];
	unsigned long long off;
	enum trigger_action action;
};

static struct good_case good[] = {
	{ "uprobe:./prog:main", TRIGGER_UPROBE, "./prog", "main", 0, TRIGGER_ACT_DEFAULT },
	{ "breakpoint:/bin/x:f=stop", TRIGGER_BREAKPOINT, "/bin/x", "f", 0, TRIGGER_ACT_STOP },
	{ "uprobe:p:f+16=mark", TRIGGER_UPROBE, "p", "f", 16, TRIGGER_ACT_MARK },
	{ "uprobe:p:f+0x10", TRIGGER_UPROBE, "p", "f", 16, TRIGGER_ACT_DEFAULT },
	{ "uprobe:p:f=snapshot", TRIGGER_UPROBE, "p", "f", 0, TRIGGER_ACT_SNAPSHOT },
	{ "uprobe:p:f=start", TRIGGER_UPROBE, "p", "f", 0, TRIGGER_ACT_START },
	/* C++ names keep their '::', operators their '=' and '+'. */
	{ "uprobe:p:ns::bar(int)=stop", TRIGGER_UPROBE, "p", "ns::bar(int)", 0, TRIGGER_ACT_STOP },
	{ "uprobe:p:A::operator=(A const&)", TRIGGER_UPROBE, "p", "A::operator=(A const&)", 0,
	  TRIGGER_ACT_DEFAULT },
	{ "uprobe:p:operator+(A, A)+4", TRIGGER_UPROBE, "p", "operator+(A, A)", 4,
	  TRIGGER_ACT_DEFAULT },
};

ParameterizedTestParameters(trigger_spec, parses_kind_file_symbol_offset_action)
{
	return cr_make_param_array(struct good_case, good, sizeof(good) / sizeof(good[0]));
}

ParameterizedTest(struct good_case *c, trigger_spec, parses_kind_file_symbol_offset_action)
{
	struct trigger_spec s;
	struct error e = { 0 };

	cr_assert_eq(trigger_spec_parse(c->text, &s, &e), 0, "%s: %s", c->text, e.why);
	cr_expect_eq(s.kind, c->kind);
	cr_expect_str_eq(s.file, c->file);
	cr_expect_str_eq(s.symbol, c->symbol);
	cr_expect_eq(s.sym_off, c->off);
	cr_expect_eq(s.action, c->action);
	cr_expect_str_eq(s.text, c->text);
	trigger_spec_free(&s);
}

struct bad_case {
	char text[64];
	char says[2][64];	/* in why */
	char hint[48];		/* in hint */
};

static struct bad_case bad[] = {
	{ "kprobe:vmlinux:f", { "'kprobe:vmlinux:f'", "unknown trigger kind 'kprobe'" },
	  "uprobe:FILE:SYMBOL" },
	{ "uprobe", { "no kind" }, "breakpoint:FILE:SYMBOL" },
	{ "uprobe:./prog", { "no file" }, "uprobe:FILE" },
	{ "uprobe::main", { "no file" }, "" },
	{ "uprobe:./prog:", { "no symbol after 'uprobe:./prog:'" }, "" },
	{ "uprobe:./prog:=stop", { "no symbol" }, "" },
	{ "uprobe:./prog:main=", { "no action after '='" }, "snapshot, start, stop or mark" },
	{ "uprobe:./prog:main=explode", { "unknown action 'explode'" }, "snapshot, start, stop" },
	{ "breakpoint:./prog:main+1z", { "bad offset '1z'" }, "'+0x10'" },
	{ "uprobe:./prog:main+99999999999999999999", { "bad offset" }, "" },
	{ "Uprobe:./prog:main", { "unknown trigger kind 'Uprobe'" }, "" },
};

ParameterizedTestParameters(trigger_spec, bad_syntax_is_a_usage_error_naming_the_spec)
{
	return cr_make_param_array(struct bad_case, bad, sizeof(bad) / sizeof(bad[0]));
}

ParameterizedTest(struct bad_case *c, trigger_spec, bad_syntax_is_a_usage_error_naming_the_spec)
{
	struct trigger_spec s;
	struct error e = { 0 };

	cr_assert_eq(trigger_spec_parse(c->text, &s, &e), -EINVAL, "%s", c->text);
	cr_expect(e.usage);
	for (int i = 0; i < 2 && c->says[i][0]; i++)
		cr_expect(strstr(e.why, c->says[i]), "%s: '%s' not in '%s'", c->text, c->says[i],
			  e.why);
	cr_expect(strstr(e.hint, c->hint), "%s: '%s' not in hint '%s'", c->text, c->hint, e.hint);
	cr_expect(strstr(e.why, c->text), "the spec is quoted: %s", e.why);
}

static int resolve(const char *text, struct trigger_spec *s, struct error *e)
{
	struct warnings w = { 0 };
	int ret = trigger_spec_parse(text, s, e);

	if (!ret)
		ret = trigger_spec_resolve(s, e, &w);
	return ret;
}

/* The file offset (or, with @addr, the address) symbols.c gives spec_probe_fn here. */
static uint64_t probe_fn(bool addr)
{
	struct symtab t;
	struct error e = { 0 };
	uint64_t v = 0;

	cr_assert_eq(symbols_load(&t, "/proc/self/exe", &e, NULL), 0, "%s", e.why);
	for (size_t i = 0; i < t.nr; i++)
		if (!strcmp(t.syms[i].name, "spec_probe_fn"))
			v = addr ? t.syms[i].addr : t.syms[i].offset;
	symbols_free(&t);
	cr_assert(v);
	return v;
}

static uint64_t probe_fn_offset(void)
{
	return probe_fn(false);
}

Test(trigger_spec, resolves_a_function_to_its_file_offset)
{
	struct trigger_spec s;
	struct error e = { 0 };
	char self[PATH_MAX];

	cr_assert_eq(resolve("uprobe:/proc/self/exe:spec_probe_fn=mark", &s, &e), 0, "%s",
		     e.why);
	cr_assert(realpath("/proc/self/exe", self));
	cr_expect_str_eq(s.path, self);
	cr_expect_eq(s.offset, probe_fn_offset());
	cr_expect_eq(s.addr, probe_fn(true));
	cr_expect(s.resolved);
	trigger_spec_free(&s);
}

Test(trigger_spec, offset_on_an_instruction_start_resolves)
{
	struct trigger_spec s;
	struct error e = { 0 };

	cr_assert_eq(resolve("breakpoint:/proc/self/exe:spec_probe_fn+10", &s, &e), 0, "%s",
		     e.why);
	cr_expect_eq(s.offset, probe_fn_offset() + 10);
	trigger_spec_free(&s);
	cr_assert_eq(resolve("uprobe:/proc/self/exe:spec_probe_fn+0xb", &s, &e), 0, "%s", e.why);
	cr_expect_eq(s.offset, probe_fn_offset() + 11);
	trigger_spec_free(&s);
}

Test(trigger_spec, offset_inside_an_instruction_is_refused_with_the_starts)
{
	struct trigger_spec s;
	struct error e = { 0 };

	cr_assert_eq(resolve("uprobe:/proc/self/exe:spec_probe_fn+3", &s, &e), -EINVAL);
	cr_expect(e.usage);
	cr_expect(strstr(e.why, "+3 is not where an instruction of 'spec_probe_fn' starts"),
		  "%s", e.why);
	cr_expect(strstr(e.why, "+0, +10"), "%s", e.why);
	trigger_spec_free(&s);
}

Test(trigger_spec, offset_past_the_function_is_refused)
{
	struct trigger_spec s;
	struct error e = { 0 };

	cr_assert_eq(resolve("uprobe:/proc/self/exe:spec_probe_fn+12", &s, &e), -EINVAL);
	cr_expect(strstr(e.why, "+12 is past the end of 'spec_probe_fn' (12 bytes)"), "%s",
		  e.why);
	trigger_spec_free(&s);
}

Test(trigger_spec, unknown_symbol_names_the_nearest)
{
	struct trigger_spec s;
	struct error e = { 0 };

	cr_assert_eq(resolve("uprobe:/proc/self/exe:spec_probe_fm", &s, &e), -ENOENT);
	cr_expect(e.usage);
	cr_expect(strstr(e.why, "no function 'spec_probe_fm' in "), "%s", e.why);
	cr_expect(strstr(e.hint, "did you mean spec_probe_fn"), "%s", e.hint);
	trigger_spec_free(&s);
}

Test(trigger_spec, missing_file_is_a_usage_error)
{
	struct trigger_spec s;
	struct error e = { 0 };

	cr_assert_eq(resolve("breakpoint:/nonexistent/prog:main", &s, &e), -ENOENT);
	cr_expect(e.usage);
	cr_expect(strstr(e.why, "'breakpoint:/nonexistent/prog:main'"), "%s", e.why);
	cr_expect(strstr(e.why, "/nonexistent/prog"), "%s", e.why);
	cr_expect(strstr(e.hint, "existing executable"), "%s", e.hint);
	trigger_spec_free(&s);
}

Test(trigger_spec, file_that_is_not_elf_is_a_usage_error)
{
	struct trigger_spec s;
	struct error e = { 0 };

	cr_assert_lt(resolve("uprobe:/etc/passwd:main", &s, &e), 0);
	cr_expect(e.usage);
	cr_expect(strstr(e.why, "/etc/passwd"), "%s", e.why);
	trigger_spec_free(&s);
}

struct count_case {
	char text[32];
	int ret;
	unsigned long long n;
};

static struct count_case counts[] = {
	{ "1", 0, 1 }, { "250", 0, 250 }, { "18446744073709551615", 0, 18446744073709551615ull },
	{ "0", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "5x", -EINVAL, 0 },
	{ " 5", -EINVAL, 0 }, { "18446744073709551616", -EINVAL, 0 }, { "0x10", -EINVAL, 0 },
};

ParameterizedTestParameters(trigger_spec, trigger_count_is_a_whole_number_from_1)
{
	return cr_make_param_array(struct count_case, counts, sizeof(counts) / sizeof(counts[0]));
}

ParameterizedTest(struct count_case *c, trigger_spec, trigger_count_is_a_whole_number_from_1)
{
	struct error e = { 0 };
	uint64_t n = 0;

	cr_assert_eq(trigger_count_parse(c->text, &n, &e), c->ret, "'%s'", c->text);
	if (c->ret) {
		char q[40];

		snprintf(q, sizeof(q), "'%s'", c->text);
		cr_expect(e.usage);
		cr_expect(strstr(e.why, q), "%s", e.why);
		cr_expect(strstr(e.hint, "at least 1"), "%s", e.hint);
	} else {
		cr_expect_eq(n, c->n);
	}
}
