// SPDX-License-Identifier: MIT
/*
 * ptcollect report (render_report.h), in the chunk: a count per run of instructions
 * (libipt's blocks: a block's in one step) and a record per call, return and trace event
 * (append-only, so that a chunk's trimmed end takes its instructions with it; the records
 * are report_agg.h's). At the merge (report_agg.c), call stacks per thread and one row
 * per function; report_out.c prints them.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_rec.h"
#include "memfill.h"
#include "memimage.h"
#include "render_report.h"
#include "report_rec.h"

/* ---- in the chunk ---- */

/* The last instruction this thread decoded: a call's return address, where tracing resumes. */
static __thread uint64_t last_ip, last_next;

/* This thread's ids of names (by address: symbol tables and paths stay put), per chunk. */
struct def_slot {
	uint64_t chunk;
	const char *p;
	uint16_t id;
};

static __thread struct def_slot defs[2 * DEF_MAX];
/* The last ids found, by hash: a few names come over and over, and stay in the cache. */
static __thread struct def_slot def_memo[16];
static __thread uint64_t def_chunks;
/* Chunk ids (r->chunk) below this: addr_ck() keeps them whole (def_id() gives no more). */
#define ADDR_CHUNK_MAX (1ull << 31)
static __thread unsigned def_count;

static bool tables_get(void);

/*
 * The id of @p in @r's chunk, defined (T_DEF) on first use; -1: the chunk has too many (or
 * the thread's tables could not be had: then the chunk has no id and keeps no address).
 */
static int def_id(struct render *r, const char *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull;
	struct def_slot *m = &def_memo[h >> 60];
	size_t n, i;
	struct pdef d;
	uint8_t *w;

	if (m->chunk == r->chunk && m->p == p && r->chunk)
		return m->id;
	if (!r->chunk) {
		if (def_chunks + 1 >= ADDR_CHUNK_MAX || !tables_get())
			return -1;
		r->chunk = ++def_chunks;
		def_count = 0;
	}
	for (i = (h >> 40) & (2 * DEF_MAX - 1);; i = (i + 1) & (2 * DEF_MAX - 1)) {
		if (defs[i].chunk != r->chunk)
			break;
		if (defs[i].p == p) {
			*m = defs[i];
			return defs[i].id;
		}
	}
	if (def_count >= DEF_MAX)
		return -1;
	n = strnlen(p, NAME_LEN);
	w = dsink_room(r->sink, 1 + sizeof(d) + n);
	if (!w)
		return -1;
	d.id = (uint16_t)def_count;
	d.len = (uint16_t)n;
	w[0] = T_DEF;
	memcpy(w + 1, &d, sizeof(d));
	memcpy(w + 1 + sizeof(d), p, n);
	dsink_commit(r->sink, 1 + sizeof(d) + n);
	defs[i] = (struct def_slot){ .chunk = r->chunk, .p = p, .id = d.id };
	*m = defs[i];
	return def_count++;
}

static inline __attribute__((always_inline)) void put_fixed(struct dsink *s, uint8_t tag,
							     const void *rec, size_t n)
{
	uint8_t *w = dsink_room(s, 1 + n);

	if (!w)
		return;
	w[0] = tag;
	memcpy(w + 1, rec, n);
	dsink_commit(s, 1 + n);
}

/* The id of @y's symbol (@how: N_*), and of its object in @obj; false: no id left. */
static bool sym_ids(struct render *r, const struct image_sym *y, bool callee, uint16_t *name,
		    uint16_t *obj, uint8_t *how)
{
	int n = 0, o = def_id(r, y->file ? y->file : "");

	if (o < 0)
		return false;
	*how = !y->name ? N_UNKNOWN : callee && y->off ? N_SYMOFF : N_SYM;
	if (y->name && (n = def_id(r, y->name)) < 0)
		return false;
	*name = (uint16_t)n;
	*obj = (uint16_t)o;
	return true;
}

/* The function at @ip of section @isid in @rec's image and process (0: none). */
static void resolve(const struct rrec *rec, uint64_t ip, int isid, struct image_sym *y)
{
	memset(y, 0, sizeof(*y));
	if (ip)
		image_resolve_pid(rec->img, rec->sym_pid, isid, ip, y);
}

/* @isid, or where it is -1 (render.h: not looked up), the base image's section at @ip. */
static int real_isid(const struct rrec *rec, uint64_t ip, int isid)
{
	uint64_t end;

	return isid >= 0 || !ip ? isid : image_base_find(rec->img, ip, &end);
}

/*
 * The ids of the function at @ip (section @isid) in this chunk, and its offset; false: no id
 * left. Kept by chunk, section and address: calls and returns name a few addresses over and
 * over. (Code outside any section, JIT code, is looked up each time: its perf map may grow.)
 * A slot is two tables: the key that a look-up reads (addr_key: 16 bytes; callees' are in
 * indexes of their own, below), and what a record by ids needs (addr_val), read only where
 * one is made.
 * In one 40-byte slot the look-up missed the cache on a walk over 20,000 functions: half of
 * the worker's report time over --stats' went to that compare. A chunk's address, once
 * kept, keeps its slot (open addressing, linear probing) until ADDR_FULL are kept: mapped to
 * one slot, the walk's one chunk (-J 1) defined a slot 135,414 times for 1.37 M calls, most
 * of them an address that another had pushed out; in any of the four slots of a cache line
 * of keys, 54,455 times; so, once for each of its functions (each T_ADEF is a symbol looked
 * up and names hashed in the worker, a row found by name in the merge).
 */
struct addr_key {
	uint64_t ip;
	uint64_t ck;			/* addr_ck(): the generation, the section, callee or not */
};

struct addr_val {
	uint64_t off;
	uint16_t name, obj;
	uint8_t how;
};

/*
 * tables_get()'s: a chunk with an id (r->chunk) has them. aval[]: ADDR_SLOTS; akey[]: the
 * keys of the slots not callees' (ADDR_SLOTS - ADDR_CALLEES, from slot ADDR_CALLEES on:
 * rkey()); callees' keys are in csm[] and cidx[] (below).
 */
static __thread struct addr_key *akey;
static __thread struct addr_val *aval;
/* Times a slot (akey[], aval[]) was written: a batch kept (struct bmemo) holds while it stays. */
static __thread uint64_t addr_gen;

/* The time T_TIME last said in this thread's chunk @time_chunk. */
static __thread uint64_t time_chunk, time_at;
static __thread bool time_has;

/*
 * The slots in two parts: callees' (a call's look-up, the most) and the rest (returns'
 * addresses, either end: T_RETN, T_RETA), each with its generation: a key holds only in the
 * generation it was written in, and every other key of its part is a free slot. A new
 * generation at each chunk (r->chunk; its slots are its own) and, for a part, where
 * ADDR_FULL of its slots hold: then its addresses are defined again, in slots the merge
 * keeps until a T_ADEF says another (what a slot held stays what the merge has for it: a
 * T_SUM or a batch kept names no slot that is not). Generation 0: none left (no slot is
 * kept, as for a chunk without an id). The walk over 20,000 functions (bench/decode's) names
 * 20,814 callees and some 8,000 other addresses: in one part, they came to ADDR_FULL and
 * every callee was defined twice.
 */
#define ADDR_CALLEES (ADDR_SLOTS / 8 * 7)
#define ADDR_FULL(n) ((n) / 4 * 3)	/* (3/4: linear probing's look-ups stay short) */

static __thread uint64_t ak_chunk, ak_gen[2], ak_gens;
static __thread uint32_t ak_n[2];

/*
 * Callees' keys are not in the slots: a callee's slot is the next of its generation (ak_n),
 * found by address in an index. csm[]: section -1 (the fast path's calls) below 2^47, 8
 * bytes an entry (CSMALL_VALID | slot << 47 | address), 256 KiB, two thirds full at most;
 * its entries emptied at each new generation (those in csm_used[]). cidx[]: the others (the
 * slow path's sections, addresses above), 16 bytes (the address; the generation, ci_gen, in
 * 16 bits, the index cleared where they wrap; slot; section), two thirds full at most.
 * Found in the slots themselves (linear probing in 28,672 slots, up to 3/4 full), the walk's
 * 20,814 callees took a probe loop of varying length, and its key's load was 70 % of
 * sum_batch()'s profile samples. The index's size is what counts: the workers of the
 * walk's `report -J 2` took 0.91x the CPU with csm[] at 256 KiB, 0.94x at 512 KiB; 16-byte
 * entries in 1 MiB, 1.00x.
 */
#define CSMALL_BITS 15
#define CSMALL (1u << CSMALL_BITS)
#define CSMALL_VALID (1ull << 63)
#define CSMALL_IP ((1ull << 47) - 1)

static __thread uint64_t *csm;
static __thread uint32_t *csm_used, csm_n;
_Static_assert(ADDR_CALLEES <= 1u << 16 && ADDR_FULL(ADDR_CALLEES) < CSMALL,
	       "a callee's slot in 16 bits, a free entry in the small index");

