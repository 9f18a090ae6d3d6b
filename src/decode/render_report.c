// SPDX-License-Identifier: MIT
/*
 * ptcollect report (render_report.h): in the chunk, a count per run of instructions
 * (libipt's blocks: a block's in one step) and a record per call, return and trace
 * event (append-only, so that a chunk's trimmed end takes its instructions with it); at
 * the merge, call stacks per thread and one row per function.
 */
#include <fnmatch.h>
#include <stdarg.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_rec.h"
#include "memimage.h"
#include "printable.h"
#include "render.h"
#include "render_report.h"
#include "utf8.h"

/* ---- in the chunk ---- */

enum {
	T_INSN,			/* an instruction */
	T_FARRET,		/* a far return (iret, sysret): the end of an interrupt */
	T_RUN,			/* a uint32_t: that many instructions */
	T_RUNFAR,		/* a uint32_t: that many, the last a far return */
	T_REC,			/* a struct prec and its strings follow */
	T_DEF,			/* a struct pdef and its string: a name's id in this chunk */
	T_CALL,			/* a struct pcall: a call by name ids */
	T_RET,			/* a struct pret: a return by name ids */
	T_ADEF,			/* a struct padef: the function at an address, by name ids */
	T_TIME,			/* a struct ptime: the time of the calls and returns after it */
	T_CALLV,		/* a call by address id: run, slot, return address (below) */
	T_RETA,			/* a struct preta: a return by address ids */
	T_CALLV0,		/* T_CALLV whose return address is not a difference */
	T_RETN,			/* a uint32_t (a T_RUN's), then a struct preta */
	T_RETTOP,		/* a run (a varint), then a return that closes the top frame */
};

/*
 * T_CALLV, T_CALLV0: a varint (LEB128) run of instructions before the call (0: none), the
 * callee's address slot (uint16_t), then the return address: T_CALLV0's as a varint,
 * T_CALLV's as the zigzag varint of its difference from the last T_CALLV or T_CALLV0's
 * (the first call in a chunk, or where the decoder took the sink's end back, is T_CALLV0).
 * A call is then about 5 bytes, not 15.
 *
 * T_RETTOP: a return to where the top frame's call returns to, a call the chunk wrote: the
 * chunk follows the calls it wrote since the last record that may change the merge's stacks
 * otherwise (put()'s, a far return, a return that is no T_RETTOP), less those T_RETTOP
 * closed (the merge's top frames, in order), and the merge takes the return address from
 * its top frame: 2 bytes, not 17.
 */
#define VARINT_MAX 10

/*
 * The names of calls and returns go once per chunk (T_DEF), then by id: a call's record is
 * 25 bytes, not 60 to 70 with its strings. Ids are the chunk's: each chunk defines its own
 * before it uses them (a trimmed end takes definitions and uses alike).
 */
#define DEF_MAX 1024		/* ids of a chunk; then records carry their strings (T_REC) */

struct pdef {
	uint16_t id, len;
};

/* How a T_CALL or T_RET names a function: its symbol's id, with +0xoff, or not at all. */
enum { N_SYM, N_SYMOFF, N_UNKNOWN };	/* N_UNKNOWN: [unknown] (object+0xoff) */

struct pcall {
	uint16_t name, obj;
	uint8_t has_time, how;
	uint64_t a, time, off;
} __attribute__((packed));

struct pret {
	uint16_t from, to, from_obj, to_obj;
	uint8_t has_time, how;		/* how: from's N_*, to's N_* << 2 */
	uint64_t b, time, from_off, to_off;
} __attribute__((packed));

/*
 * The addresses calls and returns name over and over (addr_ids()'s cache) go by the cache's
 * slot: T_ADEF says which function a slot holds from there on (its name ids, as a T_CALL or
 * T_RET has them), T_TIME the time of the records after it (once a chunk, then as it
 * changes); a call is then 11 bytes, a return 13, and the merge spells no name for them.
 */
struct padef {
	uint16_t aid, name, obj;
	uint8_t how;
	uint64_t off;
} __attribute__((packed));

struct ptime {
	uint8_t has_time;
	uint64_t time;
} __attribute__((packed));

struct preta {
	uint16_t from, to;
	uint64_t b;
} __attribute__((packed));

enum prec_kind { P_STREAM, P_CALL, P_RET, P_GAP, P_THREAD, P_END, P_OFF, P_ON, P_INTR };

struct prec {
	uint8_t kind, has_time;
	uint16_t len1, len2, len3, len4;
	uint32_t pid, tid;
	uint64_t a, b, time;
	/* char s1[len1], s2[len2], s3[len3], s4[len4]: CALL the callee and its object, RET the
	 * functions it leaves and goes to, then their objects */
};

#define NAME_LEN 1024

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
static __thread unsigned def_count;

/* The id of @p in @r's chunk, defined (T_DEF) on first use; -1: the chunk has too many. */
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
 */
struct addr_slot {
	uint64_t chunk, ip, off;
	int isid;
	uint16_t name, obj;
	uint8_t how, callee;
};

#define ADDR_BITS 9
#define ADDR_SLOTS (1u << ADDR_BITS)
static __thread struct addr_slot addrs[ADDR_SLOTS];

/* The time T_TIME last said in this thread's chunk @time_chunk. */
static __thread uint64_t time_chunk, time_at;
static __thread bool time_has;

/* The slot of addrs[] that @ip (section @isid, as a callee or not) hashes to. */
static inline struct addr_slot *addr_slot_of(uint64_t ip, int isid, bool callee)
{
	uint64_t h = (ip ^ (uint64_t)isid << 40 ^ (uint64_t)callee << 63) * 0x9e3779b97f4a7c15ull;

	return &addrs[h >> (64 - ADDR_BITS)];
}

/* Whether slot @a holds @ip (@isid, @callee) for @r's chunk. */
static inline bool addr_slot_holds(const struct render *r, const struct addr_slot *a,
				   uint64_t ip, int isid, bool callee)
{
	return r->chunk && a->chunk == r->chunk && a->ip == ip && a->isid == isid &&
	       a->callee == callee;
}

/* @aid: the address's slot (defined by T_ADEF in this chunk), -1: none (not kept). */
static bool addr_ids(struct render *r, const struct rrec *rec, uint64_t ip, int isid,
		     bool callee, uint16_t *name, uint16_t *obj, uint8_t *how, uint64_t *off,
		     int *aid)
{
	struct addr_slot *a = addr_slot_of(ip, isid, callee);
	struct image_sym y;
	int real;

	if (addr_slot_holds(r, a, ip, isid, callee)) {
		*name = a->name;
		*obj = a->obj;
		*how = a->how;
		*off = a->off;
		*aid = (int)(a - addrs);
		return true;
	}
	*aid = -1;
	real = real_isid(rec, ip, isid);
	resolve(rec, ip, real, &y);
	if (!sym_ids(r, &y, callee, name, obj, how))
		return false;
	*off = y.off;
	/* (kept by @isid as given: -1 stands for the same section at every use in a chunk) */
	if (ip && real > 0) {
		struct padef d = { .aid = (uint16_t)(a - addrs), .name = *name, .obj = *obj,
				   .how = *how, .off = y.off };

		*a = (struct addr_slot){ .chunk = r->chunk, .ip = ip, .off = y.off, .isid = isid,
					 .name = *name, .obj = *obj, .how = *how,
					 .callee = callee };
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

/* T_CALLV (or T_CALLV0): a call of the function at slot @aid after @k instructions. */
static inline void put_callv(struct render *r, uint32_t k, uint16_t aid, uint64_t ret)
{
	struct dsink *s = r->sink;
	uint8_t *w = dsink_room(s, 1 + 2 * VARINT_MAX + sizeof(aid)), *p;

	if (!w)
		return;
	epoch(r);
	p = put_varint(w + 1, k);
	memcpy(p, &aid, sizeof(aid));
	p += sizeof(aid);
	if (ep_has_ret) {
		int64_t d = (int64_t)(ret - ep_ret);

		w[0] = T_CALLV;
		p = put_varint(p, (uint64_t)d << 1 ^ (uint64_t)(d >> 63));
	} else {
		w[0] = T_CALLV0;
		p = put_varint(p, ret);
	}
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
	if (fa >= 0 && ta >= 0 && fa == ta && (addrs[fa].ip != rec->from ||
					       addrs[fa].isid != rec->from_isid))
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
	const struct addr_slot *a = addr_slot_of(ip, isid, callee);

	return addr_slot_holds(r, a, ip, isid, callee) ? (int)(a - addrs) : -1;
}

/*
 * The fast path's call or return after @n instructions, the last it (renderer.flow()): the
 * run in the record where it can be. A return to the top frame's call is T_RETTOP; most
 * calls and other returns name addresses already kept: their record is written here,
 * without put_call()'s or put_ret()'s look-ups (the same bytes).
 */
static void flow_slow(struct render *r, const struct rrec *rec, uint64_t n, uint64_t next);

static void flow(struct render *r, const struct rrec *rec, uint64_t n, uint64_t next)
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
				return;
			w[0] = T_RETTOP;
			dsink_commit(s, (size_t)(put_varint(w + 1, k) - w));
			sh_top--;
			sh_n--;
			return;
		}
		if (call && (ta = addr_kept(r, rec->to, rec->to_isid, true)) >= 0) {
			put_time(r, rec);
			put_callv(r, k, (uint16_t)ta, next);
			sh_push(r, next);
			return;
		}
	}
	flow_slow(r, rec, n, next);
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

/* ---- at the merge ---- */

#define NONE UINT32_MAX
#define CALLEES 4

struct dist {
	uint64_t n, min, max;
	uint64_t *exact;		/* up to REPORT_EXACT_MAX, then NULL and hist */
	uint32_t nexact, cap;
	uint64_t *hist;
};

struct outlier {
	uint64_t dur, start;
	uint64_t seq;			/* its call's place among the trace's calls */
	bool timed;			/* its call had a time (else its start is shown as none) */
	uint32_t pid, tid;
	uint32_t callee[CALLEES], ncalls[CALLEES];
	uint32_t more;			/* calls to other functions */
};

/*
 * A row, 64-byte aligned (funcs_grow()) and two cache lines long: the first has what every
 * call, return and run of instructions adds to, the second the duration's distribution and
 * what the output alone reads. (Unaligned, a row took three lines, each one touched by a
 * call: on many functions, each a miss.)
 */
struct func {
	uint64_t calls, insns_self, insns_total, time_self, time_total;
	/* its frames on the stacks, and the one thread they are all on (NULL: more than one,
	 * or none): whether a call is its function's outermost without walking the stack */
	const struct thr *open_thr;
	uint32_t open;
	uint32_t nout;
	uint64_t incomplete;
	struct dist d;
	struct outlier *out;		/* a min-heap of the longest, cfg->outliers */
	uint32_t name, group;		/* a sym (sym_get), an interned string */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct func) == 128, "struct func: two cache lines");

