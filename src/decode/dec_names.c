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

void names_fill(struct dec *x, size_t slot)
{
	size_t g = slot >> NAMES_GROUP_SHIFT;

	memfill(&x->names[g << NAMES_GROUP_SHIFT], sizeof(*x->names) << NAMES_GROUP_SHIFT);
	x->names_filled |= (uint64_t)1 << g;
}

/*
 * The set of @ip in section @isid, its two ways (NULL: outside any section, or no memory
 * for the table).
 */
static struct symname *sym_set_of(struct dec *x, uint32_t pid, int isid, uint64_t ip)
{
	if (isid <= 0)
		return NULL;
	if (!x->names) {
		/*
		 * calloc(): groups of slots never used stay untouched; aligned by hand to
		 * the page, so that each group is whole pages (names_fill()).
		 */
		x->names_mem = calloc(((size_t)1 << NAMES_BITS) * sizeof(*x->names) + NAMES_ALIGN,
				      1);
		if (!x->names_mem)
			return NULL;
		x->names = (struct symname *)(((uintptr_t)x->names_mem + NAMES_ALIGN - 1) &
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
 * "symbol+0xoff" (image_sym_format()) of @y, the address of entry @e (NULL: none), in
 * @buf or the entry's own copy: the name, its length (@nlen) and whether it is printable
 * as it is.
 */
const char *symbolize(const struct image_sym *y, struct symname *e, char *buf,
		      size_t len, bool *is_plain, size_t *nlen)
{
	size_t n;

	if (e && (e->named & SYM_NAMED)) {
		*is_plain = e->named & SYM_PLAIN;
		*nlen = e->len;
		return e->name;
	}
	/* Its length as spelled: not measured again (strnlen() over every miss). */
	n = image_sym_format(y, buf, len);
	*is_plain = plain(buf, n);
	*nlen = n;
	if (e && n < sizeof(e->name)) {
		memcpy(e->name, buf, n + 1);
		e->len = (uint8_t)n;
		e->named = SYM_NAMED | (*is_plain ? SYM_PLAIN : 0);
		return e->name;
	}
	return buf;
}

/*
 * name_of()'s miss: the entry of the set's way used less lately, but never @busy, the
 * entry that holds the other end's name, in use. No set (no section, no memory): the
 * name is spelled into @buf and nothing is kept.
 */
const char *name_find(struct dec *x, uint32_t pid, int isid, uint64_t ip,
		      const struct symname *busy, struct symname **used, char *buf,
		      size_t len, bool *is_plain, size_t *nlen)
{
	struct symname *set = sym_set_of(x, pid, isid, ip), *e;
	const char *name;
	struct image_sym y;
	int w;

	*used = NULL;
	if (!set) {
		image_resolve_pid(x->img, pid, isid, ip, &y);
		return symbolize(&y, NULL, buf, len, is_plain, nlen);
	}
	w = set[0].named & SYM_RECENT ? 1 : 0;
	if (&set[w] == busy)
		w = !w;
	e = &set[w];
	image_resolve_pid(x->img, pid, isid, ip, &e->sym);
	x->names_used += !e->isid;
	e->ip = ip;
	e->isid = isid;
	e->pid = pid;
	e->named = 0;
	name = symbolize(&e->sym, e, buf, len, is_plain, nlen);
	sym_touch(e, &set[!w]);
	*used = e;
	return name;
}
