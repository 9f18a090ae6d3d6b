// SPDX-License-Identifier: MIT
/*
 * The one kallsyms reader: what it keeps of each line, what it skips, and
 * perf's lookups (find_kern_sym's selectors and sizes, '*' to a page past
 * the highest function) on files the tests write.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms.h"

static char path[64];

static void write_file(const char *text, size_t len)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/ptc-unit-ksyms-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static void load(struct kallsyms *k, const char *text)
{
	struct error e = { 0 };

	write_file(text, strlen(text));
	cr_assert_eq(kallsyms_load(k, path, &e), 0, "%s", e.why);
	unlink(path);
}

static const char sample[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"not a line at all\n"
	"ffffffff81000100 t dup\n"
	"ffffffff81000180 T dup\n"
	"ffffffff81000200 t func\n"
	"ffffffff81000200 t alias\n"
	"ffffffff81000240 d data\n"
	"ffffffff81000300 T dup2\n"
	"ffffffff81000400 W weak\n"
	"ffffffff81600000 T _etext\n"
	"ffffffffc0002000 t modfn\t[ext4]\n"
	"ffffffffc0003000 T dup2\t[xfs]\n"
	"ffffffffc0001000 t lowmod\t[xfs]\n";

Test(kallsyms, lines_are_kept_in_file_order_with_their_module)
{
	struct kallsyms k;

	load(&k, sample);
	cr_assert_eq(k.nr, 13, "the line that does not parse is skipped");
	cr_expect_eq(k.syms[0].addr, 0xffffffff81000000ULL);
	cr_expect_eq(k.syms[0].type, 'T');
	cr_expect_str_eq(k.syms[0].name, "_text");
	cr_expect_null(k.syms[0].module);
	cr_expect_str_eq(k.syms[2].name, "dup", "file order, not address order");
	cr_expect_str_eq(k.syms[10].name, "modfn");
	cr_expect_str_eq(k.syms[10].module, "ext4");
	cr_expect_str_eq(k.syms[12].name, "lowmod");
	cr_expect_str_eq(k.syms[12].module, "xfs");
	kallsyms_free(&k);
	cr_expect_null(k.syms);
	cr_expect_eq(k.nr, 0);
}

Test(kallsyms, find_gives_the_kernels_first_symbol_of_a_name)
{
	struct kallsyms k;

	load(&k, sample);
	cr_assert_not_null(kallsyms_find(&k, "_stext"));
	cr_expect_eq(kallsyms_find(&k, "_etext")->addr, 0xffffffff81600000ULL);
	cr_expect_eq(kallsyms_find(&k, "dup")->type, 't', "the first one");
	cr_expect_eq(kallsyms_find(&k, "dup2")->addr, 0xffffffff81000300ULL, "not the module's");
	cr_expect_null(kallsyms_find(&k, "modfn"), "a module's symbol is not the kernel's");
	cr_expect_null(kallsyms_find(&k, "nosuch"));
	kallsyms_free(&k);
}

Test(kallsyms, a_function_runs_to_the_next_address_past_an_alias)
{
	struct kallsyms k;
	uint64_t start, size;

	load(&k, sample);
	cr_assert_eq(kallsyms_func(&k, "func", -1, &start, &size), 0);
	cr_expect_eq(start, 0xffffffff81000200ULL);
	cr_expect_eq(size, 0x40, "the alias on the next line has the same address");
	cr_assert_eq(kallsyms_func(&k, "weak", -1, &start, &size), 0, "W is a function");
	cr_expect_eq(size, 0x5ffc00);
	cr_expect_eq(kallsyms_func(&k, "data", -1, &start, &size), -ENOENT, "d is not");
	cr_expect_eq(kallsyms_func(&k, "lowmod", -1, &start, &size), 0 - ENOENT,
		     "perf never matches a module's function by its bare name");
	kallsyms_free(&k);
}

Test(kallsyms, selectors_pick_the_nth_or_the_global_and_duplicates_are_ambiguous)
{
	struct kallsyms k;
	uint64_t start, size;

	load(&k, sample);
	cr_expect_eq(kallsyms_func(&k, "dup", -1, &start, &size), -EEXIST);
	cr_assert_eq(kallsyms_func(&k, "dup", 1, &start, &size), 0);
	cr_expect_eq(start, 0xffffffff81000100ULL);
	cr_expect_eq(size, 0x80);
	cr_assert_eq(kallsyms_func(&k, "dup", 2, &start, &size), 0);
	cr_expect_eq(start, 0xffffffff81000180ULL);
	cr_assert_eq(kallsyms_func(&k, "dup", 0, &start, &size), 0);
	cr_expect_eq(start, 0xffffffff81000180ULL, "#g: the global one");
	cr_expect_eq(kallsyms_func(&k, "dup", 3, &start, &size), -ENOENT);
	cr_assert_eq(kallsyms_func(&k, "dup2", -1, &start, &size), 0,
		     "a module's function of the same name does not make it ambiguous");
	kallsyms_free(&k);
}

Test(kallsyms, the_last_line_has_no_size)
{
	struct kallsyms k;
	uint64_t start, size;

	load(&k, "ffffffff81000000 T first\nffffffff81000100 T last\n");
	cr_assert_eq(kallsyms_func(&k, "last", -1, &start, &size), 0);
	cr_expect_eq(size, 0);
	kallsyms_free(&k);
}

Test(kallsyms, whole_kernel_ends_a_page_past_the_highest_function_not_the_last)
{
	struct kallsyms k;
	uint64_t start, size;

	load(&k, sample);
	cr_assert_eq(kallsyms_text(&k, 4096, &start, &size), 0);
	cr_expect_eq(start, 0xffffffff81000000ULL);
	/* modfn at ...c0002000 is the highest (lowmod comes later but lower): a page past it. */
	cr_expect_eq(start + size, 0xffffffffc0003000ULL + 4096, "size 0x%lx", (unsigned long)size);
	kallsyms_free(&k);
}