#define CIDX_BITS 15
#define CIDX (1u << CIDX_BITS)

struct cidx_ent {
	uint64_t ip;
	uint64_t w;			/* ci_gen << 48 | slot << 32 | (uint32_t)isid */
};

static __thread struct cidx_ent *cidx;
static __thread uint64_t ci_gen;
_Static_assert(ADDR_FULL(ADDR_CALLEES) < CIDX, "a free entry in the index");

/* Whether callee @ip (@isid) is kept in csm[]. */
static inline bool csmall_fits(uint64_t ip, int isid)
{
	return isid == -1 && ip <= CSMALL_IP;
}

/* The entry @ip looks from first in csm[]. */
static inline uint32_t csmall_home(uint64_t ip)
{
	return (uint32_t)((ip * 0x9e3779b97f4a7c15ull) >> (64 - CSMALL_BITS));
}

/* Callee @ip's slot (section -1, csmall_fits()) in the callees' generation, or -1. */
static inline int csmall_find(uint64_t ip)
{
	for (uint32_t a = csmall_home(ip);; a = (a + 1) & (CSMALL - 1)) {
		uint64_t e = csm[a];

		if (!e)
			return -1;
		if ((e & CSMALL_IP) == ip)
			return (int)(uint16_t)(e >> 47);
	}
}

/* The entry @ip (@isid) looks from first in cidx[]. */
static inline uint32_t cidx_home(uint64_t ip, int isid)
{
	return (uint32_t)(((ip ^ (uint64_t)(uint32_t)isid << 40) * 0x9e3779b97f4a7c15ull) >>
			  (64 - CIDX_BITS));
}

/* Callee @ip's slot (section @isid) in the callees' generation, or -1 (none there). */
static inline int callee_find(uint64_t ip, int isid)
{
	if (csmall_fits(ip, isid))
		return csmall_find(ip);
	for (uint32_t a = cidx_home(ip, isid);; a = (a + 1) & (CIDX - 1)) {
		uint64_t w = cidx[a].w;

		if (w >> 48 != ci_gen)
			return -1;
		if (cidx[a].ip == ip && (uint32_t)w == (uint32_t)isid)
			return (int)(uint16_t)(w >> 32);
	}
}

/* The key of a slot not callees' (@a: from ADDR_CALLEES on). */
static inline struct addr_key *rkey(uint32_t a)
{
	return &akey[a - ADDR_CALLEES];
}

static void addr_renew(bool callee)
{
	if (callee && ++ci_gen >> 16) {
		if (cidx)
			memset(cidx, 0, CIDX * sizeof(*cidx));
		ci_gen = 1;
	}
	for (; callee && csm_n; csm_n--)
		csm[csm_used[csm_n - 1]] = 0;
	ak_n[callee] = 0;
	ak_gen[callee] = ak_gens + 1 < ADDR_CHUNK_MAX ? ++ak_gens : 0;
}

/* The generation of @r's chunk's slots of callees (@callee) or not. */
static inline uint64_t addr_epoch(const struct render *r, bool callee)
{
	if (ak_chunk != r->chunk) {
		ak_chunk = r->chunk;
		addr_renew(false);
		addr_renew(true);
	}
	return ak_gen[callee];
}

/* The key of @ip (section @isid, as a callee or not) in generation @gen (never 0). */
static inline uint64_t addr_ck(uint64_t gen, int isid, bool callee)
{
	return gen << 33 | (uint64_t)(uint32_t)isid << 1 | (uint64_t)callee;
}

/* The first slot of callees' part (@callee) or the other, and its slots. */
static inline uint32_t addr_base(bool callee)
{
	return callee ? 0 : ADDR_CALLEES;
}

static inline uint32_t addr_size(bool callee)
{
	return callee ? ADDR_CALLEES : ADDR_SLOTS - ADDR_CALLEES;
}

/* The slot @ip (section @isid, as a callee or not) looks from first (then on, in turn). */
static inline uint32_t addr_home(uint64_t ip, int isid, bool callee)
{
	uint64_t h = (ip ^ (uint64_t)isid << 40 ^ (uint64_t)callee << 63) * 0x9e3779b97f4a7c15ull;

	return addr_base(callee) + (uint32_t)((h >> 32) * addr_size(callee) >> 32);
}

/* The slot after @a in its part. */
static inline uint32_t addr_next(uint32_t a, bool callee)
{
	return ++a == addr_base(callee) + addr_size(callee) ? addr_base(callee) : a;
}

/* Whether slot @a holds @ip (@isid, @callee) for @r's chunk. */
static inline bool addr_slot_holds(const struct render *r, uint32_t a, uint64_t ip, int isid,
				   bool callee)
{
	uint64_t g = r->chunk ? addr_epoch(r, callee) : 0;

	if (callee)
		return g && callee_find(ip, isid) == (int)a;
	return g && rkey(a)->ip == ip && rkey(a)->ck == addr_ck(g, isid, callee);
}

/*
 * The slot that holds @ip (@isid, @callee) for @r's chunk (which has an id), or -1: from
 * its home slot on to the first free one (a generation's keys are never taken back, and
 * hold ADDR_FULL of their part's slots at most: there is a free one).
 */
static inline int addr_find(const struct render *r, uint64_t ip, int isid, bool callee)
{
	uint64_t g = addr_epoch(r, callee), ck = addr_ck(g, isid, callee);
	uint32_t a = addr_home(ip, isid, callee);

	if (!g)
		return -1;
	if (callee)
		return callee_find(ip, isid);
	for (;; a = addr_next(a, callee)) {
		if (rkey(a)->ck >> 33 != g)
			return -1;
		if (rkey(a)->ip == ip && rkey(a)->ck == ck)
			return (int)a;
	}
}

/*
 * The free slot to define @ip (@isid, @callee) in, for @r's chunk (not kept there); a new
 * generation of its part first where ADDR_FULL hold (and the batches kept, which name the
 * slots, are no more: addr_gen). -1: none (no generation left).
 */
static inline int addr_free(const struct render *r, uint64_t ip, int isid, bool callee)
{
	uint32_t a = addr_home(ip, isid, callee);
	uint64_t g = addr_epoch(r, callee);

	if (g && ak_n[callee] >= ADDR_FULL(addr_size(callee))) {
		addr_renew(callee);
		addr_gen++;
		g = ak_gen[callee];
	}
	if (!g)
		return -1;
	if (callee) {
		uint64_t slot = ak_n[callee]++;

		if (csmall_fits(ip, isid)) {
			for (a = csmall_home(ip); csm[a]; a = (a + 1) & (CSMALL - 1))
				;
			csm[a] = CSMALL_VALID | slot << 47 | ip;
			csm_used[csm_n++] = a;
			return (int)slot;
		}
		for (a = cidx_home(ip, isid); cidx[a].w >> 48 == ci_gen; a = (a + 1) & (CIDX - 1))
			;
		cidx[a] = (struct cidx_ent){ .ip = ip,
					     .w = ci_gen << 48 | slot << 32 | (uint32_t)isid };
		return (int)slot;
	}
	while (rkey(a)->ck >> 33 == g)
		a = addr_next(a, callee);
	ak_n[callee]++;
	return (int)a;
}

/* @aid: the address's slot (defined by T_ADEF in this chunk), -1: none (not kept). */
static bool addr_ids(struct render *r, const struct rrec *rec, uint64_t ip, int isid,
		     bool callee, uint16_t *name, uint16_t *obj, uint8_t *how, uint64_t *off,
		     int *aid)
{
	int f = r->chunk ? addr_find(r, ip, isid, callee) : -1;
	struct image_sym y;
	uint32_t a;
	int real;

	if (f >= 0) {
		a = (uint32_t)f;
		*name = aval[a].name;
		*obj = aval[a].obj;
		*how = aval[a].how;
		*off = aval[a].off;
		*aid = (int)a;
		return true;
	}
	*aid = -1;
	real = real_isid(rec, ip, isid);
	resolve(rec, ip, real, &y);
	if (!sym_ids(r, &y, callee, name, obj, how))
		return false;
	*off = y.off;
	/* (kept by @isid as given: -1 stands for the same section at every use in a chunk;
	 * sym_ids() gave the chunk its id, and the tables, if it had none) */
	if (ip && real > 0 && r->chunk && (f = addr_free(r, ip, isid, callee)) >= 0) {
		struct padef d;

		a = (uint32_t)f;
		d = (struct padef){ .aid = (uint16_t)a, .name = *name, .obj = *obj,
				    .how = *how, .off = y.off };
		if (!callee)
			*rkey(a) = (struct addr_key){ .ip = ip,
						      .ck = addr_ck(ak_gen[callee], isid, callee) };
		aval[a] = (struct addr_val){ .off = y.off, .name = *name, .obj = *obj,
					     .how = *how };
		addr_gen++;
		put_fixed(r->sink, T_ADEF, &d, sizeof(d));
		*aid = d.aid;
	}
	return true;
}