struct frame {
	uint32_t func, node;
	uint64_t ret;			/* return address; UINT64_MAX: an interrupt */
	uint64_t start, paused0, insns0, intr0;
	uint64_t seq;			/* the call's place among the trace's calls */
	uint64_t child_dur;
	uint32_t callee[CALLEES], ncalls[CALLEES], more;
	bool outer;			/* no frame of its function below */
	bool timed;			/* its call had a time */
};

struct thr {
	bool used, paused;
	uint32_t pid, tid, group, root;
	uint64_t lru;
	struct frame *st;
	uint32_t depth, cap, over, intr;
	/* intr_insns: the instructions of interrupts that ended (counted when they end, so
	 * that a function the handler calls keeps its own) */
	uint64_t insns, intr_insns, paused_total, pause_at, resume_ip, last_time;
	uint32_t base;			/* the function at depth 0, NONE: not known */
	uint64_t pending;		/* its instructions while not known */
};

struct node {
	uint32_t parent, name;		/* name: a sym */
	uint64_t insns, time;
};

/*
 * An open-addressing table of 64-bit keys to 32-bit values; a key and its value side by
 * side (a look-up reads one cache line, not one in each of two arrays).
 */
struct mslot {
	uint64_t key;
	uint32_t val;
};

struct map {
	struct mslot *slots;
	size_t cap, n;
};

/*
 * A call's row, by what its T_CALL says (how it names the callee, the interned string of
 * its name or object, its offset) and the caller's group: found once through name_of(),
 * sym_get() and func_get(), then from here (a call names the same few callees over and
 * over). Direct-mapped, so bounded; a miss only costs the lookups.
 */
struct call_slot {
	uint64_t off;
	uint32_t base, obj, group, sym, func;
	uint8_t how, used;
};

#define CALL_BITS 16
#define CALL_WAYS 2		/* slots a function may take: two on a conflict both stay */

/*
 * A function as a record names it: by how (N_*, or N_NAME: @base is its name already), the
 * interned string it starts from (@base: the symbol; none for N_UNKNOWN), its object (@obj,
 * NONE: none) and offset. Spelled (name_of()) only when it is needed, and then kept.
 */
enum { N_NAME = 3 };

struct fref {
	uint64_t off;
	uint32_t base, obj;
	uint8_t how;
};

/*
 * The function at an address slot (T_ADEF), and its row in one group: found (func_of())
 * at the slot's first use by that group, then kept with the slot (a call by slot hashes
 * nothing).
 */
struct aslot {
	struct fref e;
	uint32_t group, sym, func;	/* group NONE: not found yet */
};

struct rstate {
	const struct report_config *rc;
	size_t nr_streams;
	/* interned strings */
	char **str;
	uint32_t nstr, capstr;
	struct map strmap;		/* hash -> first id (chained through strnext) */
	uint32_t *strnext;
	/* functions by name and object (interned strings, object NONE: none) */
	uint32_t *sym_name, *sym_obj;
	uint32_t nsyms, capsyms;
	struct map symmap;		/* name << 32 | object */
	struct func *funcs;
	uint32_t nfuncs, capfuncs;
	struct map funcmap;		/* group << 32 | name */
	bool funcs_full;
	struct node *nodes;
	uint32_t nnodes, capnodes;
	struct map nodemap;		/* parent << 32 | name */
	struct map offmap;		/* name_of()'s: N_* << 63 | string << 40 | offset */
	struct thr thr[REPORT_THREADS_MAX];
	struct thr *cur;
	uint64_t lru;
	uint32_t stream, stream_name, unknown;
	bool clock_known, clock_time;
	/* the first time a record had, and whether any other differed: the time moves */
	bool have_t0, time_moves;
	uint64_t t0;
	uint64_t insns, calls, cut, evicted, deep;
	bool oom;
	bool nodes_on;			/* the call-stack tree is kept: --folded only */
	struct call_slot calls_seen[1u << CALL_BITS];
	uint32_t defs[DEF_MAX];		/* the chunk's name ids (T_DEF): interned, NONE: "" */
	/* the functions at the chunk's address slots (T_ADEF), the time T_TIME said */
	struct aslot aslots[ADDR_SLOTS];
	bool a_has_time;
	uint64_t a_time;
	uint64_t ret_prev;		/* the return address the last T_CALLV said */
	bool a_noted;			/* note_time() and the clock saw T_TIME's time */
	bool ahead_on;			/* report_filter() looks ahead (struct ahead) */
};

struct report_state {
	struct rstate *s;
};

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	return k ^ (k >> 33);
}

static uint32_t map_get(const struct map *m, uint64_t key)
{
	if (!m->cap)
		return NONE;
	for (size_t i = hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].val == NONE)
			return NONE;
		if (m->slots[i].key == key)
			return m->slots[i].val;
	}
}

static bool map_set(struct map *m, uint64_t key, uint32_t val)
{
	if (2 * (m->n + 1) > m->cap) {
		struct map n = { .cap = m->cap ? 2 * m->cap : 1024 };

		n.slots = malloc(n.cap * sizeof(*n.slots));
		if (!n.slots)
			return false;
		for (size_t i = 0; i < n.cap; i++)
			n.slots[i].val = NONE;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].val != NONE)
				map_set(&n, m->slots[i].key, m->slots[i].val);
		free(m->slots);
		*m = n;
	}
	for (size_t i = hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].val == NONE) {
			m->slots[i].key = key;
			m->slots[i].val = val;
			m->n++;
			return true;
		}
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return true;
		}
	}
}

static void map_free(struct map *m)
{
	free(m->slots);
}

static bool grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t n;
	void *q;

	if (need <= *cap)
		return true;
	n = *cap ? 2 * *cap : 64;
	while (n < need)
		n *= 2;
	q = realloc(*p, (size_t)n * size);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

/* The id of a string (@n bytes), NONE when out of memory. */
static uint32_t intern(struct rstate *s, const char *p, size_t n)
{
	uint64_t h = str_hash(p, n);
	uint32_t id = map_get(&s->strmap, h);

	for (uint32_t i = id; i != NONE; i = s->strnext[i])
		if (!strncmp(s->str[i], p, n) && !s->str[i][n])
			return i;
	if (s->nstr + 1 > s->capstr) {
		uint32_t cap = s->capstr;
		uint32_t *next;

		if (!grow((void **)&s->str, &cap, s->nstr + 1, sizeof(*s->str)))
			goto oom;
		next = realloc(s->strnext, cap * sizeof(*next));
		if (!next)
			goto oom;
		s->strnext = next;
		s->capstr = cap;
	}
	s->str[s->nstr] = strndup(p, n);
	if (!s->str[s->nstr] || !map_set(&s->strmap, h, s->nstr))
		goto oom;
	s->strnext[s->nstr] = id;
	return s->nstr++;
oom:
	s->oom = true;
	return NONE;
}

static uint32_t intern_str(struct rstate *s, const char *p)
{
	return intern(s, p, strlen(p));
}

/* The function @name (a string) in @obj (a string, NONE: none); NONE when out of memory. */
static uint32_t sym_get(struct rstate *s, uint32_t name, uint32_t obj)
{
	uint64_t key = (uint64_t)name << 32 | obj;
	uint32_t id = map_get(&s->symmap, key), cap = s->capsyms;

	if (id != NONE || name == NONE)
		return id;
	if (s->nsyms + 1 > cap) {
		if (!grow((void **)&s->sym_name, &cap, s->nsyms + 1, sizeof(*s->sym_name)))
			goto oom;
		cap = s->capsyms;
		if (!grow((void **)&s->sym_obj, &cap, s->nsyms + 1, sizeof(*s->sym_obj)))
			goto oom;
		s->capsyms = cap;
	}
	if (!map_set(&s->symmap, key, s->nsyms))
		goto oom;
	s->sym_name[s->nsyms] = name;
	s->sym_obj[s->nsyms] = obj;
	return s->nsyms++;
oom:
	s->oom = true;
	return NONE;
}

/* A function named @p (a C string) without an object: "[interrupt]", a thread's label. */
static uint32_t sym_str(struct rstate *s, const char *p)
{
	return sym_get(s, intern_str(s, p), NONE);
}

static const char *sym_text(const struct rstate *s, uint32_t sym)
{
	return s->str[s->sym_name[sym]];
}

static const char *obj_text(const struct rstate *s, uint32_t sym)
{
	return s->sym_obj[sym] == NONE ? "" : s->str[s->sym_obj[sym]];
}

/* Room for one more row, aligned as struct func wants (realloc() would not). */
static bool funcs_grow(struct rstate *s)
{
	uint32_t n = s->capfuncs ? 2 * s->capfuncs : 64;
	struct func *q;

	if (s->nfuncs < s->capfuncs)
		return true;
	q = aligned_alloc(_Alignof(struct func), (size_t)n * sizeof(*q));
	if (!q)
		return false;
	if (s->nfuncs)
		memcpy(q, s->funcs, (size_t)s->nfuncs * sizeof(*q));
	free(s->funcs);
	s->funcs = q;
	s->capfuncs = n;
	return true;
}

/* The row of @name in @group; rows past REPORT_FUNCS_MAX go to "[other]". */
static uint32_t func_get(struct rstate *s, uint32_t group, uint32_t name)
{
	uint64_t key = (uint64_t)group << 32 | name;
	uint32_t id = map_get(&s->funcmap, key);
	struct func *f;

	if (id != NONE)
		return id;
	if (name == NONE || group == NONE)
		return NONE;
	if (s->nfuncs >= REPORT_FUNCS_MAX) {
		s->funcs_full = true;
		name = sym_str(s, "[other]");
		key = (uint64_t)group << 32 | name;
		id = map_get(&s->funcmap, key);
		if (id != NONE || s->nfuncs >= REPORT_FUNCS_MAX + 256)
			return id;
	}
	if (!funcs_grow(s) ||
	    !map_set(&s->funcmap, key, s->nfuncs)) {
		s->oom = true;
		return NONE;
	}
	f = &s->funcs[s->nfuncs];
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->group = group;
	f->d.min = UINT64_MAX;
	return s->nfuncs++;
}

static uint32_t node_get(struct rstate *s, uint32_t parent, uint32_t name)
{
	uint64_t key = (uint64_t)parent << 32 | name;
	uint32_t id = map_get(&s->nodemap, key);

	if (id != NONE)
		return id;
	if (s->nnodes >= REPORT_NODES_MAX || name == NONE)
		return parent;
	if (!grow((void **)&s->nodes, &s->capnodes, s->nnodes + 1, sizeof(*s->nodes)) ||
	    !map_set(&s->nodemap, key, s->nnodes)) {
		s->oom = true;
		return parent;
	}
	s->nodes[s->nnodes] = (struct node){ .parent = parent, .name = name };
	return s->nnodes++;
}

