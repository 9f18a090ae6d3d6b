// SPDX-License-Identifier: MIT
/*
 * Blocks' --insn lines, kept in a ring and found through a set-associative table
 * (insnblk.h).
 *
 * A record is a head (the block's address, its count, its text's length: 16 bytes) and the
 * text, at a ring position a multiple of 8 that never wraps (the rest of the ring is skipped
 * instead). Positions grow for ever; a record is still there while the ring has not come
 * round to it: insnblk_room() lets its caller write up to INSNBLK_TEXT_MAX bytes past the
 * head, so a record counts as there only while it lies more than that from being written
 * over.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "insnblk.h"
#include "memfill.h"

#define WAYS 4
#define HEAD 16
#define ROOM (HEAD + INSNBLK_TEXT_MAX)
/* A position past this (2^47 bytes of texts: never in practice) empties the cache. */
#define POS_MAX (1ull << 47)

struct entry {
	uint64_t ip;
	uint64_t pn;	/* the record's position + 1 (0: none), its count in the top 16 bits */
};

struct insnblk {
	struct entry *sets;	/* INSNBLK_SETS * WAYS, 64-byte aligned in sets_mem */
	void *sets_mem;
	char *ring;		/* INSNBLK_RING */
	uint64_t head;		/* ring bytes written and skipped since the start */
	uint32_t used;		/* entries filled since the last clear */
};

_Static_assert(INSNBLK_ENTRIES == INSNBLK_SETS * WAYS && sizeof(struct entry) == 16,
	       "insnblk.h's bound");
_Static_assert(INSNBLK_RING > 2 * ROOM, "the ring holds more than a block's room");

struct insnblk *insnblk_new(void)
{
	struct insnblk *c = calloc(1, sizeof(*c));
	size_t table = (size_t)INSNBLK_SETS * WAYS * sizeof(struct entry);

	if (!c)
		return NULL;
	/* calloc(), malloc(): pages touched only as used (a small program costs little). */
	c->sets_mem = calloc(1, table + 64);
	c->ring = malloc(INSNBLK_RING);
	if (!c->sets_mem || !c->ring) {
		insnblk_free(c);
		return NULL;
	}
	c->sets = (struct entry *)(((uintptr_t)c->sets_mem + 63) & ~(uintptr_t)63);
	return c;
}

void insnblk_free(struct insnblk *c)
{
	if (!c)
		return;
	free(c->sets_mem);
	free(c->ring);
	free(c);
}

void insnblk_clear(struct insnblk *c)
{
	memset(c->sets, 0, (size_t)INSNBLK_SETS * WAYS * sizeof(struct entry));
	c->head = 0;
	c->used = 0;
}

uint32_t insnblk_used(const struct insnblk *c)
{
	return c->used;
}

static struct entry *set_of(struct insnblk *c, uint64_t ip, unsigned n)
{
	uint64_t h = (ip ^ (uint64_t)n << 48) * 0x9e3779b97f4a7c15ull;

	return &c->sets[(size_t)(h >> (64 - 14)) * WAYS];
}

_Static_assert(INSNBLK_SETS == 1u << 14, "set_of()'s bits");

const char *insnblk_find(struct insnblk *c, uint64_t ip, unsigned n, size_t *len)
{
	struct entry *set = set_of(c, ip, n);
	uint64_t pn = (uint64_t)n << 48;

	for (unsigned i = 0; i < WAYS; i++) {
		uint64_t pos;
		const char *r;
		uint64_t rip;
		uint32_t rn, rlen;

		if (set[i].ip != ip || (set[i].pn & ~0xffffffffffffull) != pn ||
		    !(set[i].pn & 0xffffffffffffull))
			continue;
		pos = (set[i].pn & 0xffffffffffffull) - 1;
		if (c->head - pos > INSNBLK_RING - ROOM)
			return NULL;	/* written over */
		r = c->ring + pos % INSNBLK_RING;
		memcpy(&rip, r, 8);
		memcpy(&rn, r + 8, 4);
		memcpy(&rlen, r + 12, 4);
		if (rip != ip || rn != n)
			return NULL;
		*len = rlen;
		return r + HEAD;
	}
	return NULL;
}