/* T_TIME: put_time()'s, where the time is not the one last said. */
static __attribute__((noinline)) void put_new_time(struct render *r, const struct rrec *rec)
{
	uint64_t t = rec->has_time ? rec->time : 0;
	struct ptime p;

	time_chunk = r->chunk;
	time_has = rec->has_time;
	time_at = t;
	p.has_time = rec->has_time;
	p.time = t;
	put_fixed(r->sink, T_TIME, &p, sizeof(p));
}

/* T_TIME before a T_CALLV or T_RET* whose time is not the last one said in this chunk. */
static inline void put_time(struct render *r, const struct rrec *rec)
{
	if (time_chunk != r->chunk || time_has != rec->has_time ||
	    time_at != (rec->has_time ? rec->time : 0))
		put_new_time(r, rec);
}

/*
 * The chunk's own view of the merge's top frames (T_RETTOP): the return addresses of the
 * calls flow() wrote since the last record that may change the merge's stacks otherwise
 * (put()'s, a far return, a return not to the top frame), the latest SHADOW of them; and
 * the return address the last T_CALLV said. Both are of the chunk @ep_chunk (render.chunk:
 * a new one where the decoder took the sink's end back).
 */
#define SHADOW 64
static __thread uint64_t ep_chunk, ep_ret;
static __thread bool ep_has_ret;
static __thread uint64_t sh_ret[SHADOW];
static __thread uint32_t sh_n, sh_top;

static inline void epoch(const struct render *r)
{
	if (ep_chunk != r->chunk) {
		ep_chunk = r->chunk;
		ep_has_ret = false;
		sh_n = 0;
	}
}

/* A call flow() wrote, returning to @ret, is the merge's top frame. */
static inline void sh_push(const struct render *r, uint64_t ret)
{
	if (!r->chunk)
		return;
	epoch(r);
	sh_ret[sh_top++ % SHADOW] = ret;
	sh_n += sh_n < SHADOW;
}

