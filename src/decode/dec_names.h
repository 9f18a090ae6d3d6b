/* SPDX-License-Identifier: MIT */
/*
 * dec_names.c: the names of call and return addresses, kept; the hit path (name_of()) in
 * line.
 */
#ifndef PTC_DEC_NAMES_H
#define PTC_DEC_NAMES_H

#include "dec.h"

/*
 * Symbols of call and return addresses kept: 2^NAMES_BITS of 128 bytes (4 MiB, touched as
 * used; the bench's walk names 25,000 addresses: 8192 slots cost its --calls some 13 %,
 * 16,384 slots still missed a lookup in four, each resolved and spelled again).
 */
#define NAMES_BITS 15
#define NAMES_SET_BITS (NAMES_BITS - 1)	/* sets of two ways */

/*
 * What an address of a section is, kept by name_of(): its key and its name spelled, in
 * one cache line (a hit reads only that; the other half of the entry is the set's cold
 * part).
 */
struct symname {
	uint64_t ip;
	int isid;		/* 0: empty */
	uint32_t pid;
	uint8_t named;		/* SYM_NAMED: @name spelled, SYM_COLD: in the cold part;
				 * | SYM_PLAIN: as printable.h prints it;
				 * SYM_RECENT: the way of its set used last */
	uint8_t len;
	char name[46];
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct symname) == 64, "a cache line an entry's key and name");

/*
 * A way's cold part: a name too long for its line, spelled, or else its symbol, spelled
 * at each use (a name of 64 bytes or more).
 */
union symcold {
	struct image_sym sym;
	char name[64];
};

/*
 * A set: both ways' lines in one aligned pair, the cold parts after them. The CPU fetches
 * lines in aligned pairs: with a way's key and its cold half in one pair, a lookup that
 * reads both ways' keys brought in both cold halves as well (the walk's --calls -J 1,
 * 25,000 names: 2 % to 3 % less CPU this way).
 */
struct nameset {
	struct symname way[2];
	union symcold cold[2];
} __attribute__((aligned(128)));
_Static_assert(sizeof(struct nameset) == 256, "two ways of 128 bytes");

#define SYM_NAMED 1
#define SYM_PLAIN 2
#define SYM_RECENT 4
#define SYM_COLD 8

/*
 * The table is written group by group before a lookup reads it (memfill.h: a page read
 * first is the zero page, and the insert's copy on write then flushes the other workers'
 * TLBs, an IPI each: the walk's -J 2 --calls spent 8 % of its samples there). 64 groups
 * of 64 KiB, a bit each in dec.names_filled; a trace of few names writes few (a half with
 * 8 written goes into a huge page: dec_names.c).
 */
#define NAMES_GROUP_SHIFT 8	/* sets a group: 256 of 256 bytes */
_Static_assert((1u << NAMES_SET_BITS) >> NAMES_GROUP_SHIFT == 64, "a bit a group");

void names_fill(struct dec *x, size_t set) __attribute__((cold));
/* The table name_of() made (dec.names), given back. */
void names_free(void *names);

/* Whether the group of set @set was written (names_fill()). */
static inline bool names_written(const struct dec *x, size_t set)
{
	return x->names_filled >> (set >> NAMES_GROUP_SHIFT) & 1;
}

/* Set @set of the table (there), its group written first where it was not. */
static inline struct nameset *names_at(struct dec *x, size_t set)
{
	if (__builtin_expect(!names_written(x, set), 0))
		names_fill(x, set);
	return &x->names[set];
}

/*
 * The cold part of way @e: its set starts at the way's address rounded down to a set's
 * size (the table is page-aligned, dec_names.c, and a set's size a power of two).
 */
static inline union symcold *sym_cold(struct symname *e)
{
	struct nameset *set = (struct nameset *)((uintptr_t)e &
						 ~(uintptr_t)(sizeof(struct nameset) - 1));

	return &set->cold[e - set->way];
}

const char *name_cold(struct symname *e, char *buf, size_t len, bool *is_plain,
		      size_t *nlen);
const char *name_find(struct dec *x, uint32_t pid, int isid, uint64_t ip,
		      const struct symname *busy, struct symname **used, char *buf, size_t len,
		      bool *is_plain, size_t *nlen);

/*
 * The one cache of what an address is (image_resolve_pid()) and its name (its spelling,
 * image_sym_format()), by process, section and address: calls and returns name the same
 * addresses over and over. A section's file and its symbols do not change, so no image
 * change invalidates an entry. NULL for code outside any section (JIT code, named by the
 * process's perf map), looked up each time.
 */
static inline size_t sym_slot(uint32_t pid, int isid, uint64_t ip)
{
	uint64_t h = (ip ^ (uint64_t)isid << 40 ^ (uint64_t)pid << 20) * 0x9e3779b97f4a7c15ull;

	/* Its set. */
	return (size_t)(h >> (64 - NAMES_SET_BITS));
}

/*
 * Its set read ahead (dec_fast.c, a branch or so before name_of()): both ways' keys, one
 * aligned pair of lines. Always in line: a function of prefetches only is taken for one
 * without effect, and its call dropped (gcc 12).
 */
static inline __attribute__((always_inline)) void
names_prefetch(const struct dec *x, uint32_t pid, int isid, uint64_t ip)
{
	const struct nameset *set = &x->names[sym_slot(pid, isid, ip)];

	__builtin_prefetch(&set->way[0]);
	__builtin_prefetch(&set->way[1]);
}

static inline bool sym_is(const struct symname *e, uint32_t pid, int isid, uint64_t ip)
{
	return e->ip == ip && e->isid == isid && e->pid == pid;
}

/* @e was the way of its set used last: a miss takes the other (written only on a change). */
static inline void sym_touch(struct symname *e, struct symname *other)
{
	if (!(e->named & SYM_RECENT)) {
		e->named |= SYM_RECENT;
		other->named &= (uint8_t)~SYM_RECENT;
	}
}

/* The way of @set that holds @ip of @isid in @pid, made the recent one; NULL: a miss. */
static inline struct symname *sym_hit(struct nameset *set, uint32_t pid, int isid,
				      uint64_t ip)
{
	for (int w = 0; w < 2; w++) {
		if (sym_is(&set->way[w], pid, isid, ip)) {
			sym_touch(&set->way[w], &set->way[!w]);
			return &set->way[w];
		}
	}
	return NULL;
}

/*
 * The name of @ip in section @isid (symbolize()'s), from its entry in the cache: a hit
 * with the name spelled reads the entry's first line only, in line (the call cost --calls
 * more than the look-up: two each call or return). @used: the entry it took, for the
 * other end's call.
 */
static inline __attribute__((always_inline)) const char *
name_of(struct dec *x, uint32_t pid, int isid, uint64_t ip, const struct symname *busy,
	struct symname **used, char *buf, size_t len, bool *is_plain, size_t *nlen)
{
	struct symname *e;

	if (isid <= 0 || !x->names)
		return name_find(x, pid, isid, ip, busy, used, buf, len, is_plain, nlen);
	if ((e = sym_hit(names_at(x, sym_slot(pid, isid, ip)), pid, isid, ip))) {
		*used = e;
		if (!(e->named & SYM_NAMED))
			return name_cold(e, buf, len, is_plain, nlen);
		*is_plain = e->named & SYM_PLAIN;
		*nlen = e->len;
		return e->name;
	}
	return name_find(x, pid, isid, ip, busy, used, buf, len, is_plain, nlen);
}

#endif