char *insnblk_room(struct insnblk *c, size_t max)
{
	uint64_t at;

	(void)max;	/* ROOM bytes from the head: at most INSNBLK_TEXT_MAX of text */
	if (c->head >= POS_MAX)
		insnblk_clear(c);
	at = c->head % INSNBLK_RING;
	if (INSNBLK_RING - at < ROOM) {
		c->head += INSNBLK_RING - at;
		at = 0;
	}
	return c->ring + at + HEAD;
}

void insnblk_keep(struct insnblk *c, uint64_t ip, unsigned n, size_t len)
{
	struct entry *set = set_of(c, ip, n);
	char *r = c->ring + c->head % INSNBLK_RING;
	uint32_t rn = n, rlen = (uint32_t)len;
	unsigned i;

	memcpy(r, &ip, 8);
	memcpy(r + 8, &rn, 4);
	memcpy(r + 12, &rlen, 4);
	/* The entry of this block, gone stale, or the oldest of the set makes room. */
	for (i = 0; i < WAYS - 1; i++)
		if (set[i].ip == ip && set[i].pn >> 48 == n)
			break;
	if (i == WAYS - 1 && !set[i].pn)
		c->used++;
	memmove(&set[1], &set[0], i * sizeof(*set));
	set[0].ip = ip;
	set[0].pn = (uint64_t)n << 48 | (c->head + 1);
	c->head += (HEAD + len + 7) & ~(size_t)7;
}

/* ---- shared by the threads of a run ---- */

/*
 * Index slots (a record's position / 8 + 1 in the low POS_BITS, 0: empty; above them
 * TAG_BITS of the key's hash): twice the entries, 256 KiB. A slot of another key is passed
 * by its tag without reading its record: each record read is a cache miss on a large
 * trace (the walk of bench/decode: 8 MB of lines), and at half full a search passed one
 * slot of another key in two or three.
 */
#define SLOTS (2 * INSNBLK_SHARED_ENTRIES)
#define POS_BITS 21
#define TAG_BITS (32 - POS_BITS)

struct insnblk_shared {
	char *rec;		/* INSNBLK_RING: records (HEAD, then the text) one after another */
	uint32_t *idx;		/* SLOTS */
	bool full;		/* read and written atomically */
	/* What a keep writes, in a line of its own: the pointers above are read at each find. */
	uint64_t end __attribute__((aligned(64)));	/* bytes of records written */
	uint32_t used;		/* records */
	pthread_mutex_t lock;
};

_Static_assert(INSNBLK_RING / 8 + 1 < 1u << POS_BITS && (SLOTS & (SLOTS - 1)) == 0 &&
	       INSNBLK_RING + (uint64_t)SLOTS * 4 <= INSNBLK_BYTES,
	       "insnblk_shared's index and bound");

struct insnblk_shared *insnblk_shared_new(void)
{
	struct insnblk_shared *s = aligned_alloc(64, sizeof(*s));

	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	/*
	 * malloc(): the records' pages touched only as used, each written first. The index
	 * (256 KiB) written whole now (memfill.h): each find reads it first, and a slot's
	 * page kept from calloc() was the zero page, copied on its first insert with a
	 * flush of the other worker's TLB.
	 */
	s->rec = malloc(INSNBLK_RING);
	s->idx = calloc(SLOTS, sizeof(*s->idx));
	if (!s->rec || !s->idx || memfill_lock_init(&s->lock)) {
		free(s->idx);
		free(s->rec);
		free(s);
		return NULL;
	}
	memfill(s->idx, SLOTS * sizeof(*s->idx));
	return s;
}