/* ---- durations ---- */

static size_t bucket(uint64_t v)
{
	int e;

	if (v < 2 * REPORT_HIST_SUB)
		return (size_t)v;
	e = 63 - __builtin_clzll(v);	/* >= 6 */
	return 2 * REPORT_HIST_SUB + (size_t)(e - 6) * REPORT_HIST_SUB +
	       ((v >> (e - 5)) & (REPORT_HIST_SUB - 1));
}

#define BUCKETS (2 * REPORT_HIST_SUB + 58 * REPORT_HIST_SUB)

/* The middle of bucket @b. */
static uint64_t bucket_value(size_t b)
{
	size_t e, sub;
	uint64_t lo;

	if (b < 2 * REPORT_HIST_SUB)
		return b;
	e = (b - 2 * REPORT_HIST_SUB) / REPORT_HIST_SUB + 6;
	sub = (b - 2 * REPORT_HIST_SUB) % REPORT_HIST_SUB;
	lo = (1ull << e) | ((uint64_t)sub << (e - 5));
	return lo + (1ull << (e - 6));
}

/* dist_add() before its histogram: the exact durations, then the histogram they go into. */
static void dist_add_slow(struct rstate *s, struct dist *d, uint64_t v)
{
	if (d->nexact < REPORT_EXACT_MAX) {
		if (!grow((void **)&d->exact, &d->cap, d->nexact + 1, sizeof(*d->exact))) {
			s->oom = true;
			return;
		}
		d->exact[d->nexact++] = v;
		return;
	}
	d->hist = calloc(BUCKETS, sizeof(*d->hist));
	if (!d->hist) {
		s->oom = true;
		return;
	}
	for (uint32_t i = 0; i < d->nexact; i++)
		d->hist[bucket(d->exact[i])]++;
	free(d->exact);
	d->exact = NULL;
	d->nexact = d->cap = 0;
	d->hist[bucket(v)]++;
}

static inline void dist_add(struct rstate *s, struct dist *d, uint64_t v)
{
	d->n++;
	d->min = v < d->min ? v : d->min;
	d->max = v > d->max ? v : d->max;
	if (d->hist)
		d->hist[bucket(v)]++;
	else
		dist_add_slow(s, d, v);
}