Test(kallsyms, whole_kernel_may_end_at_the_top_but_not_wrap_past_it)
{
	struct kallsyms k;
	uint64_t start, size;

	load(&k, "ffffffffffffd000 T a\nfffffffffffff000 T b\n");
	cr_assert_eq(kallsyms_text(&k, 4096, &start, &size), 0);
	cr_expect_eq(size, 0x3000, "b's page and a page past it end at 2^64");
	kallsyms_free(&k);
	load(&k, "ffffffffffffd000 T a\nfffffffffffff001 T b\n");
	cr_expect_eq(kallsyms_text(&k, 4096, &start, &size), -ERANGE);
	kallsyms_free(&k);
	load(&k, "ffffffff81000000 d data\n");
	cr_expect_eq(kallsyms_text(&k, 4096, &start, &size), -ENOENT, "no function at all");
	kallsyms_free(&k);
}

Test(kallsyms, odd_lines_are_skipped_and_never_read_past)
{
	static const char odd[] = "ffffffff81000000 T ok\n"
				  "ffffffff81000010 T\n"			/* no name */
				  "ffffffff81000020 TT x\n"		/* type of two letters */
				  "fffffffff81000030000 T toolong\n"	/* past 64 bits */
				  " ffffffff81000040 T lead\n"		/* leading space */
				  "ffffffff81000050 T nul\0hidden\n"
				  "ffffffff81000060 T mod\t[unclosed\n"
				  "ffffffff81000070 T last";		/* no newline at the end */
	struct error e = { 0 };
	struct kallsyms k;

	write_file(odd, sizeof(odd) - 1);
	cr_assert_eq(kallsyms_load(&k, path, &e), 0, "%s", e.why);
	unlink(path);
	cr_assert_eq(k.nr, 4);
	cr_expect_str_eq(k.syms[0].name, "ok");
	cr_expect_str_eq(k.syms[1].name, "nul", "a NUL ends the line's text, not the file");
	cr_expect_str_eq(k.syms[2].name, "mod");
	cr_expect_null(k.syms[2].module, "no closing bracket: no module");
	cr_expect_str_eq(k.syms[3].name, "last");
	kallsyms_free(&k);
}

Test(kallsyms, a_missing_file_or_a_fifo_is_bad_input)
{
	char dir[] = "/tmp/ptc-unit-ksyms-XXXXXX", fifo[64];
	struct error e = { 0 };
	struct kallsyms k;

	cr_assert(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_expect_eq(kallsyms_load(&k, fifo, &e), -EINVAL);
	cr_expect(e.usage && strstr(e.why, "not a regular file"), "%s", e.why);
	err_clear(&e);
	unlink(fifo);
	cr_expect_eq(kallsyms_load(&k, fifo, &e), -ENOENT);
	cr_expect(e.usage && strstr(e.why, fifo), "%s", e.why);
	cr_expect_null(k.syms);
	rmdir(dir);
}
