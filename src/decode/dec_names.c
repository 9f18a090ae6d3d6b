// SPDX-License-Identifier: MIT
/*
 * The cache of what a call's or return's address is (its symbol, object and spelled
 * name), apart from the records that use it: its hit path is dec_names.h's name_of(), in line;
 * here are the table and a miss.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dec_names.h"
#include "memfill.h"

#define NAMES_BYTES (((size_t)1 << NAMES_SET_BITS) * sizeof(struct nameset))
/*
 * The table goes into huge pages where the kernel gives them (HUGE_AFTER): each call and
 * return looks up a random set, and with 4 KiB pages the table's 1024 needed a TLB entry
 * each. At -J 2 the worker ahead writes what it holds through thousands of pages besides:
 * the walk's --calls spent 1.1 to 1.6 times -J 1's samples in fast_branch(), most of them
 * on the prefetch of the sets (TLB misses); in two huge pages, fewer than -J 1 did. Aligned
 * to them, and so to a page: its groups are whole pages (memfill() writes a part page).
 */
#define NAMES_HUGE ((size_t)2 << 20)
_Static_assert(NAMES_BYTES % NAMES_HUGE == 0, "the table is whole huge pages");
#define HALF_GROUPS (NAMES_HUGE / (sizeof(struct nameset) << NAMES_GROUP_SHIFT))
#define HALF_MASK(h) ((((uint64_t)1 << HALF_GROUPS) - 1) << ((h) * HALF_GROUPS))
/*
 * A huge page once this many groups of it are written (MADV_COLLAPSE: their pages copied
 * into it): a trace of few names keeps its few groups (the loop of bench/decode: 6 names,
 * 11.0 MB peak at -J 1; 12.7-14.6 MB with each group's first write making its 2 MiB).
 */
#define HUGE_AFTER 8
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25	/* Linux 6.1 */
#endif

/* The table, not yet written (mmap(): no page until a group is filled), or NULL. */
static struct nameset *names_map(void)
{
	size_t len = NAMES_BYTES + NAMES_HUGE;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t a, end;

	if (p == MAP_FAILED)
		return NULL;
	a = ((uintptr_t)p + NAMES_HUGE - 1) & ~(uintptr_t)(NAMES_HUGE - 1);
	end = (uintptr_t)p + len;
	if (a > (uintptr_t)p)
		munmap(p, a - (uintptr_t)p);
	if (end > a + NAMES_BYTES)
		munmap((void *)(a + NAMES_BYTES), end - a - NAMES_BYTES);
	return (struct nameset *)a;
}

void names_free(void *names)
{
	if (names)
		munmap(names, NAMES_BYTES);
}

void names_fill(struct dec *x, size_t set)
{
	size_t g = set >> NAMES_GROUP_SHIFT;

	memfill(&x->names[g << NAMES_GROUP_SHIFT], sizeof(*x->names) << NAMES_GROUP_SHIFT);
	x->names_filled |= (uint64_t)1 << g;
	if (__builtin_popcountll(x->names_filled & HALF_MASK(g / HALF_GROUPS)) == HUGE_AFTER) {
		uint8_t *half = (uint8_t *)x->names + g / HALF_GROUPS * NAMES_HUGE;

		/* (Without transparent huge pages, or none free: 4 KiB pages, as before.) */
		if (!madvise(half, NAMES_HUGE, MADV_HUGEPAGE))
			madvise(half, NAMES_HUGE, MADV_COLLAPSE);
	}
}

/* The set of @ip in section @isid (NULL: outside any section, or no memory for the table). */
static struct nameset *sym_set_of(struct dec *x, uint32_t pid, int isid, uint64_t ip)
{
	if (isid <= 0)
		return NULL;
	if (!x->names) {
		/* Groups of sets never used stay untouched (names_fill()). */
		x->names = names_map();
		if (!x->names)
			return NULL;
		x->names_filled = 0;
	}
	return names_at(x, sym_slot(pid, isid, ip));
}

/* Whether printable_to() leaves @s as it is (printable ASCII only). */
static bool plain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

/*
 * "symbol+0xoff" (image_sym_format()) of @y, in @buf: the name, its length (@nlen) and
 * whether it is printable as it is. Its length as spelled: not measured again (strnlen()
 * over every miss).
 */
static const char *symbolize(const struct image_sym *y, char *buf, size_t len, bool *is_plain,
			     size_t *nlen)
{
	size_t n = image_sym_format(y, buf, len);

	*is_plain = plain(buf, n);
	*nlen = n;
	return buf;
}

/* The name of way @e that is not in its line: in its cold part, or spelled from its symbol. */
const char *name_cold(struct symname *e, char *buf, size_t len, bool *is_plain,
		      size_t *nlen)
{
	union symcold *c = sym_cold(e);

	if (e->named & SYM_COLD) {
		*is_plain = e->named & SYM_PLAIN;
		*nlen = e->len;
		return c->name;
	}
	return symbolize(&c->sym, buf, len, is_plain, nlen);
}

/*
 * @e's name spelled from its symbol (in its cold part), kept where it fits: in its line,
 * or in the cold part in place of the symbol.
 */
static const char *name_keep(struct symname *e, char *buf, size_t len, bool *is_plain,
			     size_t *nlen)
{
	union symcold *c = sym_cold(e);
	const char *name = symbolize(&c->sym, buf, len, is_plain, nlen);
	size_t n = *nlen;

	if (n < sizeof(e->name)) {
		memcpy(e->name, name, n + 1);
		name = e->name;
		e->named = SYM_NAMED;
	} else if (n < sizeof(c->name)) {
		memcpy(c->name, name, n + 1);
		name = c->name;
		e->named = SYM_COLD;
	} else {
		return name;
	}
	e->len = (uint8_t)n;
	e->named |= *is_plain ? SYM_PLAIN : 0;
	return name;
}

/*
 * name_of()'s miss: the way of the set used less lately, but never @busy, the entry that
 * holds the other end's name, in use. No set (no section, no memory): the name is
 * spelled into @buf and nothing is kept.
 */
const char *name_find(struct dec *x, uint32_t pid, int isid, uint64_t ip,
		      const struct symname *busy, struct symname **used, char *buf,
		      size_t len, bool *is_plain, size_t *nlen)
{
	struct nameset *set = sym_set_of(x, pid, isid, ip);
	struct symname *e;
	const char *name;
	struct image_sym y;
	int w;

	*used = NULL;
	if (!set) {
		image_resolve_pid(x->img, pid, isid, ip, &y);
		return symbolize(&y, buf, len, is_plain, nlen);
	}
	x->names_missed++;
	w = set->way[0].named & SYM_RECENT ? 1 : 0;
	if (&set->way[w] == busy)
		w = !w;
	e = &set->way[w];
	image_resolve_pid(x->img, pid, isid, ip, &set->cold[w].sym);
	x->names_used += !e->isid;
	e->ip = ip;
	e->isid = isid;
	e->pid = pid;
	e->named = 0;
	name = name_keep(e, buf, len, is_plain, nlen);
	sym_touch(e, &set->way[!w]);
	*used = e;
	return name;
}
