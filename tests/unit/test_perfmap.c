// SPDX-License-Identifier: MIT
/*
 * The perf map reader (/tmp/perf-PID.map): the lines perf and magic-trace
 * read give names; garbage lines (overlong, not hex, no name, a size of 0,
 * huge or wrapping) are skipped and counted; entries that overlap never name
 * an address; a link or a FIFO is never read.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmap.h"

static void parse(struct perfmap *m, const char *text)
{
	cr_assert_eq(perfmap_parse(m, text, strlen(text)), 0);
}

static const char *name_at(const struct perfmap *m, uint64_t addr)
{
	const struct perfmap_sym *s = perfmap_find(m, addr);

	return s ? s->name : NULL;
}

Test(perfmap, lines_as_jits_write_them_name_their_ranges)
{
	struct perfmap m;

	parse(&m, "7f0000001000 40 LazyCompile:~add /app/a.js:1\n"
		  "0x7f0000002000 0x10 Interpreter\n"
		  "7F0000000800 8 stub\n");
	cr_assert_eq(m.nr, 3);
	cr_expect_eq(m.bad_lines, 0);
	cr_expect_str_eq(name_at(&m, 0x7f0000001000), "LazyCompile:~add /app/a.js:1");
	cr_expect_str_eq(name_at(&m, 0x7f000000103f), "LazyCompile:~add /app/a.js:1");
	cr_expect_null(name_at(&m, 0x7f0000001040));
	cr_expect_str_eq(name_at(&m, 0x7f000000200f), "Interpreter");
	cr_expect_str_eq(name_at(&m, 0x7f0000000807), "stub");
	cr_expect_null(name_at(&m, 0x7f00000007ff));
	cr_expect_null(name_at(&m, 0));
	perfmap_free(&m);
}

Test(perfmap, garbage_lines_are_counted_and_name_nothing)
{
	char *text, *long_name = malloc(PERFMAP_MAX_LINE + 1);
	struct perfmap m;

	memset(long_name, 'x', PERFMAP_MAX_LINE);
	long_name[PERFMAP_MAX_LINE] = '\0';
	cr_assert(asprintf(&text,
			   "1000 10 good\n"
			   "zz00 10 nothex\n"		/* 2 */
			   "2000 1g badsize\n"		/* 3 */
			   "3000 10\n"			/* 4: no name */
			   "4000 0 empty\n"		/* 5 */
			   "5000 ffffffffffffffff huge\n"	/* 6 */
			   "fffffffffffffff0 20 wraps\n"	/* 7 */
			   "11111111111111111 10 long\n"	/* 8: 17 digits */
			   "6000 10 %s\n"		/* 9: overlong */
			   "7000\t10 tab\n"		/* 10 */
			   "-8000 10 neg\n"		/* 11 */
			   "9000 10 last-without-newline", long_name) > 0);
	parse(&m, text);
	cr_expect_eq(m.nr, 2, "%zu", m.nr);
	cr_expect_eq(m.bad_lines, 10, "%zu", m.bad_lines);
	cr_expect_eq(m.first_bad, 2);
	cr_expect(strstr(m.first_why, "not hex"), "%s", m.first_why);
	cr_expect_str_eq(name_at(&m, 0x1005), "good");
	cr_expect_str_eq(name_at(&m, 0x9000), "last-without-newline");
	for (uint64_t a = 0x2000; a <= 0x8000; a += 0x1000)
		cr_expect_null(name_at(&m, a + 4), "%#llx", (unsigned long long)a);
	cr_expect_null(name_at(&m, 0xfffffffffffffff8ull));
	perfmap_free(&m);
	free(text);
	free(long_name);
}

Test(perfmap, overlapping_entries_name_no_address_identical_ones_count_once)
{
	struct perfmap m;

	parse(&m, "1000 100 outer\n"
		  "1080 10 inner\n"		/* inside outer */
		  "2000 10 twice\n"
		  "2000 10 twice\n"		/* the same line again */
		  "3000 10 old\n"
		  "3008 10 new\n"		/* the JIT reused 0x3008.. */
		  "3100 10 alone\n");
	cr_expect_eq(m.nr, 6);
	cr_expect_eq(m.overlapping, 4);
	cr_expect_null(name_at(&m, 0x1000));
	cr_expect_null(name_at(&m, 0x1085));
	cr_expect_null(name_at(&m, 0x10f0), "past inner, still in outer");
	cr_expect_str_eq(name_at(&m, 0x2004), "twice");
	cr_expect_null(name_at(&m, 0x3000));
	cr_expect_null(name_at(&m, 0x3010));
	cr_expect_str_eq(name_at(&m, 0x3100), "alone");
	perfmap_free(&m);
}

Test(perfmap, a_link_and_a_fifo_are_not_read)
{
	char dir[] = "/tmp/ptc-unit-perfmap-XXXXXX", path[128], link[128], fifo[128];
	struct perfmap m;
	struct error e;
	FILE *f;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	snprintf(link, sizeof(link), "%s/perf-2.map", dir);
	snprintf(fifo, sizeof(fifo), "%s/perf-3.map", dir);
	f = fopen(path, "w");
	cr_assert(f);
	fputs("1000 10 f\n", f);
	fclose(f);
	cr_assert_eq(symlink(path, link), 0);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	err_clear(&e);
	cr_expect_eq(perfmap_load_at(&m, AT_FDCWD, path, &e), 0, "%s", e.why);
	cr_expect_str_eq(name_at(&m, 0x1000), "f");
	perfmap_free(&m);
	err_clear(&e);
	cr_expect_eq(perfmap_load_at(&m, AT_FDCWD, link, &e), -ELOOP);
	cr_expect(strstr(e.why, "symbolic link"), "%s", e.why);
	err_clear(&e);
	cr_expect_eq(perfmap_load_at(&m, AT_FDCWD, fifo, &e), -EINVAL);
	cr_expect(strstr(e.why, "not a regular file"), "%s", e.why);
	err_clear(&e);
	snprintf(path, sizeof(path), "%s/perf-4.map", dir);
	cr_expect_eq(perfmap_load_at(&m, AT_FDCWD, path, &e), -ENOENT);
	unlink(fifo);
	unlink(link);
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	unlink(path);
	rmdir(dir);
}