static inline void swap_u64(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

/*
 * Reorders @a[0..@n) so that @a[@k] is the value a sort would put there, none before it
 * larger and none after it smaller (a selection: quickselect, the median of three as pivot).
 */
static void select_u64(uint64_t *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (hi - lo >= 16) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		uint64_t pivot;

		if (a[mid] < a[lo])
			swap_u64(&a[mid], &a[lo]);
		if (a[hi] < a[lo])
			swap_u64(&a[hi], &a[lo]);
		if (a[hi] < a[mid])
			swap_u64(&a[hi], &a[mid]);
		pivot = a[mid];
		/* Hoare's: runs of equal values split in the middle */
		for (;;) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i >= j)
				break;
			swap_u64(&a[i++], &a[j--]);
		}
		/* [lo, j] <= pivot <= [j + 1, hi] */
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
	for (size_t i = lo + 1; i <= hi; i++) {
		uint64_t v = a[i];
		size_t j = i;

		for (; j > lo && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

/*
 * Quantiles @q (per mille, ascending) into @v: nearest rank; exact, or a bucket's middle in
 * [min, max].
 */
static void dist_quantiles(struct dist *d, const unsigned *q, uint64_t *v, size_t nq)
{
	uint64_t rank[8], seen = 0, hi;
	size_t b = 0;

	for (size_t i = 0; i < nq; i++) {
		rank[i] = d->n ? (d->n * q[i] + 999) / 1000 : 0;
		rank[i] = rank[i] ? rank[i] - 1 : 0;
		v[i] = 0;
	}
	if (!d->n)
		return;
	if (!d->hist) {
		/* the highest rank first: the lower ones are then among the values below it */
		hi = d->nexact;
		for (size_t i = nq; i-- > 0;) {
			if (rank[i] >= d->nexact)	/* out of memory on the way */
				continue;
			if (rank[i] < hi) {
				select_u64(d->exact, hi, rank[i]);
				hi = rank[i];
			}
			v[i] = d->exact[rank[i]];
		}
		return;
	}
	/* one walk of the buckets for all @q */
	for (size_t i = 0; i < nq; i++) {
		for (; b < BUCKETS; b++) {
			if (seen + d->hist[b] > rank[i]) {
				v[i] = bucket_value(b);
				break;
			}
			seen += d->hist[b];
		}
		v[i] = v[i] < d->min ? d->min : v[i] > d->max ? d->max : v[i];
	}
}

/* ---- outliers ---- */

/*
 * Whether @x comes before @y: longer, then started earlier, then called earlier in the
 * trace. A total order by what the trace fixes: which calls are kept and the order they are
 * shown in do not depend on the order calls reach the heap (-J N prints what -J 1 does).
 */
static bool out_before(const struct outlier *x, const struct outlier *y)
{
	if (x->dur != y->dur)
		return x->dur > y->dur;
	if (x->start != y->start)
		return x->start < y->start;
	return x->seq < y->seq;
}

/* A min-heap by out_before(): its root is the call that goes first when a better comes. */
static void heap_down(struct outlier *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		struct outlier t;

		if (l < n && out_before(&h[m], &h[l]))
			m = l;
		if (r < n && out_before(&h[m], &h[r]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void outlier_add(struct rstate *s, struct func *f, const struct frame *fr,
			const struct thr *t, uint64_t dur)
{
	uint64_t n = s->rc->outliers;
	struct outlier o;

	if (!n)
		return;
	o.dur = dur;
	o.start = fr->start;
	o.seq = fr->seq;
	if (f->nout == n && !out_before(&o, &f->out[0]))
		return;
	if (!f->out && !(f->out = calloc(n, sizeof(*f->out)))) {
		s->oom = true;
		return;
	}
	o.timed = fr->timed;
	o.pid = t->pid;
	o.tid = t->tid;
	memcpy(o.callee, fr->callee, sizeof(o.callee));
	memcpy(o.ncalls, fr->ncalls, sizeof(o.ncalls));
	o.more = fr->more;
	if (f->nout < n) {
		uint32_t i = f->nout++;

		f->out[i] = o;
		/* up */
		while (i && out_before(&f->out[(i - 1) / 2], &f->out[i])) {
			struct outlier tmp = f->out[i];

			f->out[i] = f->out[(i - 1) / 2];
			f->out[(i - 1) / 2] = tmp;
			i = (i - 1) / 2;
		}
		return;
	}
	f->out[0] = o;
	heap_down(f->out, f->nout, 0);
}

/* ---- stacks ---- */

static uint64_t now(const struct rstate *s, const struct thr *t)
{
	return s->clock_time ? t->last_time : t->insns;
}

static uint64_t paused_now(const struct rstate *s, const struct thr *t)
{
	return s->clock_time ? t->paused_total : t->intr_insns;
}

/* @f leaves @t's stack. */
static void frame_gone(struct rstate *s, const struct frame *f)
{
	if (f->func != NONE && !--s->funcs[f->func].open)
		s->funcs[f->func].open_thr = NULL;
}

static void cut_frame(struct rstate *s, struct thr *t)
{
	struct frame *f = &t->st[--t->depth];

	frame_gone(s, f);

	if (f->ret == UINT64_MAX) {
		t->intr--;
		return;
	}
	if (f->func != NONE)
		s->funcs[f->func].incomplete++;
}

/* Trace is missing: every open call of @t is incomplete, what runs next is not known. */
static void cut_all(struct rstate *s, struct thr *t)
{
	if (t->depth || t->over)
		s->cut++;
	while (t->depth)
		cut_frame(s, t);
	t->over = 0;
	t->intr = 0;
	if (t->pending) {
		uint32_t u = func_get(s, t->group, s->unknown);

		if (u != NONE)
			s->funcs[u].insns_self += t->pending;
		t->pending = 0;
	}
	t->base = NONE;
	t->paused = false;
}

static inline __attribute__((always_inline)) void pop_complete(struct rstate *s,
							       struct thr *t)
{
	struct frame *f = &t->st[--t->depth];
	struct frame *parent = t->depth ? &t->st[t->depth - 1] : NULL;
	uint64_t dur, incl, self;
	struct func *fn;

	frame_gone(s, f);
	dur = now(s, t) - f->start - (paused_now(s, t) - f->paused0);
	if (now(s, t) < f->start + (paused_now(s, t) - f->paused0))
		dur = 0;
	incl = (t->insns - f->insns0) - (t->intr_insns - f->intr0);
	if (f->ret == UINT64_MAX) {
		/* An interrupt ends: its time is not the interrupted function's. */
		t->intr--;
		t->intr_insns += incl;
		if (s->clock_time)
			t->paused_total += dur;
		return;
	}
	self = dur > f->child_dur ? dur - f->child_dur : 0;
	if (parent && parent->ret != UINT64_MAX)
		parent->child_dur += dur;
	if (f->func == NONE)
		return;
	fn = &s->funcs[f->func];
	if (f->outer) {
		fn->insns_total += incl;
		fn->time_total += dur;
	}
	fn->time_self += self;
	if (f->node != NONE)
		s->nodes[f->node].time += self;
	dist_add(s, &fn->d, dur);
	if (s->rc->outliers)
		outlier_add(s, fn, f, t, dur);
}

static struct thr *thread_get(struct rstate *s, uint32_t pid, uint32_t tid)
{
	struct thr *t, *old = NULL, *free_one = NULL;
	char label[128];

	for (size_t i = 0; i < REPORT_THREADS_MAX; i++) {
		t = &s->thr[i];
		if (!t->used) {
			free_one = free_one ? free_one : t;
			continue;
		}
		if (t->pid == pid && t->tid == tid)
			return t;
		if (!old || t->lru < old->lru)
			old = t;
	}
	t = free_one;
	if (!t) {
		/* The longest idle thread's stack is given up. */
		t = old;
		cut_all(s, t);
		s->evicted++;
	}
	free(t->st);
	memset(t, 0, sizeof(*t));
	t->used = true;
	t->pid = pid;
	t->tid = tid;
	t->base = NONE;
	snprintf(label, sizeof(label), "%" PRIu32 "/%" PRIu32, pid, tid);
	t->root = !s->nodes_on ? NONE :
		  node_get(s, NONE, tid || pid ? sym_str(s, label) :
			   sym_get(s, s->stream_name, NONE));
	if (s->rc->per_thread && s->rc->per_stream)
		snprintf(label, sizeof(label), "%s %" PRIu32 "/%" PRIu32,
			 s->str[s->stream_name], pid, tid);
	else if (s->rc->per_stream)
		snprintf(label, sizeof(label), "%s", s->str[s->stream_name]);
	else if (!s->rc->per_thread)
		label[0] = '\0';
	t->group = intern_str(s, label);
	return t;
}

static void streams_end(struct rstate *s)
{
	for (size_t i = 0; i < REPORT_THREADS_MAX; i++) {
		if (s->thr[i].used)
			cut_all(s, &s->thr[i]);
		free(s->thr[i].st);
		memset(&s->thr[i], 0, sizeof(s->thr[i]));
	}
	s->cur = NULL;
}

static struct thr *current(struct rstate *s)
{
	if (!s->cur)
		s->cur = thread_get(s, 0, 0);
	return s->cur;
}

static inline void account(struct rstate *s, uint64_t n)
{
	struct thr *t = current(s);

	s->insns += n;
	t->insns += n;
	if (t->depth) {
		struct frame *f = &t->st[t->depth - 1];

		if (f->node != NONE)
			s->nodes[f->node].insns += n;
		if (f->func != NONE)
			s->funcs[f->func].insns_self += n;
		return;
	}
	if (t->root != NONE)
		s->nodes[t->root].insns += n;
	if (t->base != NONE)
		s->funcs[t->base].insns_self += n;
	else
		t->pending += n;
}

/* Whether the trace's time moves: a trace with one timestamp times nothing. */
static void note_time(struct rstate *s, const struct prec *p)
{
	if (!p->has_time)
		return;
	if (!s->have_t0) {
		s->have_t0 = true;
		s->t0 = p->time;
	} else if (p->time != s->t0) {
		s->time_moves = true;
	}
}

static void set_time(struct thr *t, const struct prec *p)
{
	if (p->has_time && p->time > t->last_time)
		t->last_time = p->time;
}

/* note_time() and the clock (as report_filter() sets it) for the time T_TIME said. */
static void note_a_time(struct rstate *s)
{
	struct prec p = { .has_time = s->a_has_time, .time = s->a_time };

	note_time(s, &p);
	if (!s->clock_known && p.has_time && !s->rc->clock_insns) {
		s->clock_known = true;
		s->clock_time = true;
	}
	s->a_noted = true;
}

/* What a call called: its outliers' "called" column, kept only for --outliers. */
static inline void count_callee(const struct rstate *s, struct frame *parent, uint32_t func)
{
	int i;

	if (!parent || func == NONE || !s->rc->outliers)
		return;
	for (i = 0; i < CALLEES && parent->ncalls[i] && parent->callee[i] != func; i++)
		;
	if (i == CALLEES) {
		parent->more++;
	} else {
		parent->callee[i] = func;
		parent->ncalls[i]++;
	}
}

static inline __attribute__((always_inline)) void push(struct rstate *s, struct thr *t,
						       uint32_t func, uint32_t name,
						       uint64_t ret, bool timed)
{
	struct frame *f, *parent;
	struct func *fn;
	uint32_t pnode;

	if (t->depth >= REPORT_DEPTH_MAX) {
		t->over++;
		s->deep++;
		if (func != NONE)
			s->funcs[func].incomplete++;
		return;
	}
	/* The stack may move: the caller's frame is taken after (its callees were counted into
	 * the freed one, lost or not by how malloc reused it: -J N and -J 1 differed). */
	if (!grow((void **)&t->st, &t->cap, t->depth + 1, sizeof(*t->st))) {
		s->oom = true;
		return;
	}
	parent = t->depth ? &t->st[t->depth - 1] : NULL;
	pnode = parent ? parent->node : t->root;
	count_callee(s, parent, func);
	f = &t->st[t->depth++];
	f->child_dur = 0;
	if (s->rc->outliers) {
		memset(f->callee, 0, sizeof(f->callee));
		memset(f->ncalls, 0, sizeof(f->ncalls));
		f->more = 0;
	}
	f->func = func;
	f->ret = ret;
	f->node = pnode == NONE ? NONE : node_get(s, pnode, name);
	f->start = now(s, t);
	f->paused0 = paused_now(s, t);
	f->insns0 = t->insns;
	f->intr0 = t->intr_insns;
	f->seq = s->calls;
	f->outer = true;
	f->timed = timed;
	if (func == NONE)
		return;
	fn = &s->funcs[func];
	if (fn->open && fn->open_thr == t) {
		f->outer = false;
	} else if (fn->open && !fn->open_thr) {
		for (uint32_t i = 0; i + 1 < t->depth; i++)
			if (t->st[i].func == func)
				f->outer = false;
	}
	fn->open_thr = !fn->open++ || fn->open_thr == t ? t : NULL;
	/* where its return will put the duration (dist_add(): on many functions, a miss) */
	if (fn->d.nexact < fn->d.cap)
		__builtin_prefetch(&fn->d.exact[fn->d.nexact], 1);
}

/* An object's name (@n bytes), NONE for none. */
static uint32_t intern_obj(struct rstate *s, const char *p, size_t n)
{
	return n ? intern(s, p, n) : NONE;
}

/* A record's N_*: any other is taken as N_UNKNOWN (as name_of() spells it). */
static uint8_t how_of(unsigned how)
{
	return how == N_SYM || how == N_SYMOFF ? (uint8_t)how : N_UNKNOWN;
}

/* The name @e gives: formatted here, only when it is needed. */
static uint32_t name_of(struct rstate *s, const struct fref *e)
{
	uint32_t base = e->how == N_SYMOFF ? e->base : e->obj, got;
	uint64_t key = (uint64_t)(e->how == N_SYMOFF) << 63 | (uint64_t)base << 40 | e->off;
	bool keep = base < (1u << 23) && e->off < (1ull << 40);
	char b[4 * NAME_LEN];

	if (e->how == N_SYM || e->how == N_NAME)
		return e->base;
	/* Spelled once per name and offset: the same few come at every call. */
	if (keep && (got = map_get(&s->offmap, key)) != NONE)
		return got;
	if (e->how == N_SYMOFF) {
		if (e->base == NONE)
			return NONE;
		snprintf(b, sizeof(b), "%s+0x%" PRIx64, s->str[e->base], e->off);
	} else if (e->obj == NONE) {
		snprintf(b, sizeof(b), "[unknown]");
	} else {
		snprintf(b, sizeof(b), "[unknown] (%s+0x%" PRIx64 ")", s->str[e->obj], e->off);
	}
	got = intern_str(s, b);
	if (keep && got != NONE && !map_set(&s->offmap, key, got))
		s->oom = true;
	return got;
}

/* @e's set in calls_seen for @group (func_of()): CALL_WAYS slots, the latest first. */
static struct call_slot *call_slot_of(struct rstate *s, uint32_t group, const struct fref *e)
{
	uint64_t off = e->how == N_SYM || e->how == N_NAME ? 0 : e->off;
	uint32_t base = e->how == N_UNKNOWN ? NONE : e->base;
	uint64_t h;

	h = ((uint64_t)base << 32 ^ e->obj ^ (uint64_t)group << 16 ^ (uint64_t)e->how << 62) *
	    0x9e3779b97f4a7c15ull ^ off * 0xc2b2ae3d27d4eb4full;
	return &s->calls_seen[h >> (64 - CALL_BITS) & ~(uint64_t)(CALL_WAYS - 1)];
}

/*
 * The function @e names (a sym, into @sym) and its row in @group (the return; NONE: none,
 * or out of memory), by calls_seen: name_of(), sym_get() and func_get() once per function,
 * then one slot (calls and returns name the same few over and over).
 */
static uint32_t func_of(struct rstate *s, uint32_t group, const struct fref *e, uint32_t *sym)
{
	uint64_t off = e->how == N_SYM || e->how == N_NAME ? 0 : e->off;	/* (ignored) */
	uint32_t base = e->how == N_UNKNOWN ? NONE : e->base, name, n, func;
	struct call_slot *set = call_slot_of(s, group, e), *c;

	for (c = set; c < set + CALL_WAYS; c++)
		if (c->used && c->off == off && c->base == base && c->obj == e->obj &&
		    c->group == group && c->how == e->how) {
			*sym = c->sym;
			return c->func;
		}
	name = name_of(s, e);
	n = sym_get(s, name, e->obj);
	func = func_get(s, group, n);
	*sym = n;
	if (name != NONE && n != NONE && func != NONE) {
		memmove(set + 1, set, (CALL_WAYS - 1) * sizeof(*set));
		*set = (struct call_slot){ .off = off, .base = base, .obj = e->obj,
					   .group = group, .sym = n, .func = func, .how = e->how,
					   .used = 1 };
	}
	return func;
}

/* @a's function (a sym, into @sym) and its row in @group, as func_of() gives them. */
static uint32_t aslot_func(struct rstate *s, uint32_t group, struct aslot *a, uint32_t *sym)
{
	uint32_t func;

	if (a->group == group && group != NONE) {
		*sym = a->sym;
		return a->func;
	}
	func = func_of(s, group, &a->e, sym);
	if (func != NONE) {
		a->group = group;
		a->sym = *sym;
		a->func = func;
	}
	return func;
}

/* A call of @t into the function @n (a sym) whose row is @func. */
static void on_call_row(struct rstate *s, struct thr *t, const struct prec *p, uint32_t n,
			uint32_t func)
{
	if (!s->clock_known) {
		s->clock_known = true;
		s->clock_time = p->has_time && !s->rc->clock_insns;
	}
	set_time(t, p);
	if (func != NONE)
		s->funcs[func].calls++;
	s->calls++;
	push(s, t, func, n, p->a ? p->a : UINT64_MAX - 1, p->has_time);
}

/* A call of the function @e names, or (@a not NULL) the one at an address slot. */
static void on_call(struct rstate *s, const struct prec *p, const struct fref *e,
		    struct aslot *a)
{
	struct thr *t = current(s);
	uint32_t n, func = a ? aslot_func(s, t->group, a, &n) : func_of(s, t->group, e, &n);

	on_call_row(s, t, p, n, func);
}

/* A return that closes an open call (true); false: on_ret_unmatched() with its names. */
static bool on_ret_match(struct rstate *s, const struct prec *p)
{
	struct thr *t = current(s);
	uint32_t i;

	set_time(t, p);
	if (t->over) {
		t->over--;
		return true;
	}
	for (i = t->depth; i > 0; i--) {
		if (t->st[i - 1].ret == UINT64_MAX)
			break;
		if (t->st[i - 1].ret == p->b) {
			/* What is above it returns with it (the stack unwinds). */
			while (t->depth >= i)
				pop_complete(s, t);
			return true;
		}
	}
	return false;
}

/*
 * A return that closes no open call, from the function @from names to the one @to names
 * (or, @afrom and @ato not NULL, the ones at those address slots).
 */
static void on_ret_unmatched(struct rstate *s, const struct fref *from, const struct fref *to,
			     struct aslot *afrom, struct aslot *ato)
{
	struct thr *t = current(s);
	uint32_t fn, sym;

	/* A return from a call before the trace (or a gap): its function is now known. */
	if (t->depth)
		cut_all(s, t);
	fn = afrom ? aslot_func(s, t->group, afrom, &sym) : func_of(s, t->group, from, &sym);
	if (fn != NONE) {
		if (t->base != fn)
			s->funcs[fn].incomplete++;
		s->funcs[fn].insns_self += t->pending;
		t->pending = 0;
	}
	t->base = ato ? aslot_func(s, t->group, ato, &sym) : func_of(s, t->group, to, &sym);
	if (t->base != NONE && t->base != fn)
		s->funcs[t->base].incomplete++;
	if (t->base == NONE) {
		uint32_t u = func_get(s, t->group, s->unknown);

		if (u != NONE)
			s->funcs[u].insns_self += t->pending;
		t->pending = 0;
	}
}

static void on_thread(struct rstate *s, const struct prec *p)
{
	struct thr *t = current(s), *n;

	set_time(t, p);
	if (t->pid == p->pid && t->tid == p->tid)
		return;
	if (!t->paused) {
		t->paused = true;
		t->pause_at = t->last_time;
	}
	n = thread_get(s, p->pid, p->tid);
	n->lru = ++s->lru;
	if (p->has_time && p->time > n->last_time)
		n->last_time = p->time;
	if (n->paused) {
		n->paused = false;
		n->paused_total += n->last_time - n->pause_at;
	}
	s->cur = n;
}

static void on_rec(struct rstate *s, const struct prec *p, const char *s1, const char *s2,
		   const char *s3, const char *s4)
{
	struct thr *t;

	note_time(s, p);
	/* The clock: the trace's time when it has any before the first call. */
	if (!s->clock_known && p->has_time && !s->rc->clock_insns) {
		s->clock_known = true;
		s->clock_time = true;
	}

	switch (p->kind) {
	case P_STREAM:
		streams_end(s);
		s->stream = (uint32_t)p->a;
		s->stream_name = intern(s, s1, p->len1);
		break;
	case P_CALL: {
		struct fref e = { .how = N_NAME, .base = intern(s, s1, p->len1),
				  .obj = intern_obj(s, s3, p->len3) };

		on_call(s, p, &e, NULL);
		break;
	}
	case P_RET:
		if (!on_ret_match(s, p)) {
			struct fref from = { .how = N_NAME, .base = intern(s, s1, p->len1),
					     .obj = intern_obj(s, s3, p->len3) };
			struct fref to = { .how = N_NAME, .base = intern(s, s2, p->len2),
					   .obj = intern_obj(s, s4, p->len4) };

			on_ret_unmatched(s, &from, &to, NULL, NULL);
		}
		break;
	case P_GAP:
		t = current(s);
		set_time(t, p);
		cut_all(s, t);
		break;
	case P_THREAD:
		on_thread(s, p);
		break;
	case P_END:
		streams_end(s);
		break;
	case P_OFF:
		t = current(s);
		set_time(t, p);
		t->paused = true;
		t->pause_at = t->last_time;
		t->resume_ip = p->a;
		break;
	case P_ON:
		t = current(s);
		set_time(t, p);
		if (!t->paused)
			break;
		t->paused = false;
		/* Where it stopped: the thread goes on (the time between is not its). */
		if (p->b || p->a == t->resume_ip)
			t->paused_total += t->last_time - t->pause_at;
		else
			cut_all(s, t);
		break;
	case P_INTR:
		t = current(s);
		set_time(t, p);
		push(s, t, func_get(s, t->group, sym_str(s, "[interrupt]")),
		     sym_str(s, "[interrupt]"), UINT64_MAX, p->has_time);
		if (t->depth && t->st[t->depth - 1].ret == UINT64_MAX)
			t->intr++;
		break;
	default:
		break;
	}
}

static void far_return(struct rstate *s)
{
	struct thr *t = current(s);

	if (!t->intr)
		return;
	while (t->depth && t->st[t->depth - 1].ret != UINT64_MAX)
		cut_frame(s, t);
	if (t->depth)
		pop_complete(s, t);
}

/* A varint at *@at of @data (@len bytes), *@at moved past it; false: none whole there. */
static inline bool get_varint(const uint8_t *data, size_t len, size_t *at, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned sh = 0; sh < 7 * VARINT_MAX && *at < len; sh += 7) {
		uint8_t b = data[(*at)++];

		x |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

static __attribute__((noinline)) size_t rec_size_var(const uint8_t *data, size_t len,
						      size_t i)
{
	size_t n = 0;

	if (data[i] == T_CALLV || data[i] == T_CALLV0 || data[i] == T_RETTOP) {
		size_t at = i + 1;
		uint64_t v;

		if (!get_varint(data, len, &at, &v))
			return 0;
		if (data[i] != T_RETTOP &&
		    (len - at < sizeof(uint16_t) || (at += sizeof(uint16_t),
						     !get_varint(data, len, &at, &v))))
			return 0;
		return at - i;
	}
	if (data[i] == T_DEF && len - i >= 1 + sizeof(struct pdef)) {
		struct pdef d;

		memcpy(&d, data + i + 1, sizeof(d));
		n = 1 + sizeof(d) + d.len;
	} else if (data[i] == T_REC && len - i >= 1 + sizeof(struct prec)) {
		struct prec p;

		memcpy(&p, data + i + 1, sizeof(p));
		n = 1 + sizeof(p) + (size_t)p.len1 + p.len2 + p.len3 + p.len4;
	}
	return n <= len - i ? n : 0;
}

/* The size of the record at @i of @data (@len bytes); 0: none whole there. */
static inline __attribute__((always_inline)) size_t rec_size(const uint8_t *data, size_t len,
							     size_t i)
{
	static const uint8_t fixed[] = {
		[T_INSN] = 1, [T_FARRET] = 1, [T_RUN] = 5, [T_RUNFAR] = 5,
		[T_CALL] = 1 + sizeof(struct pcall), [T_RET] = 1 + sizeof(struct pret),
		[T_ADEF] = 1 + sizeof(struct padef), [T_TIME] = 1 + sizeof(struct ptime),
		[T_RETA] = 1 + sizeof(struct preta), [T_RETN] = 5 + sizeof(struct preta),
	};
	size_t n = data[i] < sizeof(fixed) ? fixed[data[i]] : 0;

	/* (T_RETTOP and T_CALLV with one-byte varints: most records) */
	if (data[i] == T_RETTOP && len - i >= 2 && data[i + 1] < 0x80)
		return 2;
	if (data[i] == T_CALLV && len - i >= 5 && data[i + 1] < 0x80 && data[i + 4] < 0x80)
		return 5;
	if (!n)
		return rec_size_var(data, len, i);
	return n <= len - i ? n : 0;
}

/*
 * What a call after a T_ADEF will touch, fetched ahead of it (on a trace of many functions
 * each is a miss): at PREFETCH_FAR records ahead, the T_ADEF's calls_seen slot; when the
 * cursor is PREFETCH_NEAR records from it, the row that slot holds. Only hints: a record's
 * handling looks everything up again.
 */
#define PREFETCH_FAR 16
#define PREFETCH_NEAR 6
#define PREFETCH_RING 16
#define PREFETCH_MIN 32		/* ahead while a record in 32 or more is a T_ADEF */

struct ahead {
	size_t at;			/* the cursor: the record after the last one seen */
	uint64_t n;			/* records seen */
	struct call_slot *slot[PREFETCH_RING];
	uint64_t seen[PREFETCH_RING];
	unsigned head, tail;
};

/* @data's T_ADEF at @at (whole), its calls_seen slot fetched and queued for its row. */
static void ahead_adef(struct rstate *s, struct ahead *h, const uint8_t *data, size_t at)
{
	struct padef d;
	struct fref e;

	memcpy(&d, data + at + 1, sizeof(d));
	if (d.name >= DEF_MAX || d.obj >= DEF_MAX || h->tail - h->head == PREFETCH_RING)
		return;
	e = (struct fref){ .how = how_of(d.how), .base = s->defs[d.name], .obj = s->defs[d.obj],
			   .off = d.off };
	h->slot[h->tail % PREFETCH_RING] = call_slot_of(s, s->cur->group, &e);
	h->seen[h->tail % PREFETCH_RING] = h->n;
	__builtin_prefetch(h->slot[h->tail % PREFETCH_RING]);
	__builtin_prefetch(h->slot[h->tail++ % PREFETCH_RING] + CALL_WAYS - 1);
}

/* The cursor one record on, not behind @i (main loop's record). */
static inline __attribute__((always_inline)) void ahead_step(struct rstate *s, struct ahead *h,
							     const uint8_t *data, size_t len,
							     size_t i)
{
	size_t n;

	if (h->at < i)
		h->at = i;
	if (h->head != h->tail && h->n - h->seen[h->head % PREFETCH_RING] >=
	    PREFETCH_FAR - PREFETCH_NEAR) {
		const struct call_slot *c = h->slot[h->head++ % PREFETCH_RING];

		/* (the set's every row: one is the T_ADEF's, where it is known) */
		for (int w = 0; w < CALL_WAYS; w++)
			if (c[w].used && c[w].func < s->nfuncs)
				__builtin_prefetch(&s->funcs[c[w].func]);
	}
	if (h->at >= len || !(n = rec_size(data, len, h->at)))
		return;
	if (data[h->at] == T_ADEF && s->cur)
		ahead_adef(s, h, data, h->at);
	h->at += n;
	h->n++;
}

/* A T_RETTOP after @k instructions: @t's top frame returns (or one past the depth bound). */
static inline void ret_top(struct rstate *s, struct thr *t, uint64_t k)
{
	if (k)
		account(s, k);
	if (t->over)
		t->over--;
	else
		pop_complete(s, t);
}

/*
 * A call of @func (a sym @name; @timed as push() has it, @ret its return address) that the
 * very next record, a T_RETTOP after @k instructions, closes: what push(), ret_top() and
 * pop_complete() do for it, without its frame (half the calls of a trace are leaves). No
 * time passes between: the duration is @k on the instruction clock, 0 on the trace's.
 * Only where push() makes a frame that the T_RETTOP pops (the caller checks: no frame
 * over the depth bound, none pending there, @ret not an interrupt's).
 */
static void leaf(struct rstate *s, struct thr *t, uint32_t func, uint32_t name, bool timed,
		 uint64_t k)
{
	struct frame *parent = t->depth ? &t->st[t->depth - 1] : NULL;
	uint32_t pnode = parent ? parent->node : t->root, node;
	uint64_t dur = s->clock_time ? 0 : k;
	struct func *fn;
	bool outer = true;

	count_callee(s, parent, func);
	node = pnode == NONE ? NONE : node_get(s, pnode, name);
	s->insns += k;
	t->insns += k;
	if (node != NONE)
		s->nodes[node].insns += k;
	if (parent && parent->ret != UINT64_MAX)
		parent->child_dur += dur;
	if (func == NONE)
		return;
	if (node != NONE)
		s->nodes[node].time += dur;
	fn = &s->funcs[func];
	if (fn->open && fn->open_thr == t) {
		outer = false;
	} else if (fn->open) {
		if (!fn->open_thr)
			for (uint32_t i = 0; i < t->depth; i++)
				if (t->st[i].func == func)
					outer = false;
		/* (push() forgets the one thread; the return does not bring it back) */
		fn->open_thr = NULL;
	}
	fn->insns_self += k;
	if (outer) {
		fn->insns_total += k;
		fn->time_total += dur;
	}
	fn->time_self += dur;
	dist_add(s, &fn->d, dur);
	if (s->rc->outliers) {
		struct frame f = { .start = now(s, t) - dur, .seq = s->calls, .timed = timed };

		outlier_add(s, fn, &f, t, dur);
	}
}

static void report_filter(struct dout *o, const uint8_t *data, size_t len)
{
	struct rstate *s = ((struct report_state *)o->state)->s;
	struct ahead h = { 0 };
	size_t i = 0, recs = 0, adefs = 0;
	bool on;

	if (!s)
		return;
	on = s->ahead_on;
	for (int k = 0; on && k < PREFETCH_FAR; k++)
		ahead_step(s, &h, data, len, 0);
	for (; i < len; recs++) {
		struct prec p;
		size_t run = i;

		if (on)
			ahead_step(s, &h, data, len, i);

		/*
		 * T_CALLV and T_RETTOP, the most of a trace's records: what the branch below
		 * does for them, without its struct prec; note_time() and the clock see each
		 * time T_TIME says once (they keep nothing else of it).
		 */
		if (data[i] == T_CALLV || data[i] == T_RETTOP) {
			size_t at = i + 1;
			uint64_t k, v;
			struct thr *t;

			if (at < len && data[at] < 0x80)
				k = data[at++];
			else if (!get_varint(data, len, &at, &k) || k > UINT32_MAX)
				break;
			if (data[i] == T_CALLV) {
				uint64_t ret;
				uint32_t n, func;
				struct aslot *a;
				uint16_t to;

				if (len - at < sizeof(to))
					break;
				memcpy(&to, data + at, sizeof(to));
				at += sizeof(to);
				if (at < len && data[at] < 0x80)
					v = data[at++];
				else if (!get_varint(data, len, &at, &v))
					break;
				if (to >= ADDR_SLOTS)
					break;
				s->ret_prev += (v >> 1) ^ -(v & 1);
				if (k)
					account(s, k);
				if (!s->a_noted)
					note_a_time(s);
				t = current(s);
				a = &s->aslots[to];
				if (a->group == t->group && t->group != NONE) {
					n = a->sym;
					func = a->func;
				} else {
					func = aslot_func(s, t->group, a, &n);
				}
				if (!s->clock_known) {
					s->clock_known = true;
					s->clock_time = s->a_has_time && !s->rc->clock_insns;
				}
				if (s->a_has_time && s->a_time > t->last_time)
					t->last_time = s->a_time;
				if (func != NONE)
					s->funcs[func].calls++;
				s->calls++;
				ret = s->ret_prev ? s->ret_prev : UINT64_MAX - 1;
				i = at;
				/* A T_RETTOP next that closes this call: a leaf (above). */
				if (i + 1 < len && data[i] == T_RETTOP && data[i + 1] < 0x80 &&
				    !t->over && t->depth < REPORT_DEPTH_MAX && ret != UINT64_MAX) {
					if (on)
						ahead_step(s, &h, data, len, i);
					recs++;
					leaf(s, t, func, n, s->a_has_time, data[i + 1]);
					i += 2;
					continue;
				}
				push(s, t, func, n, ret, s->a_has_time);
				/*
				 * A T_RETTOP next (a leaf call) at once: its time is this call's,
				 * its thread this one (what the T_RETTOP below does, less what
				 * this call did already).
				 */
				if (i < len && data[i] == T_RETTOP && (t->over || (t->depth &&
				    t->st[t->depth - 1].ret != UINT64_MAX))) {
					at = i + 1;
					if (at < len && data[at] < 0x80)
						k = data[at++];
					else if (!get_varint(data, len, &at, &k) || k > UINT32_MAX)
						continue;
					if (on)
						ahead_step(s, &h, data, len, i);
					recs++;
					ret_top(s, t, k);
					i = at;
				}
				continue;
			}
			/* (a return to no call the chunk saw: not what a chunk writes) */
			t = current(s);
			if (!t->over && (!t->depth || t->st[t->depth - 1].ret == UINT64_MAX))
				break;
			if (!s->a_noted)
				note_a_time(s);
			if (s->a_has_time && s->a_time > t->last_time)
				t->last_time = s->a_time;
			ret_top(s, t, k);
			i = at;
			continue;
		}
		while (run < len && data[run] == T_INSN)
			run++;
		if (run > i) {
			account(s, run - i);
			i = run;
			continue;
		}
		if (data[i] == T_FARRET) {
			account(s, 1);
			far_return(s);
			i++;
			continue;
		}
		if (data[i] == T_RUN || data[i] == T_RUNFAR) {
			uint32_t k;

			if (len - i < 1 + sizeof(k))
				break;
			memcpy(&k, data + i + 1, sizeof(k));
			account(s, k);
			if (data[i] == T_RUNFAR)
				far_return(s);
			i += 1 + sizeof(k);
			continue;
		}
		if (data[i] == T_DEF) {
			struct pdef d;

			if (len - i < 1 + sizeof(d))
				break;
			memcpy(&d, data + i + 1, sizeof(d));
			if (d.id >= DEF_MAX || len - i - 1 - sizeof(d) < d.len)
				break;
			s->defs[d.id] = intern_obj(s, (const char *)data + i + 1 + sizeof(d), d.len);
			i += 1 + sizeof(d) + d.len;
			continue;
		}
		if (data[i] == T_ADEF) {
			struct padef d;
			struct aslot *a;

			adefs++;
			if (len - i < 1 + sizeof(d))
				break;
			memcpy(&d, data + i + 1, sizeof(d));
			if (d.aid >= ADDR_SLOTS || d.name >= DEF_MAX || d.obj >= DEF_MAX)
				break;
			a = &s->aslots[d.aid];
			a->e = (struct fref){ .how = how_of(d.how), .base = s->defs[d.name],
					      .obj = s->defs[d.obj], .off = d.off };
			a->group = NONE;
			i += 1 + sizeof(d);
			continue;
		}
		if (data[i] == T_TIME) {
			struct ptime t;

			if (len - i < 1 + sizeof(t))
				break;
			memcpy(&t, data + i + 1, sizeof(t));
			s->a_has_time = t.has_time;
			s->a_time = t.time;
			s->a_noted = false;
			i += 1 + sizeof(t);
			continue;
		}
		/*
		 * T_CALLV0, T_RETA (and T_RETN: a run before it): as T_CALL and T_RET (below)
		 * with the functions at the slots, the time T_TIME said (T_CALLV and T_RETTOP
		 * went above).
		 */
		if (data[i] == T_CALLV0 || data[i] == T_RETA || data[i] == T_RETN) {
			uint8_t tag = data[i];
			bool call = tag == T_CALLV0;
			size_t at = i + 1;
			uint16_t from = 0, to = 0;
			uint64_t addr = 0, k = 0;

			if (call) {
				if (!get_varint(data, len, &at, &k) || k > UINT32_MAX ||
				    len - at < sizeof(to))
					break;
				memcpy(&to, data + at, sizeof(to));
				at += sizeof(to);
				if (!get_varint(data, len, &at, &addr))
					break;
			} else {
				struct preta x;

				if (tag == T_RETN) {
					uint32_t n;

					if (len - at < sizeof(n))
						break;
					memcpy(&n, data + at, sizeof(n));
					at += sizeof(n);
					k = n;
				}
				if (len - at < sizeof(x))
					break;
				memcpy(&x, data + at, sizeof(x));
				at += sizeof(x);
				from = x.from;
				to = x.to;
				addr = x.b;
			}
			if (from >= ADDR_SLOTS || to >= ADDR_SLOTS)
				break;
			if (call)
				s->ret_prev = addr;
			if (k)
				account(s, k);
			memset(&p, 0, sizeof(p));
			p.kind = call ? P_CALL : P_RET;
			p.has_time = s->a_has_time;
			p.time = s->a_time;
			if (call)
				p.a = addr;
			else
				p.b = addr;
			note_time(s, &p);
			/* (a call sets it too, in on_call_row(), to what this sets) */
			if (!s->clock_known && p.has_time && !s->rc->clock_insns) {
				s->clock_known = true;
				s->clock_time = true;
			}
			if (call)
				on_call(s, &p, NULL, &s->aslots[to]);
			else if (!on_ret_match(s, &p))
				on_ret_unmatched(s, NULL, NULL, &s->aslots[from], &s->aslots[to]);
			i = at;
			continue;
		}
		if (data[i] == T_CALL) {
			struct pcall c;

			if (len - i < 1 + sizeof(c))
				break;
			memcpy(&c, data + i + 1, sizeof(c));
			if (c.name >= DEF_MAX || c.obj >= DEF_MAX)
				break;
			memset(&p, 0, sizeof(p));
			p.kind = P_CALL;
			p.has_time = c.has_time;
			p.time = c.time;
			p.a = c.a;
			note_time(s, &p);
			{
				struct fref e = { .how = how_of(c.how), .base = s->defs[c.name],
						  .obj = s->defs[c.obj], .off = c.off };

				on_call(s, &p, &e, NULL);
			}
			i += 1 + sizeof(c);
			continue;
		}
		if (data[i] == T_RET) {
			struct pret x;

			if (len - i < 1 + sizeof(x))
				break;
			memcpy(&x, data + i + 1, sizeof(x));
			if (x.from >= DEF_MAX || x.to >= DEF_MAX || x.from_obj >= DEF_MAX ||
			    x.to_obj >= DEF_MAX)
				break;
			memset(&p, 0, sizeof(p));
			p.kind = P_RET;
			if (!s->clock_known && x.has_time && !s->rc->clock_insns) {
				s->clock_known = true;
				s->clock_time = true;
			}
			p.has_time = x.has_time;
			p.time = x.time;
			p.b = x.b;
			note_time(s, &p);
			if (!on_ret_match(s, &p)) {
				struct fref from = { .how = how_of(x.how & 3), .base = s->defs[x.from],
						     .obj = s->defs[x.from_obj], .off = x.from_off };
				struct fref to = { .how = how_of(x.how >> 2), .base = s->defs[x.to],
						   .obj = s->defs[x.to_obj], .off = x.to_off };

				on_ret_unmatched(s, &from, &to, NULL, NULL);
			}
			i += 1 + sizeof(x);
			continue;
		}
		if (data[i] != T_REC || len - i < 1 + sizeof(p))
			break;
		memcpy(&p, data + i + 1, sizeof(p));
		if (len - i - 1 - sizeof(p) < (size_t)p.len1 + p.len2 + p.len3 + p.len4)
			break;
		{
			char s1[NAME_LEN + 1], s2[NAME_LEN + 1], s3[NAME_LEN + 1], s4[NAME_LEN + 1];
			const char *d = (const char *)data + i + 1 + sizeof(p);

			if (p.len1 > NAME_LEN || p.len2 > NAME_LEN || p.len3 > NAME_LEN ||
			    p.len4 > NAME_LEN)
				break;
			memcpy(s1, d, p.len1);
			s1[p.len1] = '\0';
			memcpy(s2, d + p.len1, p.len2);
			s2[p.len2] = '\0';
			memcpy(s3, d + p.len1 + p.len2, p.len3);
			s3[p.len3] = '\0';
			memcpy(s4, d + p.len1 + p.len2 + p.len3, p.len4);
			s4[p.len4] = '\0';
			on_rec(s, &p, s1, s2, s3, s4);
		}
		i += 1 + sizeof(p) + p.len1 + p.len2 + p.len3 + p.len4;
	}
	/* The next buffer looks ahead where this one's T_ADEFs were worth it. */
	s->ahead_on = adefs * PREFETCH_MIN >= recs;
}

/* ---- output ---- */

static void outf(struct dout *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* outf()'s longest line: what is past it is cut */
#define OUTF_MAX 8192

static void outf(struct dout *o, const char *fmt, ...)
{
	char buf[OUTF_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		dout_write(o, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* @v in decimal, right-aligned in @w columns (printf's %*PRIu64, by hand): past its end. */
static char *put_dec(char *p, uint64_t v, int w)
{
	char d[20], *q = d + sizeof(d);
	int len;

	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	len = (int)(d + sizeof(d) - q);
	for (; w > len; w--)
		*p++ = ' ';
	memcpy(p, q, (size_t)len);
	return p + len;
}

/* @n bytes of @t, then blanks up to @w columns (printf's %-*s): past its end. */
static char *put_left(char *p, const char *t, size_t n, size_t w)
{
	memcpy(p, t, n);
	p += n;
	for (; w > n; w--)
		*p++ = ' ';
	return p;
}

static const unsigned quant[] = { 500, 900, 990 };

/* A row to show, with what sorts it (cmp_rows() reads no struct func where these decide). */
struct row {
	uint32_t func, group;
	uint64_t key, insns_self;
	uint64_t name;			/* name_key() */
	uint64_t q[3];
};

static const struct rstate *sort_state;
static size_t sort_lcp;			/* the prefix all the rows' names share */

/*
 * The 8 bytes of @name past the prefix all share, big-endian, NUL-padded: where two differ
 * they order the names as strcmp() would (and as it, byte by byte unsigned); where they are
 * equal, strcmp() tells, unless both names ended within them (then they are equal).
 */
static uint64_t name_key(const char *name, size_t lcp)
{
	uint64_t k = 0;
	size_t i = 0;

	for (name += lcp; i < 8 && name[i]; i++)
		k |= (uint64_t)(uint8_t)name[i] << (56 - 8 * i);
	return k;
}

static uint64_t sort_key(const struct rstate *s, const struct row *r)
{
	const struct func *f = &s->funcs[r->func];

	switch (s->rc->sort) {
	case REPORT_SORT_CALLS: return f->calls;
	case REPORT_SORT_SELF: return f->time_self;
	case REPORT_SORT_P99: return r->q[2];
	case REPORT_SORT_MAX: return f->d.n ? f->d.max : 0;
	case REPORT_SORT_INSNS: return f->insns_self;
	default: return f->time_total;
	}
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	const struct func *fx, *fy;
	int c;

	if (x->group != y->group)
		return strcmp(sort_state->str[x->group], sort_state->str[y->group]);
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	if (x->insns_self != y->insns_self)
		return x->insns_self > y->insns_self ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	fx = &sort_state->funcs[x->func];
	fy = &sort_state->funcs[y->func];
	/* (names that ended within their keys are equal: strcmp() says so at once) */
	c = strcmp(sym_text(sort_state, fx->name) + sort_lcp,
		   sym_text(sort_state, fy->name) + sort_lcp);
	return c ? c : strcmp(obj_text(sort_state, fx->name), obj_text(sort_state, fy->name));
}

static int cmp_out(const void *a, const void *b)
{
	const struct outlier *x = a, *y = b;

	return out_before(x, y) ? -1 : out_before(y, x);
}

static json_t *u64s(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	return json_string(b);
}

static void emit_json(struct dout *o, json_t *j)
{
	char *t = json_dumps(j, JSON_INDENT(1));

	json_decref(j);
	if (t) {
		dout_write(o, t, strlen(t));
		dout_write(o, "\n", 1);
		free(t);
	}
}

/* The called column's bytes at most, with its NUL (the char[2048] it was printed into) */
#define CALLED_MAX 2048

/*
 * What an outlier called, into @buf (@n bytes): "f x2, g x1, 3 more", "-" for nothing; cut
 * to @n - 1 bytes where longer (what snprintf() into @buf made). Returns its length.
 */
static size_t called_text(const struct rstate *s, const struct outlier *x, char *buf, size_t n)
{
	char full[CALLEES * (4 * 128 + 16) + 32], *e = full;
	size_t len;

	for (int i = 0; i < CALLEES && x->ncalls[i]; i++) {
		if (i)
			e = put_left(e, ", ", 2, 2);
		e += printable_to(e, 4 * 128 + 1, sym_text(s, s->funcs[x->callee[i]].name));
		e = put_left(e, " x", 2, 2);
		e = put_dec(e, x->ncalls[i], 0);
	}
	if (x->more) {
		e = put_left(e, ", ", 2, 2);
		e = put_dec(e, x->more, 0);
		e = put_left(e, " more", 5, 5);
	}
	len = (size_t)(e - full) < n ? (size_t)(e - full) : n - 1;
	if (!len)
		return (size_t)(stpcpy(buf, "-") - buf);
	memcpy(buf, full, len);
	buf[len] = '\0';
	return len;
}

/*
 * Whether an outlier's start means anything: in instructions always; in time when its call
 * had a time and the trace's time moves (one timestamp, such as the TSC placeholder of an
 * unstamped played stream, times no call).
 */
static bool start_known(const struct rstate *s, const struct outlier *x)
{
	return !s->clock_time || (x->timed && s->time_moves);
}

static json_t *outliers_json(const struct rstate *s, struct func *f)
{
	json_t *a = json_array();

	for (uint32_t k = 0; k < f->nout; k++) {
		const struct outlier *x = &f->out[k];
		json_t *o = json_object(), *c = json_array();

		json_object_set_new(o, "duration", u64s(x->dur));
		json_object_set_new(o, "start", start_known(s, x) ? u64s(x->start) : json_null());
		json_object_set_new(o, "pid", json_integer(x->pid));
		json_object_set_new(o, "tid", json_integer(x->tid));
		for (int i = 0; i < CALLEES && x->ncalls[i]; i++) {
			json_t *e = json_object();

			json_object_set_new(e, "function",
					    utf8_json_string(sym_text(s, s->funcs[x->callee[i]].name)));
			json_object_set_new(e, "object",
					    utf8_json_string(obj_text(s, s->funcs[x->callee[i]].name)));
			json_object_set_new(e, "calls", json_integer(x->ncalls[i]));
			json_array_append_new(c, e);
		}
		json_object_set_new(o, "called", c);
		json_object_set_new(o, "called_other", json_integer(x->more));
		json_array_append_new(a, o);
	}
	return a;
}

static void functions(struct dout *o, struct rstate *s)
{
	const struct report_config *rc = s->rc;
	const char *unit = s->clock_time ? "ns" : "insns";
	struct row *rows = calloc(s->nfuncs + 1, sizeof(*rows));
	json_t *doc = NULL, *groups = NULL, *g = NULL, *list = NULL;
	uint32_t n = 0, shown = 0, group = NONE, obj_id = 0;
	/* a row's text: eleven numbers, the object and the function */
	char name[4 * NAME_LEN + 1], obj[4 * NAME_LEN + 1], line[11 * 21 + 2 * 4 * NAME_LEN + 16];
	size_t olen = 0;
	bool exact = true, obj_known = false;

	if (!rows) {
		s->oom = true;
		return;
	}
	for (uint32_t i = 0; i < s->nfuncs; i++) {
		struct func *f = &s->funcs[i];

		if (rc->function && fnmatch(rc->function, sym_text(s, f->name), 0))
			continue;
		if (!f->calls && !f->insns_self && !f->incomplete)
			continue;
		rows[n].func = i;
		rows[n].group = f->group;
		rows[n].insns_self = f->insns_self;
		dist_quantiles(&f->d, quant, rows[n].q, 3);
		rows[n].key = sort_key(s, &rows[n]);
		exact = exact && !f->d.hist;
		n++;
	}
	sort_state = s;
	sort_lcp = n ? strlen(sym_text(s, s->funcs[rows[0].func].name)) : 0;
	for (uint32_t k = 1; k < n && sort_lcp; k++) {
		const char *a = sym_text(s, s->funcs[rows[0].func].name);
		const char *b = sym_text(s, s->funcs[rows[k].func].name);
		size_t i = 0;

		while (i < sort_lcp && a[i] == b[i])
			i++;
		sort_lcp = i;
	}
	for (uint32_t k = 0; k < n; k++)
		rows[k].name = name_key(sym_text(s, s->funcs[rows[k].func].name), sort_lcp);
	qsort(rows, n, sizeof(*rows), cmp_rows);
	if (rc->json) {
		doc = json_object();
		json_object_set_new(doc, "clock", json_string(s->clock_time ? "time" :
							       "instructions"));
		json_object_set_new(doc, "unit", json_string(unit));
		json_object_set_new(doc, "quantiles", json_string(exact ? "exact" : "histogram"));
		json_object_set_new(doc, "exact_max", json_integer(REPORT_EXACT_MAX));
		json_object_set_new(doc, "instructions", u64s(s->insns));
		json_object_set_new(doc, "calls", u64s(s->calls));
		groups = json_array();
		json_object_set_new(doc, "groups", groups);
	} else {
		outf(o, "# %" PRIu64 " instructions, %" PRIu64 " calls; durations in %s%s\n",
		     s->insns, s->calls, unit, !s->clock_time ? (s->rc->clock_insns ?
		     " (--clock insns)" : " (the trace has no timing: instructions stand in for time)") :
		     s->time_moves ? " of perf time" : " of perf time (the trace's time never moves: "
		     "every duration is 0 and no start is known; --clock insns tells calls apart)");
		outf(o, "# quantiles %s (exact up to %u calls per function, then within 3.2%%); "
		     "incomplete calls (cut by a trace gap) enter no duration\n",
		     exact ? "exact" : "from a histogram for some", REPORT_EXACT_MAX);
		if (s->funcs_full)
			outf(o, "# more than %u functions: the rest are [other]\n", REPORT_FUNCS_MAX);
	}
	for (uint32_t k = 0; k < n; k++) {
		struct func *f = &s->funcs[rows[k].func];
		uint64_t mn, mx;
		size_t nlen;
		char *e;

		/* the rows are read in their sorted order: a miss each on many functions */
		if (k + 8 < n) {
			__builtin_prefetch(&s->funcs[rows[k + 8].func]);
			__builtin_prefetch((const char *)&s->funcs[rows[k + 8].func] + 64);
		}
		if (rows[k].group != group) {
			group = rows[k].group;
			shown = 0;
			if (rc->json) {
				g = json_object();
				json_object_set_new(g, "group", utf8_json_string(s->str[group]));
				list = json_array();
				json_object_set_new(g, "functions", list);
				json_array_append_new(groups, g);
			} else {
				if (s->str[group][0]) {
					printable_to(name, sizeof(name), s->str[group]);
					outf(o, "\n[%s]\n", name);
				}
				outf(o, "%10s %10s %12s %12s %12s %12s %10s %10s %10s %10s %10s  "
				     "%-16s  %s\n", "calls", "incomplete", "self-insns",
				     "total-insns", "self", "total", "min", "p50", "p90", "p99", "max",
				     "object", "function");
			}
		}
		if (rc->top && shown >= rc->top)
			continue;
		shown++;
		mn = f->d.n ? f->d.min : 0;
		mx = f->d.n ? f->d.max : 0;
		if (rc->json) {
			json_t *j = json_object();

			json_object_set_new(j, "function", utf8_json_string(sym_text(s, f->name)));
			json_object_set_new(j, "object", utf8_json_string(obj_text(s, f->name)));
			json_object_set_new(j, "calls", u64s(f->calls));
			json_object_set_new(j, "incomplete", u64s(f->incomplete));
			json_object_set_new(j, "insns_self", u64s(f->insns_self));
			json_object_set_new(j, "insns_total", u64s(f->insns_total));
			json_object_set_new(j, "self", u64s(f->time_self));
			json_object_set_new(j, "total", u64s(f->time_total));
			json_object_set_new(j, "min", u64s(mn));
			json_object_set_new(j, "p50", u64s(rows[k].q[0]));
			json_object_set_new(j, "p90", u64s(rows[k].q[1]));
			json_object_set_new(j, "p99", u64s(rows[k].q[2]));
			json_object_set_new(j, "max", u64s(mx));
			json_object_set_new(j, "exact", json_boolean(!f->d.hist));
			if (rc->outliers) {
				if (f->nout)
					qsort(f->out, f->nout, sizeof(*f->out), cmp_out);
				json_object_set_new(j, "outliers", outliers_json(s, f));
			}
			json_array_append_new(list, j);
			continue;
		}
		/* outf()'s line, by hand (the same bytes, cut where its buffer cuts it) */
		nlen = printable_to(name, sizeof(name), sym_text(s, f->name));
		if (!obj_known || s->sym_obj[f->name] != obj_id) {
			obj_known = true;
			obj_id = s->sym_obj[f->name];
			olen = printable_to(obj, sizeof(obj), obj_text(s, f->name));
			if (!olen)
				olen = (size_t)(stpcpy(obj, "-") - obj);
		}
		e = line;
		e = put_dec(e, f->calls, 10);
		*e++ = ' ';
		e = put_dec(e, f->incomplete, 10);
		*e++ = ' ';
		e = put_dec(e, f->insns_self, 12);
		*e++ = ' ';
		e = put_dec(e, f->insns_total, 12);
		*e++ = ' ';
		e = put_dec(e, f->time_self, 12);
		*e++ = ' ';
		e = put_dec(e, f->time_total, 12);
		*e++ = ' ';
		e = put_dec(e, mn, 10);
		for (int i = 0; i < 3; i++) {
			*e++ = ' ';
			e = put_dec(e, rows[k].q[i], 10);
		}
		*e++ = ' ';
		e = put_dec(e, mx, 10);
		e = put_left(e, "  ", 2, 2);
		e = put_left(e, obj, olen, 16);
		e = put_left(e, "  ", 2, 2);
		e = put_left(e, name, nlen, 0);
		if (f->d.hist)
			e = put_left(e, " ~", 2, 2);
		*e++ = '\n';
		dout_write(o, line, (size_t)(e - line) < OUTF_MAX ? (size_t)(e - line) :
			   OUTF_MAX - 1);
	}
	if (rc->json) {
		emit_json(o, doc);
	} else if (rc->outliers) {
		char head[128], *e;
		size_t hlen;

		hlen = (size_t)snprintf(head, sizeof(head), "%12s %20s %16s  %s\n", "duration",
					s->clock_time ? "start (ns)" : "start (insn)", "pid/tid",
					"called");
		group = NONE;
		for (uint32_t k = 0, shown2 = 0; k < n; k++) {
			struct func *f = &s->funcs[rows[k].func];

			if (k + 8 < n)
				__builtin_prefetch(&s->funcs[rows[k + 8].func]);
			if (rows[k].group != group) {
				group = rows[k].group;
				shown2 = 0;
			}
			if ((rc->top && shown2++ >= rc->top) || !f->nout)
				continue;
			if (f->nout)
				qsort(f->out, f->nout, sizeof(*f->out), cmp_out);
			e = put_left(line, "\nslowest calls of ", 18, 18);
			e = put_left(e, name, printable_to(name, sizeof(name), sym_text(s, f->name)), 0);
			e = put_left(e, ":\n", 2, 2);
			e = put_left(e, head, hlen, 0);
			dout_write(o, line, (size_t)(e - line) < OUTF_MAX ? (size_t)(e - line) :
				   OUTF_MAX - 1);
			for (uint32_t i = 0; i < f->nout; i++) {
				const struct outlier *x = &f->out[i];
				char thr[24], *t = thr;
				size_t clen;

				t = put_dec(t, x->pid, 0);
				*t++ = '/';
				t = put_dec(t, x->tid, 0);
				e = put_dec(line, x->dur, 12);
				*e++ = ' ';
				if (start_known(s, x))
					e = put_dec(e, x->start, 20);
				else
					e = put_left(put_left(e, "", 0, 19), "-", 1, 1);
				*e++ = ' ';
				e = put_left(put_left(e, "", 0, t - thr < 16 ? 16 - (size_t)(t - thr) :
						      0), thr, (size_t)(t - thr), 0);
				e = put_left(e, "  ", 2, 2);
				clen = called_text(s, x, e, CALLED_MAX);
				e += clen;
				*e++ = '\n';
				dout_write(o, line, (size_t)(e - line));
			}
		}
	}
	free(rows);
}

/* Names in a folded stack: printable, and no ';' (the separator). */
static void folded_name(char *buf, size_t n, const char *s)
{
	printable_to(buf, n, s);
	for (char *p = buf; *p; p++)
		if (*p == ';')
			*p = ':';
}

static void folded(struct dout *o, struct rstate *s)
{
	uint32_t path[REPORT_DEPTH_MAX + 2];
	char name[4 * NAME_LEN + 1];

	for (uint32_t i = 0; i < s->nnodes; i++) {
		uint64_t w = s->rc->weight_insns ? s->nodes[i].insns : s->nodes[i].time;
		uint32_t d = 0;

		if (!w)
			continue;
		for (uint32_t k = i; k != NONE && d < REPORT_DEPTH_MAX + 2; k = s->nodes[k].parent)
			path[d++] = k;
		while (d--) {
			uint32_t y = s->nodes[path[d]].name;

			/* object`function, as DTrace's stacks and stackcollapse spell it */
			if (s->sym_obj[y] != NONE) {
				folded_name(name, sizeof(name), obj_text(s, y));
				dout_write(o, name, strlen(name));
				dout_write(o, "`", 1);
			}
			folded_name(name, sizeof(name), sym_text(s, y));
			dout_write(o, name, strlen(name));
			dout_write(o, d ? ";" : " ", 1);
		}
		outf(o, "%" PRIu64 "\n", w);
	}
}

static void begin(struct dout *o, const struct decode_config *cfg)
{
	struct report_state *rs = o->state;
	struct rstate *s = calloc(1, sizeof(*s));

	rs->s = s;
	if (!s)
		return;
	s->rc = cfg->report;
	s->nr_streams = cfg->nr_streams;
	s->nodes_on = s->rc->view == REPORT_FOLDED;
	for (size_t i = 0; i < ADDR_SLOTS; i++)
		s->aslots[i].group = NONE;
	s->ahead_on = true;
	s->unknown = sym_str(s, "[unknown]");
	s->stream_name = intern_str(s, "");
}

static void free_state(struct rstate *s)
{
	streams_end(s);
	for (uint32_t i = 0; i < s->nfuncs; i++) {
		free(s->funcs[i].d.exact);
		free(s->funcs[i].d.hist);
		free(s->funcs[i].out);
	}
	for (uint32_t i = 0; i < s->nstr; i++)
		free(s->str[i]);
	free(s->str);
	free(s->strnext);
	free(s->sym_name);
	free(s->sym_obj);
	map_free(&s->symmap);
	free(s->funcs);
	free(s->nodes);
	map_free(&s->strmap);
	map_free(&s->funcmap);
	map_free(&s->nodemap);
	map_free(&s->offmap);
	free(s);
}

static void finish(struct dout *o)
{
	struct report_state *rs = o->state;
	struct rstate *s = rs->s;

	if (!s)
		return;
	streams_end(s);
	if (s->rc->view == REPORT_FOLDED)
		folded(o, s);
	else
		functions(o, s);
	if (s->oom)
		o->err = o->err ? o->err : -12;
	free_state(s);
	rs->s = NULL;
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
	.filter = report_filter,
	.state_size = sizeof(struct report_state),
	.begin = begin,
	.finish = finish,
};
