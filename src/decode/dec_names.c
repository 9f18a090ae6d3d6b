// SPDX-License-Identifier: MIT
/*
 * The cache of what a call's or return's address is (its symbol, object and spelled
 * name), apart from the records that use it: its hit path is dec_names.h's name_of(), in line;
 * here are the table and a miss.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dec_names.h"
#include "memfill.h"

/* The table starts at a page: its groups are whole pages (memfill() writes a part page). */
#define NAMES_ALIGN 4096

void names_fill(struct dec *x, size_t set)
{
	size_t g = set >> NAMES_GROUP_SHIFT;

	memfill(&x->names[g << NAMES_GROUP_SHIFT], sizeof(*x->names) << NAMES_GROUP_SHIFT);
	x->names_filled |= (uint64_t)1 << g;
}

/* The set of @ip in section @isid (NULL: outside any section, or no memory for the table). */
static struct nameset *sym_set_of(struct dec *x, uint32_t pid, int isid, uint64_t ip)
{
	if (isid <= 0)
		return NULL;
	if (!x->names) {
		/*
		 * calloc(): groups of sets never used stay untouched; aligned by hand to
		 * the page, so that each group is whole pages (names_fill()).
		 */
		x->names_mem = calloc(((size_t)1 << NAMES_SET_BITS) * sizeof(*x->names) +
				      NAMES_ALIGN, 1);
		if (!x->names_mem)
			return NULL;
		x->names = (struct nameset *)(((uintptr_t)x->names_mem + NAMES_ALIGN - 1) &
					      ~(uintptr_t)(NAMES_ALIGN - 1));
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