static inline uint8_t *put_varint(uint8_t *w, uint64_t v)
{
	while (v >= 0x80) {
		*w++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*w++ = (uint8_t)v;
	return w;
}

/* The room a T_CALLV takes at most. */
#define CALLV_MAX (1 + 2 * VARINT_MAX + sizeof(uint16_t))

/*
 * T_CALLV (or T_CALLV0) at @w: a call of the function at slot @aid after @k instructions,
 * returning to @ret, the epoch's last return address @prev (@has_prev: there is one).
 * Returns the end.
 */
static inline uint8_t *callv_spell(uint8_t *w, uint32_t k, uint16_t aid, uint64_t ret,
				   uint64_t prev, bool has_prev)
{
	uint8_t *p = put_varint(w + 1, k);

	memcpy(p, &aid, sizeof(aid));
	p += sizeof(aid);
	if (has_prev) {
		int64_t d = (int64_t)(ret - prev);

		w[0] = T_CALLV;
		return put_varint(p, (uint64_t)d << 1 ^ (uint64_t)(d >> 63));
	}
	w[0] = T_CALLV0;
	return put_varint(p, ret);
}

/* T_CALLV (or T_CALLV0): a call of the function at slot @aid after @k instructions. */
static inline void put_callv(struct render *r, uint32_t k, uint16_t aid, uint64_t ret)
{
	struct dsink *s = r->sink;
	uint8_t *w = dsink_room(s, CALLV_MAX), *p;

	if (!w)
		return;
	epoch(r);
	p = callv_spell(w, k, aid, ret, ep_ret, ep_has_ret);
	ep_ret = ret;
	ep_has_ret = true;
	dsink_commit(s, (size_t)(p - w));
}

/* T_RUN of @k instructions (0: none), before a record. */
static inline void put_run(struct render *r, uint32_t k)
{
	if (k)
		put_fixed(r->sink, T_RUN, &k, sizeof(k));
}

/*
 * A call by ids, after @k instructions (flow(); 0: none); false: none left in this chunk
 * (then T_REC; nothing but definitions written).
 */
static bool put_call(struct render *r, const struct rrec *rec, uint64_t ret, uint32_t k)
{
	uint16_t name, obj;
	struct pcall c;
	uint64_t off;
	uint8_t how;
	int aid;

	if (!addr_ids(r, rec, rec->to, rec->to_isid, true, &name, &obj, &how, &off, &aid))
		return false;
	if (aid >= 0) {
		put_time(r, rec);
		put_callv(r, k, (uint16_t)aid, ret);
		return true;
	}
	put_run(r, k);
	c.name = name;
	c.obj = obj;
	c.how = how;
	c.has_time = rec->has_time;
	c.a = ret;
	c.time = rec->has_time ? rec->time : 0;
	c.off = off;
	put_fixed(r->sink, T_CALL, &c, sizeof(c));
	return true;
}

static bool put_ret(struct render *r, const struct rrec *rec, uint32_t k)
{
	uint16_t from, to, from_obj, to_obj;
	uint64_t from_off, to_off;
	uint8_t hf, ht;
	struct pret x;
	int fa, ta;

	if (!addr_ids(r, rec, rec->from, rec->from_isid, false, &from, &from_obj, &hf,
		      &from_off, &fa) ||
	    !addr_ids(r, rec, rec->to, rec->to_isid, false, &to, &to_obj, &ht, &to_off, &ta))
		return false;
	/* (@to's T_ADEF may have taken @from's slot: then @from's is said again.) */
	if (fa >= 0 && ta >= 0 && fa == ta &&
	    !addr_slot_holds(r, (uint32_t)fa, rec->from, rec->from_isid, false))
		fa = -1;
	if (fa >= 0 && ta >= 0) {
		struct { uint32_t n; struct preta x; } __attribute__((packed)) w = {
			k, { .from = (uint16_t)fa, .to = (uint16_t)ta, .b = rec->to } };

		put_time(r, rec);
		if (k)
			put_fixed(r->sink, T_RETN, &w, sizeof(w));
		else
			put_fixed(r->sink, T_RETA, &w.x, sizeof(w.x));
		return true;
	}
	put_run(r, k);
	x.from = from;
	x.to = to;
	x.from_obj = from_obj;
	x.to_obj = to_obj;
	x.how = (uint8_t)(hf | ht << 2);
	x.has_time = rec->has_time;
	x.b = rec->to;
	x.time = rec->has_time ? rec->time : 0;
	x.from_off = from_off;
	x.to_off = to_off;
	put_fixed(r->sink, T_RET, &x, sizeof(x));
	return true;
}

static void put_rec4(struct dsink *s, const struct rrec *rec, enum prec_kind k, uint64_t a,
		     uint64_t b, const char *s1, const char *s2, const char *s3, const char *s4)
{
	struct prec p;
	size_t l1 = s1 ? strnlen(s1, NAME_LEN) : 0, l2 = s2 ? strnlen(s2, NAME_LEN) : 0;
	size_t l3 = s3 ? strnlen(s3, NAME_LEN) : 0, l4 = s4 ? strnlen(s4, NAME_LEN) : 0;
	size_t all = 1 + sizeof(p) + l1 + l2 + l3 + l4;
	uint8_t *d = dsink_room(s, all);

	if (!d)
		return;
	memset(&p, 0, sizeof(p));
	p.kind = (uint8_t)k;
	p.has_time = rec->has_time;
	p.time = rec->has_time ? rec->time : 0;
	p.pid = rec->pid;
	p.tid = rec->tid;
	p.a = a;
	p.b = b;
	p.len1 = (uint16_t)l1;
	p.len2 = (uint16_t)l2;
	p.len3 = (uint16_t)l3;
	p.len4 = (uint16_t)l4;
	d[0] = T_REC;
	memcpy(d + 1, &p, sizeof(p));
	d += 1 + sizeof(p);
	memcpy(d, s1 ? s1 : "", l1);
	memcpy(d + l1, s2 ? s2 : "", l2);
	memcpy(d + l1 + l2, s3 ? s3 : "", l3);
	memcpy(d + l1 + l2 + l3, s4 ? s4 : "", l4);
	dsink_commit(s, all);
}

static void put_rec(struct dsink *s, const struct rrec *rec, enum prec_kind k, uint64_t a,
		    uint64_t b, const char *s1, const char *s2)
{
	put_rec4(s, rec, k, a, b, s1, s2, NULL, NULL);
}

/*
 * The function at @y: its symbol; a call into the middle of one keeps the offset
 * ("sym+0x4", @callee), an address no symbol covers is "[unknown] (object+0xoff)".
 */
static const char *func_name(const struct image_sym *y, bool callee, char *buf, size_t n)
{
	if (y->name && (!callee || !y->off))
		return y->name;
	image_sym_format(y, buf, n);
	return buf;
}

/* A call or return with its names spelled (T_REC): the chunk has no id left for them. */
static __attribute__((noinline)) void put_spelled(struct render *r, const struct rrec *rec,
						   uint64_t ret)
{
	char f1[NAME_LEN + 1], f2[NAME_LEN + 1];
	struct image_sym y1, y2;

	if (rec->kind == RREC_CALL) {
		resolve(rec, rec->to, real_isid(rec, rec->to, rec->to_isid), &y2);
		put_rec4(r->sink, rec, P_CALL, ret, rec->to, func_name(&y2, true, f1, sizeof(f1)),
			 NULL, y2.file ? y2.file : "", NULL);
		return;
	}
	resolve(rec, rec->from, real_isid(rec, rec->from, rec->from_isid), &y1);
	resolve(rec, rec->to, real_isid(rec, rec->to, rec->to_isid), &y2);
	put_rec4(r->sink, rec, P_RET, rec->from, rec->to,
		 func_name(&y1, false, f1, sizeof(f1)), func_name(&y2, false, f2, sizeof(f2)),
		 y1.file ? y1.file : "", y2.file ? y2.file : "");
}

static void put(struct render *r, const struct rrec *rec)
{
	const struct pt_event *ev;

	/* (what the record does to the merge's stacks is not followed: T_RETTOP starts over) */
	sh_n = 0;
	/*
	 * Only call and return instructions open and close a function's call:
	 * interrupts, VM exits and tracing switched off come as events, which
	 * take their time out of the function (below).
	 */
	if ((rec->kind == RREC_CALL && rec->how != DREC_HOW_CALL) ||
	    (rec->kind == RREC_RETURN && rec->how != DREC_HOW_RET))
		return;
	switch (rec->kind) {
	case RREC_STREAM:
		put_rec(r->sink, rec, P_STREAM, rec->stream, 0, rec->stream_name, NULL);
		break;
	case RREC_CALL: {
		/* The call is the last instruction decoded: the return comes back after it. */
		uint64_t ret = rec->from == last_ip ? last_next : 0;

		if (!put_call(r, rec, ret, 0))
			put_spelled(r, rec, ret);
		break;
	}
	case RREC_RETURN:
		if (!put_ret(r, rec, 0))
			put_spelled(r, rec, 0);
		break;
	case RREC_GAP:
		put_rec(r->sink, rec, P_GAP, 0, 0, rec->name, NULL);
		break;
	case RREC_ERROR:
		put_rec(r->sink, rec, P_GAP, rec->offset, 0, rec->name, NULL);
		break;
	case RREC_THREAD:
		put_rec(r->sink, rec, P_THREAD, 0, 0, NULL, NULL);
		break;
	case RREC_END:
		put_rec(r->sink, rec, P_END, 0, 0, NULL, NULL);
		break;
	case RREC_EVENT:
		ev = rec->event;
		switch (ev->type) {
		case ptev_disabled:
			/* Tracing resumes after the instruction that stopped it (a syscall). */
			put_rec(r->sink, rec, P_OFF, last_next, 0, NULL, NULL);
			break;
		case ptev_async_disabled:
			put_rec(r->sink, rec, P_OFF, ev->variant.async_disabled.at, 0, NULL, NULL);
			break;
		case ptev_enabled:
			put_rec(r->sink, rec, P_ON, ev->variant.enabled.ip,
				ev->variant.enabled.resumed, NULL, NULL);
			break;
		case ptev_async_branch:
			put_rec(r->sink, rec, P_INTR, 0, 0, NULL, NULL);
			break;
		case ptev_overflow:
			put_rec(r->sink, rec, P_GAP, 0, 0, "overflow", NULL);
			break;
		default:
			break;
		}
		break;
	default:
		break;
	}
}

static void insns(struct render *r, uint64_t n, uint64_t ip, uint64_t next, bool far)
{
	struct dsink *s = r->sink;
	uint8_t w[1];
	uint32_t k;

	last_ip = ip;
	last_next = next;
	if (far)
		sh_n = 0;
	if (n == 1) {
		w[0] = far ? T_FARRET : T_INSN;
		if (s->len < s->cap)
			s->buf[s->len++] = w[0];
		else
			dsink_put(s, w, 1);
		return;
	}
	for (; n; n -= k) {
		k = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
		put_fixed(s, far && k == n ? T_RUNFAR : T_RUN, &k, sizeof(k));
	}
}

/* The slot addr_ids() keeps @ip (section @isid) in for this chunk, or -1: not kept yet. */
static inline int addr_kept(const struct render *r, uint64_t ip, int isid, bool callee)
{
	return r->chunk ? addr_find(r, ip, isid, callee) : -1;
}

/*
 * The fast path's call or return after @n instructions, the last it (renderer.flow()): the
 * run in the record where it can be. A return to the top frame's call is T_RETTOP; most
 * calls and other returns name addresses already kept: their record is written here,
 * without put_call()'s or put_ret()'s look-ups (the same bytes).
 */
static void flow_slow(struct render *r, const struct rrec *rec, uint64_t n, uint64_t next);

/* What flow_one() wrote: FLOW_SLOW anything, or one of the records of T_SUMHDR's. */
enum { FLOW_SLOW = -1, FLOW_RETTOP = -2 };	/* else a T_CALLV's slot */

static inline __attribute__((always_inline)) int flow_one(struct render *r,
							   const struct rrec *rec, uint64_t n,
							   uint64_t next)
{
	uint32_t k = (uint32_t)n;
	bool call = rec->kind == RREC_CALL;
	struct dsink *s = r->sink;

	last_ip = rec->from;
	last_next = next;
	if (n <= UINT32_MAX && n && r->chunk) {
		uint8_t *w;
		int ta;

		if (!call && sh_n && ep_chunk == r->chunk &&
		    sh_ret[(sh_top - 1) % SHADOW] == rec->to) {
			put_time(r, rec);
			w = dsink_room(s, 1 + VARINT_MAX);
			if (!w)
				return FLOW_SLOW;
			w[0] = T_RETTOP;
			dsink_commit(s, (size_t)(put_varint(w + 1, k) - w));
			sh_top--;
			sh_n--;
			return FLOW_RETTOP;
		}
		if (call && (ta = addr_kept(r, rec->to, rec->to_isid, true)) >= 0) {
			put_time(r, rec);
			put_callv(r, k, (uint16_t)ta, next);
			sh_push(r, next);
			return ta;
		}
	}
	flow_slow(r, rec, n, next);
	return FLOW_SLOW;
}

static void flow(struct render *r, const struct rrec *rec, uint64_t n, uint64_t next)
{
	flow_one(r, rec, n, next);
}

/*
 * The worker's sums of a batch's calls (T_SUM): a tree is a call and what it calls, until
 * its return. A tree whose calls and returns would each be one T_CALLV or T_RETTOP
 * (flow_one()'s fast ways: the callee's slot kept, the return to the top call's address)
 * writes nothing: it goes into the sums of the T_SUM open, which is written where the next
 * record goes. A tree opens at any call made while none is open, at any depth of the
 * batch's calls: those written below it are the merge's frames by then (fold_sum() takes
 * the outer-ness and the parent from there). Where a tree cannot be summed (a callee not
 * kept, a return elsewhere, the batch's end, SUM_DEPTH open) its open calls are written,
 * from the first, and the trees closed between them summed (sum_flush()); a return to
 * below the batch's calls ends the T_SUM, and one flow_one() cannot write as T_RETTOP the
 * sums for the batch.
 *
 * Trees are kept by shape (struct psev: slots, instructions before each call and return,
 * return addresses): most are one of the last few again (the loop's: a call that calls
 * another, its callee 4 or 5 instructions long), and then a count goes up.
 */
#define SUM_DEPTH 32
#define SUM_EV FASTFLOW_BATCH
#define SHAPES 4

/* A shape's event as the worker keeps it (struct psev in the T_SUM): two words to compare. */
struct sum_ev {
	uint64_t ak;			/* aid << 32 | k */
	uint64_t next;
};

/* A slot's sums in the T_SUM open (sum.acc[], in the order of the slots' first calls). */
struct sum_acc {
	uint16_t aid;
	int32_t run;			/* its last run in runs[], -1: none */
	uint32_t calls;
	uint64_t self, outer;
};

/*
 * Where a slot's sums are in the T_SUM open: an open-addressing table of SUM_HASH, its
 * entries cleared by stamp. (A T_SUM has 128 slots at most; by the slot, the sums took
 * 1 MiB, a miss a call on a walk over 20,000 functions.)
 */
#define SUM_HASH 512

static __thread struct {
	bool open;			/* trees summed since the last record */
	bool off;			/* no more this batch */
	uint32_t stamp;
	/* the batch's calls open (@depth), the run before its first (@run0); the tree open
	 * (@pd calls open, 0: none): its first call (v[@first]), its open calls (where in the
	 * batch, their return addresses: from [@bot] on), the batch's events from its first
	 * on (pev[], by the batch's index) */
	uint32_t depth, pd, first, bot;
	uint64_t run0;
	uint32_t at[SUM_EV];
	uint64_t next[SUM_EV];
	struct sum_ev pev[SUM_EV];
	/* the T_SUM open's entries of the batch, v[@s_first] to v[@s_end - 1], their calls,
	 * and the shadow's depth before them (sum_close() may write them) */
	uint32_t s_first, s_end, s_calls, s_sh_n;
	/* the shapes: their events, where each starts and how many, its trees; the last few */
	struct sum_ev ev[SUM_EV];
	uint32_t nev, nshape;
	uint16_t sh_at[SUM_EV], sh_len[SUM_EV];
	uint32_t sh_rep[SUM_EV];
	uint32_t memo[SHAPES], nmemo, memo_at;
	struct psord ord[SUM_EV];
	uint32_t nord;
	/* the sums */
	uint32_t depth_max;
	struct sum_acc acc[SUM_EV];
	uint32_t nent;
	uint32_t h_stamp[SUM_HASH];
	uint16_t h_ent[SUM_HASH];
	/* T_SUMs that did not pay in a row; batches left without sums, and the next pause */
	uint32_t bad, rest, pause;
	struct psrun runs[SUM_EV];
	uint32_t nrun;
} sum;

/*
 * Batches seen again: a loop's batches come in turn, a few of them (bench/decode's loop:
 * three, each 64 trees of f calling g, g's runs 4 or 5 instructions in another phase), and
 * a batch flows() summed whole into one T_SUM writes that T_SUM again from the same state.
 * The last BMEMO such batches are kept with the T_SUM's bytes, the state they started from
 * (the chunk, the slots unchanged since: addr_gen, the shadow's count, the return address
 * the T_SUM carries, the section calls go to) and the shadow's count they left; a batch
 * equal to one of them (its entries as bytes, the first one's with the run before it)
 * from that state writes its T_TIME if due and then the same bytes, and leaves the state
 * summing would have (flows(): a T_SUM is closed by the flows() call that opened it; of
 * the sums' state only sum_rate()'s counts go from one call to the next, and they are part
 * of the state kept: a batch in a pause is not summed, and its counts decide the next).
 */
#define BMEMO 4
#define BMEMO_SUM 4096			/* a T_SUM's bytes kept at most */

struct bmemo {
	uint64_t chunk, gen, ret;	/* r->chunk, addr_gen, ep_ret when it was summed */
	uint64_t k0;			/* v[0]'s instructions and the run before them */
	int to_isid;
	uint32_t n, sh_n, sh_after;	/* the shadow's count before and after */
	uint32_t len;			/* the T_SUM's bytes in sum[] (0: none kept) */
	uint32_t next;			/* the batch that came after it last */
	/* sum_rate()'s counts before (no rest: the batch was summed) and after */
	uint32_t bad, pause, bad_after, pause_after, rest_after;
	struct fastflow_cr v[FASTFLOW_BATCH];
	uint8_t sum[BMEMO_SUM];
};

/* The batches kept (in tables_get()'s tables), the last one taken, the next to replace. */
static __thread struct bmemo *bm_tab;
static __thread uint32_t bm_last, bm_put;

/*
 * A thread's tables: the address slots (akey[], aval[]), the callees' indexes (csm[],
 * cidx[]) and the batches kept (1.5 MiB at 32,768 slots). Too large for every thread's
 * static TLS (each thread of every mode would clear them, --stats' too): allocated at the
 * first chunk a thread gives an id, freed when the thread ends.
 */
struct slot_tables {
	uint64_t csm[CSMALL];
	struct cidx_ent cidx[CIDX];
	uint32_t csm_used[ADDR_FULL(ADDR_CALLEES)];
	struct addr_key akey[ADDR_SLOTS - ADDR_CALLEES];
	struct addr_val aval[ADDR_SLOTS];
	struct bmemo memo[BMEMO];
};

static pthread_key_t tables_key;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static bool tables_keyed;

static void tables_key_make(void)
{
	tables_keyed = !pthread_key_create(&tables_key, free);
}

/* This thread's tables (the address slots, the batches kept) there; false: none to be had. */
static bool tables_get(void)
{
	struct slot_tables *t;
	void *m;

	if (akey)
		return true;
	pthread_once(&tables_once, tables_key_make);
	/* calloc(): a run's tables may be a freed thread's memory, and must start empty; a
	 * line of keys on a cache line (64 bytes more, the start rounded up) */
	if (!tables_keyed || !(m = calloc(1, sizeof(*t) + 64)))
		return false;
	t = (struct slot_tables *)(((uintptr_t)m + 63) & ~(uintptr_t)63);
	/* Read before written (a slot's look-up): its pages made at once, not a copy each. */
	memfill(m, sizeof(*t) + 64);
	if (pthread_setspecific(tables_key, m)) {
		free(m);
		return false;
	}
	csm = t->csm;
	csm_used = t->csm_used;
	cidx = t->cidx;
	akey = t->akey;
	aval = t->aval;
	bm_tab = t->memo;
	return true;
}

/* The T_SUM opened before the batch's entry v[@i]. */
static void sum_open(struct render *r, const struct rrec *rec, uint32_t i)
{
	/* (the time the T_SUM's calls have, said before it; the epoch its first would see) */
	put_time(r, rec);
	epoch(r);
	sum.open = true;
	sum.s_first = sum.s_end = i;
	sum.s_calls = 0;
	sum.s_sh_n = sh_n;
	sum.nev = sum.nshape = sum.nmemo = sum.memo_at = sum.nord = 0;
	sum.nent = sum.nrun = sum.depth_max = 0;
	sum.stamp++;
}

/* Slot @aid's sums in the T_SUM open (@make: made there if none; else they are). */
static inline struct sum_acc *sum_acc_of(uint16_t aid, bool make)
{
	uint32_t h = (uint32_t)(aid * 0x9e3779b1u) >> 23;

	for (;; h = (h + 1) % SUM_HASH) {
		if (sum.h_stamp[h] != sum.stamp) {
			if (!make)
				return NULL;
			sum.h_stamp[h] = sum.stamp;
			sum.h_ent[h] = (uint16_t)sum.nent;
			sum.acc[sum.nent] = (struct sum_acc){ .aid = aid, .run = -1 };
			return &sum.acc[sum.nent++];
		}
		if (sum.acc[sum.h_ent[h]].aid == aid)
			return &sum.acc[sum.h_ent[h]];
	}
}

/* Slot @aid among the sums' (in the order of first calls: the merge makes rows so). */
static inline void sum_slot(uint16_t aid)
{
	sum_acc_of(aid, true);
}

/* @rep calls of the slot of sums @a: @incl instructions each, @self their own. */
static inline void sum_add(struct sum_acc *a, uint64_t incl, uint64_t self, bool outer,
			   uint32_t rep)
{
	a->calls += rep;
	a->self += self * rep;
	if (outer)
		a->outer += incl * rep;
	if (a->run >= 0 && sum.runs[a->run].insns == incl) {
		sum.runs[a->run].n += rep;
	} else {
		a->run = (int32_t)sum.nrun;
		sum.runs[sum.nrun++] = (struct psrun){ .aid = a->aid, .n = rep, .insns = incl };
	}
}

/*
 * The trees of shape @j into the sums: each call's instructions (callees' too), its own,
 * and whether a call of its slot encloses it.
 */
static inline uint16_t ev_aid(const struct sum_ev *e)
{
	return (uint16_t)(e->ak >> 32);
}

static inline uint32_t ev_k(const struct sum_ev *e)
{
	return (uint32_t)e->ak;
}

static void sum_shape(uint32_t j)
{
	const struct sum_ev *g = &sum.ev[sum.sh_at[j]];
	uint64_t in0[SUM_DEPTH], child[SUM_DEPTH], t = 0, incl = 0;
	uint32_t d = 0, depth = 0, rep = sum.sh_rep[j];
	struct sum_acc *acc[SUM_DEPTH];
	uint8_t open[SUM_EV];

	for (uint32_t i = 0; i < sum.sh_len[j]; i++)
		if (ev_aid(&g[i]) != SUM_RET)
			open[sum_acc_of(ev_aid(&g[i]), false) - sum.acc] = 0;
	for (uint32_t i = 0; i < sum.sh_len[j]; i++) {
		if (i)
			t += ev_k(&g[i]);
		if (ev_aid(&g[i]) != SUM_RET) {
			acc[d] = sum_acc_of(ev_aid(&g[i]), false);
			in0[d] = t;
			child[d++] = 0;
			open[acc[d - 1] - sum.acc]++;
			depth = d > depth ? d : depth;
			continue;
		}
		incl = t - in0[--d];
		sum_add(acc[d], incl, incl - child[d], !--open[acc[d] - sum.acc], rep);
		if (d)
			child[d - 1] += incl;
	}
	sum.depth_max = depth > sum.depth_max ? depth : sum.depth_max;
}

/* The T_SUM open written at the sink's end (sum_close()'s). */
static void sum_put(struct render *r)
{
	struct dsink *s = r->sink;
	uint64_t top = 0, roots = 0;
	struct psum p;
	uint8_t *w;
	size_t n;

	for (uint32_t j = 0; j < sum.nshape; j++) {
		const struct sum_ev *g = &sum.ev[sum.sh_at[j]];
		uint64_t in = 0;

		sum_shape(j);
		for (uint32_t i = 1; i < sum.sh_len[j]; i++)
			in += ev_k(&g[i]);
		top += ev_k(&g[0]) * (uint64_t)sum.sh_rep[j];
		roots += in * sum.sh_rep[j];
	}
	n = 1 + sizeof(p) + sum.nent * sizeof(struct psent) + sum.nrun * sizeof(struct psrun) +
	    sum.nshape * sizeof(uint16_t) + sum.nev * sizeof(struct psev) +
	    sum.nord * sizeof(struct psord);
	w = dsink_room(s, n);
	if (!w)
		return;
	p = (struct psum){ .nent = (uint16_t)sum.nent, .nrun = (uint16_t)sum.nrun,
			   .nshape = (uint16_t)sum.nshape, .nord = (uint16_t)sum.nord,
			   .depth = (uint8_t)sum.depth_max, .top = top, .roots = roots,
			   .ret = ep_ret };
	*w++ = T_SUM;
	memcpy(w, &p, sizeof(p));
	w += sizeof(p);
	for (uint32_t i = 0; i < sum.nent; i++) {
		const struct sum_acc *a = &sum.acc[i];
		struct psent x = { .aid = a->aid, .calls = a->calls, .self = a->self,
				   .outer = a->outer };

		memcpy(w, &x, sizeof(x));
		w += sizeof(x);
	}
	memcpy(w, sum.runs, sum.nrun * sizeof(struct psrun));
	w += sum.nrun * sizeof(struct psrun);
	memcpy(w, sum.sh_len, sum.nshape * sizeof(uint16_t));
	w += sum.nshape * sizeof(uint16_t);
	/* (shapes are stored in order: sh_at[j] is the sum of the lengths before) */
	for (uint32_t i = 0; i < sum.nev; i++) {
		struct psev x = { .aid = ev_aid(&sum.ev[i]), .k = ev_k(&sum.ev[i]),
				  .next = sum.ev[i].next };

		memcpy(w, &x, sizeof(x));
		w += sizeof(x);
	}
	memcpy(w, sum.ord, sum.nord * sizeof(struct psord));
	dsink_commit(s, n);
}

/* The instructions before the batch's entry v[@j]. */
static inline uint64_t sum_k(const struct fastflow_cr *v, uint32_t j)
{
	return v[j].ninsn + (j ? 0 : sum.run0);
}

/* The shadow's calls a tree's @g (@nt events) would have pushed out (the oldest) gone. */
static __attribute__((noinline)) void sum_shadow(const struct sum_ev *g, uint32_t nt)
{
	uint32_t d = 0, depth = 0;

	for (uint32_t i = 0; i < nt; i++) {
		d += ev_aid(&g[i]) != SUM_RET ? 1 : -1;
		depth = d > depth ? d : depth;
	}
	if (sh_n + depth > SHADOW)
		sh_n = SHADOW - depth;
}

/* The tree v[@j0] to v[@j1] (its events pev[], the last its return) into the T_SUM open. */
static inline __attribute__((always_inline)) void sum_tree(struct render *r,
							   const struct fastflow_cr *v,
							   uint32_t j0, uint32_t j1)
{
	const struct sum_ev *g = &sum.pev[j0];
	uint32_t j = UINT32_MAX, nt = j1 - j0 + 1;

	for (uint32_t m = 0; m < sum.nmemo && j == UINT32_MAX; m++) {
		const struct sum_ev *o = &sum.ev[sum.sh_at[sum.memo[m]]];
		uint32_t i = 0;

		if (sum.sh_len[sum.memo[m]] != nt)
			continue;
		while (i < nt && o[i].ak == g[i].ak && o[i].next == g[i].next)
			i++;
		if (i == nt)
			j = sum.memo[m];
	}
	if (j == UINT32_MAX) {
		j = sum.nshape++;
		sum.sh_at[j] = (uint16_t)sum.nev;
		sum.sh_len[j] = (uint16_t)nt;
		sum.sh_rep[j] = 0;
		memcpy(&sum.ev[sum.nev], g, nt * sizeof(*g));
		sum.nev += nt;
		for (uint32_t i = 0; i < nt; i++)
			if (ev_aid(&g[i]) != SUM_RET)
				sum_slot(ev_aid(&g[i]));
		sum.memo[sum.memo_at++ % SHAPES] = j;
		sum.nmemo += sum.nmemo < SHAPES;
	}
	sum.sh_rep[j]++;
	sum.s_end = j1 + 1;
	sum.s_calls += nt / 2;
	if (sum.nord && sum.ord[sum.nord - 1].shape == j)
		sum.ord[sum.nord - 1].n++;
	else
		sum.ord[sum.nord++] = (struct psord){ .shape = (uint16_t)j, .n = 1 };
	/* what flow_one() would have left: the last instruction, the shadow's calls (those
	 * its calls pushed out: the oldest), the epoch */
	last_ip = v[j1].from;
	last_next = v[j1].next;
	epoch(r);
	if (sh_n + nt / 2 > SHADOW)
		sum_shadow(g, nt);
}

/* @rec as flow_one() takes call or return @c. */
static inline void set_rec(struct rrec *rec, const struct fastflow_cr *c)
{
	rec->kind = c->call ? RREC_CALL : RREC_RETURN;
	rec->how = c->call ? DREC_HOW_CALL : DREC_HOW_RET;
	rec->from = c->from;
	rec->to = c->to;
}

/*
 * The T_SUM open written at the sink's end (before the record that ends it), where it pays:
 * SUM_MIN calls or more, two a slot or more (else it is a psent, a psrun and two psevs a
 * call, 60 bytes and a row each at the merge, where their records are 7 bytes and a row:
 * a walk over 20,000 functions had 484,168 slots in its T_SUMs' 485,140 calls). Else its
 * calls are written as their records (flow_one()'s, from the shadow's depth before them),
 * and after SUM_BAD such in a row the thread sums nothing for a pause of batches (1, then
 * twice the last, up to SUM_PAUSE_MAX; a T_SUM that pays starts over).
 */
#define SUM_MIN 4
#define SUM_BAD 8
#define SUM_PAUSE_MAX 256

static void sum_rate(bool pays)
{
	if (pays) {
		sum.bad = sum.pause = 0;
		return;
	}
	if (++sum.bad < SUM_BAD)
		return;
	sum.bad = 0;
	sum.pause = !sum.pause ? 1 : sum.pause < SUM_PAUSE_MAX ? 2 * sum.pause : sum.pause;
	sum.rest = sum.pause;
}

/* Whether this batch goes without sums (sum_rate()'s pause). */
static inline bool sum_resting(void)
{
	if (!sum.rest)
		return false;
	sum.rest--;
	return true;
}

static void sum_close(struct render *r, struct rrec *rec, const struct fastflow_cr *v)
{
	bool pays;

	if (!sum.open)
		return;
	sum.open = false;
	if (!sum.nord)
		return;
	pays = sum.s_calls >= SUM_MIN && 2 * sum.nent <= sum.s_calls;
	sum_rate(pays);
	if (pays) {
		sum_put(r);
		return;
	}
	sh_n = sum.s_sh_n;
	for (uint32_t j = sum.s_first; j < sum.s_end; j++) {
		set_rec(rec, &v[j]);
		flow_one(r, rec, sum_k(v, j), v[j].next);
	}
}

/*
 * The tree open's first call written (flow_one()'s record), the trees it called that closed
 * summed (a T_SUM of their own, after it), and its next open call (if any: up to v[@end]
 * the batch's entries are the tree's) the first of the tree open.
 */
static void sum_flush(struct render *r, struct rrec *rec, const struct fastflow_cr *v,
		      uint32_t end)
{
	uint32_t cut = sum.pd > 1 ? sum.at[sum.bot + 1] : end, d = 0, j0 = 0;

	sum_close(r, rec, v);
	set_rec(rec, &v[sum.first]);
	flow_one(r, rec, sum_k(v, sum.first), v[sum.first].next);
	if (sum.first + 1 < end)
		sum_open(r, rec, sum.first + 1);
	for (uint32_t j = sum.first + 1; j < cut; j++) {
		if (!d++)
			j0 = j;
		if (v[j].call)
			continue;
		d -= 2;
		if (!d)
			sum_tree(r, v, j0, j);
	}
	sum.pd--;
	sum.bot++;
	sum.first = cut;
}

/* The batch's call or return v[@i] after @k instructions: summed, or written. */
static inline void sum_one(struct render *r, struct rrec *rec, const struct fastflow_cr *v,
			   uint32_t i, uint64_t k)
{
	const struct fastflow_cr *c = &v[i];
	int got = -1;

	if (c->call) {
		sum.depth++;
		if (k && k <= UINT32_MAX &&
		    (got = addr_kept(r, c->to, rec->to_isid, true)) >= 0) {
			if (sum.pd == SUM_DEPTH)
				sum_flush(r, rec, v, i);
			if (!sum.pd) {
				if (!sum.open)
					sum_open(r, rec, i);
				sum.first = i;
				sum.bot = 0;
			}
			sum.pev[i] = (struct sum_ev){ (uint64_t)got << 32 | k, c->next };
			sum.at[sum.bot + sum.pd] = i;
			sum.next[sum.bot + sum.pd++] = c->next;
			return;
		}
		while (sum.pd)
			sum_flush(r, rec, v, i);
		sum_close(r, rec, v);
		set_rec(rec, c);
		flow_one(r, rec, k, c->next);
		return;
	}
	if (!sum.depth) {
		/* (a return to below the batch's calls: what the merge does depends on it) */
		sum_close(r, rec, v);
		set_rec(rec, c);
		flow_one(r, rec, k, c->next);
		return;
	}
	sum.depth--;
	if (sum.pd) {
		if (k && k <= UINT32_MAX && c->to == sum.next[sum.bot + sum.pd - 1]) {
			sum.pev[i] = (struct sum_ev){ (uint64_t)SUM_RET << 32 | k, 0 };
			if (!--sum.pd)
				sum_tree(r, v, sum.first, i);
			return;
		}
		while (sum.pd)
			sum_flush(r, rec, v, i);
	}
	sum_close(r, rec, v);
	/* (a return to a call written: the merge's top frame, or the batch's depth is lost) */
	set_rec(rec, c);
	if (flow_one(r, rec, k, c->next) != FLOW_RETTOP)
		sum.off = true;
}

/* Whether report sums calls in the worker: not where each call is shown (its stack, or
 * as an outlier). */
static inline bool sums_on(const struct render *r)
{
	const struct report_config *rc = r->cfg ? r->cfg->report : NULL;

	return rc && !rc->outliers && rc->view == REPORT_FUNCTIONS;
}

/* The batch kept that @v (@n, v[0] after @k0 instructions) is again in this state, or NULL. */
static struct bmemo *bmemo_find(const struct render *r, const struct rrec *rec,
				const struct fastflow_cr *v, unsigned n, uint64_t k0)
{
	uint32_t j = bm_tab[bm_last].next;

	if (ep_chunk != r->chunk || sum.rest)
		return NULL;
	/* (the one that came after the last one taken first: a loop's batches come in turn) */
	for (uint32_t t = 0; t < BMEMO; t++, j = (j + 1) % BMEMO) {
		struct bmemo *m = &bm_tab[j];

		if (m->n != n || m->len == 0 || m->chunk != r->chunk || m->gen != addr_gen ||
		    m->ret != ep_ret || m->sh_n != sh_n || m->to_isid != rec->to_isid ||
		    m->bad != sum.bad || m->pause != sum.pause ||
		    m->k0 != k0 || m->v[0].from != v[0].from || m->v[0].to != v[0].to ||
		    m->v[0].next != v[0].next || m->v[0].call != v[0].call ||
		    memcmp(m->v + 1, v + 1, (n - 1) * sizeof(*v)))
			continue;
		bm_tab[bm_last].next = j;
		bm_last = j;
		return m;
	}
	return NULL;
}

/* Batch @m again: what flows() writes and leaves for it, without summing its trees. */
static void bmemo_play(struct render *r, const struct rrec *rec, const struct bmemo *m,
		       const struct fastflow_cr *v, unsigned n)
{
	uint64_t *again = r->cfg->report->again;
	uint8_t *w;

	if (again)
		__atomic_fetch_add(again, 1, __ATOMIC_RELAXED);
	/* (sum_open()'s, at the first call; the epoch is the chunk's: bmemo_find()) */
	put_time(r, rec);
	w = dsink_room(r->sink, m->len);
	if (w) {
		memcpy(w, m->sum, m->len);
		dsink_commit(r->sink, m->len);
	}
	/* (sum_tree()'s at the last tree's return) */
	last_ip = v[n - 1].from;
	last_next = v[n - 1].next;
	sh_n = m->sh_after;
	sum.bad = m->bad_after;
	sum.pause = m->pause_after;
	sum.rest = m->rest_after;
}

/*
 * Keep the batch flows() just summed whole, from shadow count @sh0 and sum_rate()'s counts
 * @bad0, @pause0 (the epoch the chunk's):
 * it wrote from dsink_pos() @start a T_TIME or nothing, then from @before the T_SUM, the last.
 */
static void bmemo_keep(const struct render *r, const struct rrec *rec,
		       const struct fastflow_cr *v, unsigned n, uint64_t k0, uint64_t start,
		       uint64_t before, uint32_t sh0, uint32_t bad0, uint32_t pause0)
{
	const struct dsink *s = r->sink;
	uint64_t len = dsink_pos(r->sink) - before, pre = before - start;
	struct bmemo *m;

	if (!len || len > BMEMO_SUM || len + pre > s->len ||
	    s->buf[s->len - len] != T_SUM ||
	    (pre && (pre != 1 + sizeof(struct ptime) || s->buf[s->len - len - pre] != T_TIME)))
		return;
	m = &bm_tab[bm_put];
	bm_put = (bm_put + 1) % BMEMO;
	m->chunk = r->chunk;
	m->gen = addr_gen;
	m->ret = ep_ret;
	m->k0 = k0;
	m->to_isid = rec->to_isid;
	m->n = n;
	m->sh_n = sh0;
	m->sh_after = sh_n;
	m->bad = bad0;
	m->pause = pause0;
	m->bad_after = sum.bad;
	m->pause_after = sum.pause;
	m->rest_after = sum.rest;
	m->len = (uint32_t)len;
	memcpy(m->v, v, n * sizeof(*v));
	memcpy(m->sum, s->buf + s->len - len, len);
	bm_tab[bm_last].next = (uint32_t)(m - bm_tab);
	bm_last = (uint32_t)(m - bm_tab);
}

/*
 * flows_plain()'s entries v[@i] on, while each is one of flow_one()'s two fast ways, where
 * the sink has room for all that are left (then none is asked for again: dsink_room()'s
 * test a record) and the time is said; the callee's key found from its generation and
 * @isid taken once. The shadow's @top and @depth, the last return address said (@ret,
 * @has_ret) in and out. Returns the first entry it did not write (@n: none).
 */
static inline __attribute__((always_inline)) unsigned plain_run(
	struct render *r, int isid, const struct fastflow_cr *v, unsigned i, unsigned n,
	uint64_t run, uint32_t *top, uint32_t *depth, uint64_t *ret, bool *has_ret)
{
	struct dsink *s = r->sink;
	uint64_t g = addr_epoch(r, true), last = *ret;
	uint8_t *o = s->buf + s->len;
	uint32_t tp = *top, dp = *depth;
	bool cold = s->cold, has = *has_ret;

	for (; i < n; i++, run = 0) {
		const struct fastflow_cr *c = &v[i];
		uint64_t k = c->ninsn + run;
		int ta;

		if (k - 1 >= UINT32_MAX)
			break;
		if (cold) {
			dsink_ahead(o);
			dsink_ahead(o + 64);
		}
		if (!c->call) {
			if (!dp || sh_ret[(tp - 1) % SHADOW] != c->to)
				break;
			o[0] = T_RETTOP;
			o = put_varint(o + 1, (uint32_t)k);
			tp--;
			dp--;
			continue;
		}
		if (!g || (ta = callee_find(c->to, isid)) < 0)
			break;
		/* (put_callv()'s and sh_push()'s) */
		o = callv_spell(o, (uint32_t)k, (uint16_t)ta, c->next, last, has);
		last = c->next;
		has = true;
		sh_ret[tp++ % SHADOW] = c->next;
		dp += dp < SHADOW;
	}
	s->len = (size_t)(o - s->buf);
	*top = tp;
	*depth = dp;
	*ret = last;
	*has_ret = has;
	return i;
}

/*
 * The batch's entries v[@i] on as flow_one() writes each, the first after @run instructions
 * more (sum_batch() where it sums none: a walk's batches, the views that show each call).
 * flow_one()'s two fast ways (T_RETTOP; T_CALLV by a kept slot) with the worker's state in
 * locals: flow_one() kept it in the thread's variables, some ten stores a call or return
 * (the walk's 2.4 M). Any other entry goes through flow_one(), the state written back
 * before and read after; so does a batch in a chunk the epoch is not yet of.
 */
static void flows_plain(struct render *r, struct rrec *rec, const struct fastflow_cr *v,
			unsigned i, unsigned n, uint64_t run)
{
	struct dsink *s = r->sink;
	uint64_t ret = ep_ret, t = rec->has_time ? rec->time : 0;
	uint32_t top = sh_top, depth = sh_n;
	bool has_ret = ep_has_ret, said;

	if (i >= n)
		return;
	if (!r->chunk || ep_chunk != r->chunk) {
		for (; i < n; i++) {
			set_rec(rec, &v[i]);
			flow_one(r, rec, v[i].ninsn + run, v[i].next);
			run = 0;
		}
		return;
	}
	said = time_chunk == r->chunk && time_has == rec->has_time && time_at == t;
	for (; i < n; i++) {
		const struct fastflow_cr *c;
		uint64_t k;
		uint8_t *w, *p;
		int ta;

		if (said && s->len + (size_t)(n - i) * CALLV_MAX <= s->cap) {
			unsigned j = plain_run(r, rec->to_isid, v, i, n, run, &top, &depth, &ret,
					       &has_ret);

			if (j == n)
				break;
			run = j == i ? run : 0;
			i = j;
		}
		c = &v[i];
		k = c->ninsn + run;
		run = 0;
		if (k - 1 < UINT32_MAX) {
			if (!c->call) {
				if (depth && sh_ret[(top - 1) % SHADOW] == c->to &&
				    (said || (put_time(r, rec), said = true)) &&
				    (w = dsink_room(s, 1 + VARINT_MAX))) {
					w[0] = T_RETTOP;
					dsink_commit(s, (size_t)(put_varint(w + 1, (uint32_t)k) - w));
					top--;
					depth--;
					continue;
				}
			} else if ((ta = addr_kept(r, c->to, rec->to_isid, true)) >= 0 &&
				   (said || (put_time(r, rec), said = true)) &&
				   (w = dsink_room(s, CALLV_MAX))) {
				/* (put_callv()'s and sh_push()'s) */
				p = callv_spell(w, (uint32_t)k, (uint16_t)ta, c->next, ret, has_ret);
				ret = c->next;
				has_ret = true;
				dsink_commit(s, (size_t)(p - w));
				sh_ret[top++ % SHADOW] = c->next;
				depth += depth < SHADOW;
				continue;
			}
		}
		sh_top = top;
		sh_n = depth;
		ep_ret = ret;
		ep_has_ret = has_ret;
		set_rec(rec, c);
		flow_one(r, rec, k, c->next);
		top = sh_top;
		depth = sh_n;
		ret = ep_ret;
		has_ret = ep_has_ret;
		said = time_chunk == r->chunk && time_has == rec->has_time && time_at == t;
	}
	sh_top = top;
	sh_n = depth;
	ep_ret = ret;
	ep_has_ret = has_ret;
	set_rec(rec, &v[n - 1]);
	last_ip = v[n - 1].from;
	last_next = v[n - 1].next;
}

/*
 * A batch's calls and returns summed (flows() but for a batch kept), the batch kept with
 * @keep where it goes into one T_SUM whole.
 */
static void sum_batch(struct render *r, struct rrec *rec, uint64_t run,
		      const struct fastflow_cr *v, unsigned n, bool keep)
{
	uint64_t k0 = v[0].ninsn + run, start = dsink_pos(r->sink), before;
	uint32_t sh0 = sh_n, bad0 = sum.bad, pause0 = sum.pause;
	unsigned i = 0;

	sum.off = !sums_on(r) || !r->chunk || sum_resting();
	keep = keep && !sum.off && ep_chunk == r->chunk;
	sum.depth = sum.pd = 0;
	sum.run0 = run;
	for (; i < n && !sum.off; i++) {
		sum_one(r, rec, v, i, v[i].ninsn + run);
		run = 0;
	}
	/* (a tree the batch ends in: written) */
	while (!sum.off && sum.pd)
		sum_flush(r, rec, v, n);
	before = dsink_pos(r->sink);
	sum_close(r, rec, v);
	if (keep && i == n && !sum.off)
		bmemo_keep(r, rec, v, n, k0, start, before, sh0, bad0, pause0);
	flows_plain(r, rec, v, i, n, run);
}

/* The worker's state a batch may change (of the sums' own, sum_rate()'s counts alone)
 * (bmemo_check()). */
struct wstate {
	uint64_t last_ip, last_next, time_chunk, time_at, ep_chunk, ep_ret;
	uint32_t sh_n, sh_top, bad, pause, rest;
	bool time_has, ep_has_ret;
};

static void wstate_get(struct wstate *w)
{
	*w = (struct wstate){ last_ip, last_next, time_chunk, time_at, ep_chunk, ep_ret,
			      sh_n, sh_top, sum.bad, sum.pause, sum.rest, time_has, ep_has_ret };
}

static void wstate_set(const struct wstate *w)
{
	last_ip = w->last_ip;
	last_next = w->last_next;
	time_chunk = w->time_chunk;
	time_at = w->time_at;
	ep_chunk = w->ep_chunk;
	ep_ret = w->ep_ret;
	sh_n = w->sh_n;
	sh_top = w->sh_top;
	sum.bad = w->bad;
	sum.pause = w->pause;
	sum.rest = w->rest;
	time_has = w->time_has;
	ep_has_ret = w->ep_has_ret;
}

static bool wstate_same(const struct wstate *a, const struct wstate *b)
{
	return a->last_ip == b->last_ip && a->last_next == b->last_next &&
	       a->time_chunk == b->time_chunk && a->time_at == b->time_at &&
	       a->ep_chunk == b->ep_chunk && a->ep_ret == b->ep_ret && a->sh_n == b->sh_n &&
	       a->sh_top == b->sh_top && a->bad == b->bad && a->pause == b->pause &&
	       a->rest == b->rest && a->time_has == b->time_has &&
	       a->ep_has_ret == b->ep_has_ret;
}

/*
 * A debug check (report_config.again_check, for the tests): batch @m written again, then
 * taken back and summed; where the bytes or the state differ, counted (again_bad). The
 * sums' bytes stay.
 */
static __attribute__((noinline)) void bmemo_check(struct render *r, struct rrec *rec,
						  const struct bmemo *m, uint64_t run,
						  const struct fastflow_cr *v, unsigned n)
{
	struct dsink *s = r->sink;
	uint64_t at = dsink_pos(s), *bad = r->cfg->report->again_bad;
	struct wstate before, played, summed;
	uint8_t copy[1 + sizeof(struct ptime) + BMEMO_SUM];
	size_t len;

	wstate_get(&before);
	bmemo_play(r, rec, m, v, n);
	wstate_get(&played);
	len = (size_t)(dsink_pos(s) - at);
	/* (let go of already, or no room: not checked) */
	if (len > s->len || len > sizeof(copy) || !bad)
		return;
	memcpy(copy, s->buf + s->len - len, len);
	dsink_truncate(s, at);
	wstate_set(&before);
	sum_batch(r, rec, run, v, n, false);
	wstate_get(&summed);
	if (dsink_pos(s) - at != len || len > s->len ||
	    memcmp(s->buf + s->len - len, copy, len) || !wstate_same(&played, &summed))
		__atomic_fetch_add(bad, 1, __ATOMIC_RELAXED);
}

/* A fast segment's calls and returns in one step (renderer.flows()): flow() of each. */
static void flows(struct render *r, struct rrec *rec, uint64_t run,
		  const struct fastflow_cr *v, unsigned n)
{
	struct bmemo *m;

	if (sums_on(r) && r->chunk && (m = bmemo_find(r, rec, v, n, v[0].ninsn + run))) {
		if (r->cfg->report->again_check)
			bmemo_check(r, rec, m, run, v, n);
		else
			bmemo_play(r, rec, m, v, n);
		return;
	}
	sum_batch(r, rec, run, v, n, true);
}

/* flow()'s other records. */
static __attribute__((noinline)) void flow_slow(struct render *r, const struct rrec *rec,
						uint64_t n, uint64_t next)
{
	uint32_t k = n <= UINT32_MAX ? (uint32_t)n : 0;
	bool call = rec->kind == RREC_CALL;
	struct dsink *s = r->sink;

	if (k && r->chunk) {
		int fa, ta = addr_kept(r, rec->to, rec->to_isid, call);
		uint8_t *w;

		if (!call && ta >= 0 && time_chunk == r->chunk && time_has == rec->has_time &&
		    time_at == (rec->has_time ? rec->time : 0) &&
		    (fa = addr_kept(r, rec->from, rec->from_isid, false)) >= 0 &&
		    (w = dsink_room(s, 1 + 4 + sizeof(struct preta)))) {
			struct preta x = { .from = (uint16_t)fa, .to = (uint16_t)ta, .b = rec->to };

			w[0] = T_RETN;
			memcpy(w + 1, &k, 4);
			memcpy(w + 5, &x, sizeof(x));
			dsink_commit(s, 1 + 4 + sizeof(x));
			sh_n = 0;
			return;
		}
	}
	if (!k)
		insns(r, n, rec->from, next, false);
	if (!(call ? put_call(r, rec, next, k) : put_ret(r, rec, k))) {
		put_run(r, k);
		put_spelled(r, rec, call ? next : 0);
	}
	if (call)
		sh_push(r, next);
	else
		sh_n = 0;
}

const struct renderer render_report = {
	.name = "report",
	.output = RENDER_OUT,
	.mode = DECODE_REPORT,
	.wants = RREC_BIT(RREC_STREAM) | RREC_BIT(RREC_CALL) |
		 RREC_BIT(RREC_RETURN) | RREC_BIT(RREC_EVENT) | RREC_BIT(RREC_GAP) |
		 RREC_BIT(RREC_ERROR) | RREC_BIT(RREC_THREAD) | RREC_BIT(RREC_END),
	.flags = RENDER_SYMS | RENDER_TIME,
	.put = put,
	.insns = insns,
	.flow = flow,
	.flows = flows,
	.filter = report_filter,
	.state_size = sizeof(struct report_state),
	.begin = report_begin,
	.finish = report_finish,
};
