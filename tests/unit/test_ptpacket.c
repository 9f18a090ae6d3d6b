// SPDX-License-Identifier: MIT
/* The packet dump's walker on buffers a file mapping can give it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ptdump_walk.h"
#include "ptpacket_print.h"

struct seen {
	int packets, errors;
	char last[PTDUMP_LINE_MAX];
};

static int count(const struct ptdump_line *l, void *ctx)
{
	struct seen *s = ctx;

	if (l->kind == PTDUMP_PACKET)
		s->packets++;
	else
		s->errors++;
	snprintf(s->last, sizeof(s->last), "%s", l->text);
	return 0;
}

/* @len bytes that end where an inaccessible page starts. */
static uint8_t *at_guard_page(size_t len, void **map)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(m, MAP_FAILED);
	cr_assert_eq(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	*map = m;
	return m + pg - len;
}

/*
 * libipt 2.0.5 reads the byte after a buffer that ends on a word of PSB
 * pattern; from a mapping that ends there, that read would fault.
 */
Test(ptpacket, a_trace_ending_in_psb_pattern_before_an_unmapped_page_is_read)
{
	static const uint8_t tail[] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };
	struct ptdump_opts o = { 0 };
	struct ptdump_stats st;
	struct error e = { 0 };
	struct seen s = { 0 };
	void *map;
	uint8_t *b;

	for (size_t len = 8; len <= 64; len += 8) {
		b = at_guard_page(len, &map);
		memset(b, 0, len);
		memcpy(b + len - 8, tail, 8);
		cr_assert_eq(ptdump_walk(b, len, &o, count, &s, &st, &e), 0);
		cr_expect_not(st.synced, "a PSB pattern without its header is no PSB");
		munmap(map, (size_t)sysconf(_SC_PAGESIZE) * 2);
	}
}

Test(ptpacket, a_psb_that_ends_the_buffer_is_dumped)
{
	struct ptdump_opts o = { 0 };
	struct ptdump_stats st;
	struct error e = { 0 };
	struct seen s = { 0 };
	void *map;
	uint8_t *b = at_guard_page(24, &map);

	memset(b, 0, 8);
	for (int i = 8; i < 24; i++)
		b[i] = i % 2 ? 0x82 : 0x02;
	cr_assert_eq(ptdump_walk(b, 24, &o, count, &s, &st, &e), 0);
	cr_expect_eq(s.packets, 1);
	cr_expect_str_eq(s.last, "0000000000000008  psb");
	munmap(map, (size_t)sysconf(_SC_PAGESIZE) * 2);
}

static int stop_at_first(const struct ptdump_line *l, void *ctx)
{
	(void)l;
	(void)ctx;
	return 7;
}

Test(ptpacket, the_callbacks_stop_ends_the_walk_with_its_value)
{
	static const uint8_t psb[] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
				       2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 0, 0, 0 };
	struct ptdump_opts o = { 0 };
	struct ptdump_stats st;
	struct error e = { 0 };

	cr_expect_eq(ptdump_walk(psb, sizeof(psb), &o, stop_at_first, NULL, &st, &e), 7);
	cr_expect_eq(st.packets, 1);
}