void insnblk_shared_free(struct insnblk_shared *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s->idx);
	free(s->rec);
	free(s);
}

static inline uint64_t key_hash(uint64_t ip, unsigned n)
{
	return (ip ^ (uint64_t)n << 48) * 0x9e3779b97f4a7c15ull;
}

/* The hash's top 16 bits pick the slot, the TAG_BITS below them tag it. */
static inline size_t slot_of(uint64_t h)
{
	return (size_t)(h >> (64 - 16));
}

static inline uint32_t tag_of(uint64_t h)
{
	return (uint32_t)(h >> (64 - 16 - TAG_BITS)) << POS_BITS;
}

_Static_assert(SLOTS == 1u << 16, "slot_of()'s bits");

/* The record of @n from @ip, or NULL with @slot the empty slot where the search ended. */
static const char *shared_lookup(const struct insnblk_shared *s, uint64_t ip, unsigned n,
				 size_t *slot)
{
	uint64_t h = key_hash(ip, n);
	uint32_t i, tag = tag_of(h);
	size_t k = slot_of(h);

	for (; (i = __atomic_load_n(&s->idx[k], __ATOMIC_ACQUIRE)); k = (k + 1) % SLOTS) {
		const char *r;
		uint64_t rip;
		uint32_t rn;

		if ((i & ~((1u << POS_BITS) - 1)) != tag)
			continue;
		r = s->rec + (size_t)((i & ((1u << POS_BITS) - 1)) - 1) * 8;
		memcpy(&rip, r, 8);
		memcpy(&rn, r + 8, 4);
		if (rip == ip && rn == n)
			return r;
	}
	*slot = k;
	return NULL;
}

const char *insnblk_shared_find(const struct insnblk_shared *s, uint64_t ip, unsigned n,
				size_t *len)
{
	const char *r;
	uint32_t rlen;
	size_t slot;

	r = shared_lookup(s, ip, n, &slot);
	if (!r)
		return NULL;
	memcpy(&rlen, r + 12, 4);
	*len = rlen;
	return r + HEAD;
}

bool insnblk_shared_add(struct insnblk_shared *s, uint64_t ip, unsigned n, const char *text,
			size_t len)
{
	uint32_t rn = n, rlen = (uint32_t)len;
	size_t slot, size = (HEAD + len + 7) & ~(size_t)7;
	bool kept = true;
	char *r;

	if (len > INSNBLK_TEXT_MAX || insnblk_shared_full(s))
		return false;
	pthread_mutex_lock(&s->lock);
	/* Another thread may have kept it meanwhile. */
	if (shared_lookup(s, ip, n, &slot))
		goto out;
	if (s->used == INSNBLK_SHARED_ENTRIES ||
	    INSNBLK_RING - s->end < size) {
		__atomic_store_n(&s->full, true, __ATOMIC_RELAXED);
		kept = false;
		goto out;
	}
	r = s->rec + s->end;
	memcpy(r, &ip, 8);
	memcpy(r + 8, &rn, 4);
	memcpy(r + 12, &rlen, 4);
	memcpy(r + HEAD, text, len);
	__atomic_store_n(&s->idx[slot], ((uint32_t)(s->end / 8) + 1) | tag_of(key_hash(ip, n)),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&s->end, s->end + size, __ATOMIC_RELAXED);
	__atomic_store_n(&s->used, s->used + 1, __ATOMIC_RELAXED);
out:
	pthread_mutex_unlock(&s->lock);
	return kept;
}

bool insnblk_shared_full(const struct insnblk_shared *s)
{
	return __atomic_load_n(&s->full, __ATOMIC_RELAXED);
}

uint64_t insnblk_shared_bytes(const struct insnblk_shared *s)
{
	return __atomic_load_n(&s->end, __ATOMIC_RELAXED);
}

uint32_t insnblk_shared_used(const struct insnblk_shared *s)
{
	return __atomic_load_n(&s->used, __ATOMIC_RELAXED);
}
