// SPDX-License-Identifier: MIT
/*
 * One chunk of a stream through libipt's instruction-flow decoder, as ptxed
 * decodes: events, instructions, errors at their offset and a resync at the
 * next PSB. What it finds goes to the run's renderers (render.h) as records.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "decode_chunk.h"
#include "decode_rec.h"
#include "decode_sb.h"
#include "disasm.h"
#include "fastflow.h"
#include "fileio.h"
#include "insnblk.h"
#include "memimage.h"
#include "iptcaps.h"
#include "render.h"

/* A sink lets go of its bytes past this (the output goes on while decoding does). */
#define FLUSH_AT (256u << 10)
/* Instructions between progress updates. */
#define PROGRESS_EVERY 65536
/* Instructions between checks that the decoder still reads trace. */
#define STALL_CHECK 4096
/*
 * Instructions without reading any trace: only a jump to itself (or a cycle of direct
 * jumps) runs this long without a branch to report, and it would run for ever.
 */
#define STALL_LIMIT (1u << 22)
/*
 * Instructions the block path keeps (size, bytes, class): 2^SHAPE_BITS, 40 bytes each
 * (1.25 MiB): the bench's walk ends 20,000 blocks, and 8192 slots sent half of them back
 * to capstone.
 */
#define SHAPE_BITS 15
/*
 * Symbols of call and return addresses kept: 2^NAMES_BITS of 128 bytes (4 MiB, touched as
 * used; the bench's walk names 25,000 addresses: 8192 slots cost its --calls some 13 %,
 * 16,384 slots still missed a lookup in four, each resolved and spelled again).
 */
#define NAMES_BITS 15
/*
 * A fast segment's calls and returns waiting while their names' cache entries are read in
 * (the walk's 25,000 addresses do not stay in the cache): a record's lookup waits for memory
 * in parallel with the next ones' instead of alone.
 */
#define FAST_AHEAD 16
/* Trace bytes behind the decoder kept mapped (libipt never reads back further). */
#define KEEP_BEHIND (256u << 10)

/* Where a chunk stood when it met the next chunk's first instruction. */
struct mark {
	bool valid;
	uint64_t out, tl;	/* sink positions */
	uint64_t offset;	/* trace offset */
	size_t ndiag;
	struct decode_stats stats;
	enum pt_exec_mode mode;	/* the block path's, there (run_fast()) */
};

/* What is kept of the last instruction: a whole pt_insn is slow to copy at every one. */
struct last {
	uint64_t ip;
	int isid;
	enum pt_insn_class iclass;
	uint8_t size;		/* 0: not known (the block path, where nothing needs it) */
	uint8_t mode;		/* enum pt_exec_mode */
	uint8_t b[4];		/* its first bytes: which far transfer it is */
	bool have_time;		/* the time libipt gave it (its last event's, ptxed --time) */
	uint64_t tsc;
};

struct shapes;

/*
 * What an address of a section is, kept by name_of(): its symbol and object, and the
 * name spelled (a longer one is spelled each time).
 */
struct symname {
	uint64_t ip;
	int isid;		/* 0: empty */
	uint32_t pid;
	uint8_t named;		/* name spelled: SYM_NAMED, | SYM_PLAIN: as printable.h prints it;
				 * SYM_RECENT: the way of its set used last */
	uint8_t len;
	/*
	 * A name of up to 45 bytes lies in the entry's first cache line with its key (the
	 * table is 64-byte aligned): a hit reads one line; @sym, in the second, only a
	 * longer one's spelling.
	 */
	char name[78];
	struct image_sym sym;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct symname) == 128, "two cache lines an entry");

#define SYM_NAMED 1
#define SYM_PLAIN 2
#define SYM_RECENT 4

struct dec {
	struct decode_chunk *c;
	const struct decode_config *cfg;
	struct pt_insn_decoder *d;	/* the instruction decoder (--insn), */
	struct pt_block_decoder *bd;	/* or the block decoder (the other modes) */
	struct shapes *shapes;		/* the block path's instruction cache */
	struct fastflow *ff;		/* the fast flow path, where it may run (fastflow.h) */
	struct rrec brec;		/* branch()'s record: zero but for what it sets */
	enum pt_exec_mode blk_mode;	/* the last block's */
	/* run_fast(): what may be taken back is not let go of (sink positions). */
	bool hold;
	uint64_t hold_out, hold_tl;
	struct symname *names;		/* name_of()'s, 2^NAMES_BITS, in names_mem */
	void *names_mem;
	uint32_t names_used;		/* its entries filled */
	csh cs[3];			/* capstone for it, by mode (16, 32, 64), opened on need */
	uint64_t flow_ip;		/* the last instruction's IP in this flow (errors) */
	struct image_store *img;
	struct decode_keep *keep;	/* the thread's: img and the caches lent to this chunk */
	uint64_t ff_built;		/* fastflow_built() when the chunk took ff */
	struct insnblk *iblk;		/* --insn on the fast path: blocks' lines (fast_insn()) */
	struct insnblk_shared *lines;	/* the run's, looked in first (NULL: none) */
	uint64_t iblk_epoch;		/* fastflow_epoch() when iblk was last emptied */
	struct dsb *sb;
	struct disasm *dis;
	/* The last instruction, until its successor says where it went. */
	struct last prev;
	bool have_prev;
	/* The thread the sideband says runs. */
	bool thread_known;
	uint32_t pid, tid;
	/* The last time the decoder had. */
	bool have_time;
	uint64_t tsc;
	/* ptxed's --offset and --time: where the decoder was before the instruction or event, */
	uint64_t at;
	/* and the time of the last event. */
	uint64_t event_tsc;
	struct mark mark;
	/* A fast segment's branches not handed on yet: their names are being read (fast_branch()). */
	uint8_t *seam;		/* fast_segment()'s view of the chunk's last segment */
	struct fast_ahead {
		uint64_t from, to;
		const char *kind;
		int from_isid, to_isid;
		uint64_t ninsn, next;	/* fastflow_branch_fn's */
	} ahead[FAST_AHEAD];
	unsigned ahead_at, ahead_n;
	uint64_t ff_told;	/* the segment's instructions given with its branches so far */
	bool ff_flow;		/* calls and returns to run_rend->ops->flow() (fast_flow()) */
	bool ff_calls;		/* and fastflow gives only those (fastflow_set_calls_only()) */
	struct rrec frec;	/* fast_flow()'s record: zero but for what it sets */
	uint64_t frec_tsc;	/* the TSC whose time frec.time is */
	uint64_t progress_off;
	unsigned progress_count;
	uint64_t dropped;	/* trace bytes whose pages were dropped */
	/* next_psb(): the file holds data (no hole) from data_lo up to data_hi. */
	uint64_t data_lo, data_hi;
	unsigned since_check;
	uint64_t stall_off, stall_insns;
	/* The renderers (the mode's, the timeline's), what they want of the decoder. */
	struct render rend[2];
	size_t nr_rend;
	struct render *insn_rend;	/* the one that wants instructions (only one can) */
	struct render *run_rend;	/* the one that counts them in runs (insns()) */
	uint64_t run_n;			/* its instructions not handed over, up to x->prev */
	unsigned wants;		/* RREC_BIT()s */
	unsigned flags;		/* RENDER_* */
	/* What the next asynchronous branch is (Event Trace says it before): perf's word. */
	const char *async_kind;
	enum drec_how async_how;
	/* An asynchronous disable opened a timeline frame that the next enable closes. */
	bool off_open;
	/*
	 * The frame an asynchronous branch opens, until the next instruction names the
	 * section of its target (the first instruction of the handler).
	 */
	struct {
		bool valid;
		enum drec_how how;
		uint64_t from, to;
		int from_isid;
	} pend;
};

static uint64_t offset_now(const struct dec *x)
{
	uint64_t off = 0;

	if (x->bd)
		pt_blk_get_offset(x->bd, &off);
	else
		pt_insn_get_offset(x->d, &off);
	return off;
}

/* The trace offset as the user counts it: in the .pt file. */
static uint64_t file_offset(const struct dec *x, uint64_t off)
{
	return x->cfg->streams[x->c->stream].from + x->c->begin + off;
}

/* perf time in ns of a TSC, by the conversion the run has (decode_config.h). */
static uint64_t tsc_time(const struct decode_config *cfg, uint64_t tsc)
{
	if (cfg->have_conv)
		return dsb_tsc_to_time(&cfg->conv, tsc);
	if (cfg->nom_freq)
		return tsc * 10 / cfg->nom_freq;
	return tsc;
}

static void add_diag(struct dec *x, enum decode_diag_kind kind, const char *where,
		     uint64_t offset, bool has_ip, uint64_t ip, const char *msg)
{
	struct decode_chunk *c = x->c;
	struct decode_diag *d;

	if (c->nr_diags == CHUNK_DIAG_MAX) {
		c->more_diags++;
		return;
	}
	if (!c->diags) {
		c->diags = calloc(CHUNK_DIAG_MAX, sizeof(*c->diags));
		if (!c->diags) {
			c->more_diags++;
			return;
		}
	}
	d = &c->diags[c->nr_diags++];
	d->kind = kind;
	d->where = where;
	d->offset = offset;
	d->has_ip = has_ip;
	d->ip = ip;
	snprintf(d->msg, sizeof(d->msg), "%s", msg);
}

/* ---- records ---- */

static bool wants(const struct dec *x, enum rrec_kind k)
{
	return x->wants & RREC_BIT(k);
}

static unsigned last_size(struct dec *x, const struct last *l);

/*
 * The instructions counted up to the last (x->prev) to the renderer of runs; @need_next:
 * with the address after the last (a call's return address, where tracing resumes after
 * a disable), read from its section where the block decoder did not say its size.
 */
static void run_flush(struct dec *x, bool need_next)
{
	const struct last *l = &x->prev;
	uint64_t next = l->size ? l->ip + l->size : 0;

	if (!next && need_next && x->shapes) {
		unsigned size = last_size(x, l);

		next = size ? l->ip + size : 0;
	}
	x->run_rend->ops->insns(x->run_rend, x->run_n, l->ip, next,
				l->iclass == ptic_far_return);
	x->run_n = 0;
}

/* @n more instructions, the last x->prev: a far return ends a run (it ends an interrupt). */
static inline void run_add(struct dec *x, unsigned n)
{
	if (!x->run_rend)
		return;
	x->run_n += n;
	if (x->prev.iclass == ptic_far_return)
		run_flush(x, true);
}

static void emit(struct dec *x, const struct rrec *rec)
{
	/* The instructions before a record come before it. */
	if (x->run_n)
		run_flush(x, rec->kind == RREC_CALL || rec->kind == RREC_EVENT);
	for (size_t i = 0; i < x->nr_rend; i++)
		if (x->rend[i].ops->wants & RREC_BIT(rec->kind))
			x->rend[i].ops->put(&x->rend[i], rec);
}

/* A record of @kind with the thread and time the decoder has. */
static void rec_init(const struct dec *x, struct rrec *r, enum rrec_kind kind)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->pid = x->pid;
	r->tid = x->tid;
	if (x->have_time) {
		r->has_time = true;
		r->time = tsc_time(x->cfg, x->tsc);
	}
}

static void maybe_flush(struct dec *x)
{
	struct decode_chunk *c = x->c;
	uint64_t out = x->mark.valid ? x->mark.out : dsink_pos(&c->out);
	uint64_t tl = x->mark.valid ? x->mark.tl : dsink_pos(&c->tl);

	if (x->hold) {
		out = out < x->hold_out ? out : x->hold_out;
		tl = tl < x->hold_tl ? tl : x->hold_tl;
	}
	if (c->out.len > FLUSH_AT)
		dsink_flush(&c->out, out);
	if (c->tl.len > FLUSH_AT)
		dsink_flush(&c->tl, tl);
}

static void update_time(struct dec *x)
{
	uint32_t lost_mtc, lost_cyc;
	uint64_t tsc;

	if ((x->bd ? pt_blk_time(x->bd, &tsc, &lost_mtc, &lost_cyc) :
		     pt_insn_time(x->d, &tsc, &lost_mtc, &lost_cyc)) >= 0) {
		x->tsc = tsc;
		x->have_time = true;
	}
}

/* ---- branches ---- */

static bool is_branch(enum pt_insn_class ic)
{
	return ic != ptic_other && ic != ptic_error && ic != ptic_ptwrite;
}

static bool taken(const struct last *in, uint64_t to)
{
	if (in->iclass == ptic_cond_jump)
		return to != in->ip + in->size;
	return is_branch(in->iclass);
}

/* perf's name for the kind of a branch (its flags column). */
static const char *branch_kind(const struct last *in)
{
	const uint8_t *b = in->b;
	size_t n = in->size < sizeof(in->b) ? in->size : sizeof(in->b);

	/* A REX prefix (iretq, sysretq: 48 cf, 48 0f 07) says nothing about which it is. */
	if (n > 1 && (b[0] & 0xf0) == 0x40) {
		b++;
		n--;
	}
	switch (in->iclass) {
	case ptic_call: return "call";
	case ptic_return: return "return";
	case ptic_jump: return "jmp";
	case ptic_cond_jump: return "jcc";
	case ptic_far_call:
		if (n >= 2 && b[0] == 0x0f && (b[1] == 0x05 || b[1] == 0x34))
			return "syscall";
		return b[0] == 0xcd || b[0] == 0xcc || b[0] == 0xce || b[0] == 0xf1 ? "int" :
		       "far call";
	case ptic_far_return:
		if (n >= 2 && b[0] == 0x0f && (b[1] == 0x07 || b[1] == 0x35))
			return "sysret";
		/* vmlaunch, vmresume: libipt's far returns. */
		if (n >= 3 && b[0] == 0x0f && b[1] == 0x01 && (b[2] == 0xc2 || b[2] == 0xc3))
			return "vmentry";
		return b[0] == 0xcf ? "iret" : "far return";
	case ptic_far_jump: return "far jmp";
	default: return "";
	}
}

/* A frame the branch of perf's @kind opens or closes in --calls and --timeline. */
static bool flow_how(enum pt_insn_class ic, const char *kind, enum rrec_kind *rk,
		     enum drec_how *how)
{
	switch (ic) {
	case ptic_call: *rk = RREC_CALL; *how = DREC_HOW_CALL; return true;
	case ptic_return: *rk = RREC_RETURN; *how = DREC_HOW_RET; return true;
	case ptic_far_call:
		if (strcmp(kind, "int"))
			return false;
		*rk = RREC_CALL;
		*how = DREC_HOW_INT;
		return true;
	case ptic_far_return:
		if (!strcmp(kind, "iret")) {
			*how = DREC_HOW_IRET;
		} else if (!strcmp(kind, "vmentry")) {
			*how = DREC_HOW_VMENTRY;
		} else {
			return false;
		}
		*rk = RREC_RETURN;
		return true;
	default:
		return false;
	}
}

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

	/* Sets of two ways: the first's slot. */
	return (size_t)(h >> (64 - NAMES_BITS + 1)) * 2;
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
		/* calloc(): pages of slots never used stay untouched (aligned by hand). */
		x->names_mem = calloc((1u << NAMES_BITS) + 1, sizeof(*x->names));
		if (!x->names_mem)
			return NULL;
		x->names = (struct symname *)(((uintptr_t)x->names_mem + 63) & ~(uintptr_t)63);
	}
	return &x->names[sym_slot(pid, isid, ip)];
}

static bool sym_is(const struct symname *e, uint32_t pid, int isid, uint64_t ip)
{
	return e->ip == ip && e->isid == isid && e->pid == pid;
}

/* @e was the way of its set used last: a miss takes the other (written only on a change). */
static void sym_touch(struct symname *e, struct symname *other)
{
	if (!(e->named & SYM_RECENT)) {
		e->named |= SYM_RECENT;
		other->named &= (uint8_t)~SYM_RECENT;
	}
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
static const char *symbolize(const struct image_sym *y, struct symname *e, char *buf,
			     size_t len, bool *is_plain, size_t *nlen)
{
	size_t n;

	if (e && (e->named & SYM_NAMED)) {
		*is_plain = e->named & SYM_PLAIN;
		*nlen = e->len;
		return e->name;
	}
	image_sym_format(y, buf, len);
	n = strnlen(buf, len);
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

/* The way of @set that holds @ip of @isid in @pid, made the recent one; NULL: a miss. */
static inline struct symname *sym_hit(struct symname *set, uint32_t pid, int isid,
				      uint64_t ip)
{
	for (int w = 0; w < 2; w++) {
		if (sym_is(&set[w], pid, isid, ip)) {
			sym_touch(&set[w], &set[!w]);
			return &set[w];
		}
	}
	return NULL;
}

/*
 * name_of()'s miss: the entry of the set's way used less lately, but never @busy, the
 * entry that holds the other end's name, in use. No set (no section, no memory): the
 * name is spelled into @buf and nothing is kept.
 */
static const char *name_find(struct dec *x, uint32_t pid, int isid, uint64_t ip,
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

/*
 * The name of @ip in section @isid (symbolize()'s), from its entry in the cache: a hit
 * with the name spelled reads the entry's first line only, in line (the call cost --calls
 * more than the look-up: two each call or return). @used: the entry it took, for the
 * other end's call.
 */
static inline const char *name_of(struct dec *x, uint32_t pid, int isid, uint64_t ip,
				  const struct symname *busy, struct symname **used,
				  char *buf, size_t len, bool *is_plain, size_t *nlen)
{
	struct symname *e;

	if (isid > 0 && x->names && (e = sym_hit(&x->names[sym_slot(pid, isid, ip)], pid,
						  isid, ip))) {
		*used = e;
		if (!(e->named & SYM_NAMED))
			return symbolize(&e->sym, e, buf, len, is_plain, nlen);
		*is_plain = e->named & SYM_PLAIN;
		*nlen = e->len;
		return e->name;
	}
	return name_find(x, pid, isid, ip, busy, used, buf, len, is_plain, nlen);
}

/*
 * A CALL or RETURN record (a frame opens or closes) from -> to, at the time of the
 * instruction @at (the call or return: libipt's time for it, as ptxed --time prints it),
 * NULL: now (the decoder's last event).
 */
static void flow_rec(struct dec *x, enum rrec_kind rk, enum drec_how how, uint64_t from,
		     int from_isid, uint64_t to, int to_isid, const struct last *at)
{
	struct symname *fe = NULL, *te = NULL;
	char from_buf[512], to_buf[512];
	const char *from_name = "", *to_name = "";
	bool from_plain = true, to_plain = true;
	size_t from_len = 0, to_len = 0;
	uint32_t pid = x->thread_known ? x->pid : UINT32_MAX;
	struct rrec r;

	if (!(x->wants & (RREC_BIT(RREC_CALL) | RREC_BIT(RREC_RETURN))))
		return;
	/* report (RENDER_SYMS) resolves its own, from the record's image and ids. */
	if (x->flags & RENDER_NAMES) {
		if (from)
			from_name = name_of(x, pid, from_isid, from, NULL, &fe, from_buf,
					    sizeof(from_buf), &from_plain, &from_len);
		/* Both in one set: it keeps @from's, whose name is in use. */
		if (to)
			to_name = name_of(x, pid, to_isid, to, fe, &te, to_buf, sizeof(to_buf),
					  &to_plain, &to_len);
	}
	/* rec_init()'s, field by field: a memset of the record costs more at every call. */
	r.kind = rk;
	r.name = NULL;
	r.event = NULL;
	r.offset = 0;
	r.stream = 0;
	r.stream_name = NULL;
	r.pid = x->pid;
	r.tid = x->tid;
	r.has_time = (at && at->have_time) || x->have_time;
	r.time = !r.has_time ? 0 : tsc_time(x->cfg, at && at->have_time ? at->tsc : x->tsc);
	r.how = how;
	r.from = from;
	r.to = to;
	r.from_name = from_name;
	r.to_name = to_name;
	r.names_plain = from_plain && to_plain;
	r.from_len = (uint16_t)from_len;
	r.to_len = (uint16_t)to_len;
	r.img = x->img;
	r.sym_pid = pid;
	r.from_isid = from_isid;
	r.to_isid = to_isid;
	emit(x, &r);
}

static void branch(struct dec *x, uint64_t from, uint64_t to, const char *kind)
{
	/*
	 * The record is kept in @x, zero but for these: clearing one for each branch (GCC's
	 * rep stos) was a third of --branches' time on the fast path.
	 */
	struct rrec *r = &x->brec;

	if (!wants(x, RREC_BRANCH))
		return;
	r->kind = RREC_BRANCH;
	r->from = from;
	r->to = to;
	r->name = kind;
	emit(x, r);
}

/* The pending interrupt frame, its target in section @to_isid (0: not known). */
static void flush_pending(struct dec *x, int to_isid)
{
	if (!x->pend.valid)
		return;
	x->pend.valid = false;
	flow_rec(x, RREC_CALL, x->pend.how, x->pend.from, x->pend.from_isid, x->pend.to,
		 to_isid, NULL);
}

/* The successor of the last instruction is known: what was it, a branch taken, a call? */
static void resolve_next(struct dec *x, uint64_t to, int to_isid)
{
	const struct last *p = &x->prev;
	const char *kind;
	enum rrec_kind rk;
	enum drec_how how;

	if (!x->have_prev)
		return;
	x->have_prev = false;
	if (!taken(p, to))
		return;
	x->c->stats.branches++;
	kind = branch_kind(p);
	branch(x, p->ip, to, kind);
	if (flow_how(p->iclass, kind, &rk, &how))
		flow_rec(x, rk, how, p->ip, p->isid, to, to_isid, p);
}

/* Tracing stopped after the last instruction: perf's "tr end" row from it. */
static void resolve_end(struct dec *x, uint64_t from_if_none, const char *kind)
{
	uint64_t from = from_if_none;

	if (x->have_prev) {
		from = x->prev.ip;
		kind = branch_kind(&x->prev);
		if (is_branch(x->prev.iclass))
			x->c->stats.branches++;
		x->have_prev = false;
	}
	branch(x, from, 0, kind && *kind ? kind : "tr end");
}

static void drop_prev(struct dec *x)
{
	x->have_prev = false;
}

/* ---- trimming at the next chunk's first instruction ---- */

/* The mark at the instruction the decoder is at, @off its trace offset. */
static void set_mark(struct dec *x, uint64_t off)
{
	/* What comes before the next chunk's first instruction stays this chunk's. */
	if (x->run_n)
		run_flush(x, false);
	x->mark.valid = true;
	x->mark.out = dsink_pos(&x->c->out);
	x->mark.tl = dsink_pos(&x->c->tl);
	x->mark.offset = off;
	x->mark.ndiag = x->c->nr_diags;
	x->mark.stats = x->c->stats;
	x->mark.mode = x->blk_mode;
}

/*
 * The sinks' end was taken back: what a renderer keeps of what it wrote in this chunk
 * (report's ids of names and addresses, defined once a chunk) may have gone with it, so
 * it starts again as in a new chunk.
 */
static void renders_forget(struct dec *x)
{
	for (size_t i = 0; i < x->nr_rend; i++)
		x->rend[i].chunk = 0;
}

/* Drop what the next chunk decodes too: everything from its first instruction on. */
static void trim(struct dec *x)
{
	struct decode_chunk *c = x->c;

	if (!x->mark.valid)
		return;
	dsink_truncate(&c->out, x->mark.out);
	dsink_truncate(&c->tl, x->mark.tl);
	c->nr_diags = x->mark.ndiag;
	c->stats = x->mark.stats;
	x->have_prev = false;
	/* (fast_region() goes on after it: see fast_restore()) */
	renders_forget(x);
}

/*
 * The next chunk starts at next_ip. The last time this chunk meets that IP is where the
 * next chunk's decoder starts (the PSB's FUP), unless trace was read after it: then it
 * was an earlier visit.
 */
static void check_mark(struct dec *x, const struct pt_insn *in, bool ok)
{
	if (in->ip == x->c->next_ip) {
		resolve_next(x, in->ip, in->isid);
		set_mark(x, offset_now(x));
		if (!x->bd)
			x->mark.mode = in->mode;	/* the instruction path's (run_fast()) */
		return;
	}
	if (!x->mark.valid || !ok)
		return;
	if (in->iclass == ptic_cond_jump || in->iclass == ptic_return ||
	    offset_now(x) != x->mark.offset)
		x->mark.valid = false;
}

/* ---- instructions ---- */

static void count_insn(struct decode_stats *s, const struct pt_insn *in)
{
	s->insns++;
	switch (in->iclass) {
	case ptic_cond_jump: s->cond++; break;
	case ptic_call: s->calls++; break;
	case ptic_return: s->returns++; break;
	case ptic_far_call: case ptic_far_return: case ptic_far_jump: s->far++; break;
	default: break;
	}
}

/*
 * The trace is mapped from its file and read once, front to back: pages well behind the
 * decoder are dropped, so that resident memory does not grow with the trace.
 */
static void drop_behind(struct dec *x, uint64_t off, uint64_t keep)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), base, from, to;

	/* Dropped pages of a file mapping are read again; of memory, they would be zeroes. */
	if (off < keep || !x->c->mapped)
		return;
	base = (uintptr_t)(x->c->pt + x->c->begin);
	/*
	 * The page a chunk starts in may hold the end of the chunk before, still being read:
	 * dropping it costs that reader a fault (the bytes are the file's), nothing more.
	 */
	from = (base + x->dropped) & ~(page - 1);
	to = (base + off - keep + (keep ? 0 : page - 1)) & ~(page - 1);
	if (to > from && !madvise((void *)from, to - from, MADV_DONTNEED))
		x->dropped = to - base;
}

/*
 * libipt reads a run of PAD or timing packets in one call (1 GiB of PAD after a PSB is
 * one pt_insn_next()), and a trace of errors returns no instruction between its
 * resyncs: dropping pages between the decoder's calls does not bound what it touches.
 * Nor is its reading front to back: libipt 2.2 reads ahead on a copy of its decoder (at
 * a sync, the events after the PSB+, up to the end of a PAD run) and then reads the same
 * bytes again. So the pages wholly inside the chunk's range are made unreadable but for
 * a window, a little behind and a step ahead of where the reader last was. A touch
 * outside the window (a SIGSEGV in the decoder's own thread, within libipt or not) drops
 * the window's pages, moves it to the page touched and lets the read go on: the bytes
 * read are the file's, the offsets libipt reports its own, and no more than the window
 * is resident, whichever way the reader goes. The reader of a neighbouring chunk never
 * touches these pages.
 */
#define GUARD_STEP (1u << 20)

struct guard {
	uintptr_t lo, hi;		/* the pages wholly inside the chunk's range */
	volatile uintptr_t wlo, whi;	/* the window readable in them; whi == 0: none */
};

static __thread struct guard *thread_guard;
static struct sigaction next_segv;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static bool guard_ready;
static uintptr_t guard_page;

static uintptr_t clamp(uintptr_t v, uintptr_t lo, uintptr_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The drop of the pages of [from, to) outside the window [wlo, whi). */
static void drop_outside(uintptr_t from, uintptr_t to, uintptr_t wlo, uintptr_t whi)
{
	uintptr_t a = clamp(wlo, from, to), b = clamp(whi, from, to);

	if (a > from)
		madvise((void *)from, a - from, MADV_DONTNEED);
	if (to > b)
		madvise((void *)b, to - b, MADV_DONTNEED);
}

/* The reader touched @addr, outside the window: the window moves there. */
static bool guard_move(struct guard *g, uintptr_t addr)
{
	uintptr_t cur = addr & ~(guard_page - 1);
	uintptr_t wlo = cur - g->lo > KEEP_BEHIND ? cur - KEEP_BEHIND : g->lo;
	uintptr_t whi = g->hi - cur > GUARD_STEP ? cur + GUARD_STEP : g->hi;

	if (mprotect((void *)wlo, whi - wlo, PROT_READ))
		return false;
	if (g->whi) {
		/* What leaves the window is unreadable again, and dropped. */
		uintptr_t a = clamp(wlo, g->wlo, g->whi), b = clamp(whi, g->wlo, g->whi);

		if (a > g->wlo)
			mprotect((void *)g->wlo, a - g->wlo, PROT_NONE);
		if (g->whi > b)
			mprotect((void *)b, g->whi - b, PROT_NONE);
		drop_outside(g->wlo, g->whi, wlo, whi);
	}
	g->wlo = wlo;
	g->whi = whi;
	return true;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	struct guard *g = thread_guard;
	uintptr_t a = (uintptr_t)si->si_addr;
	int saved = errno;

	if (g && a >= g->lo && a < g->hi && !(a >= g->wlo && a < g->whi)) {
		if (guard_move(g, a)) {
			errno = saved;
			return;
		}
		/* The read cannot go on: the fault again, without this handler. */
		signal(SIGSEGV, SIG_DFL);
		return;
	}
	/* Not a guard: whatever handled SIGSEGV before does (the default: the fault again). */
	if (next_segv.sa_flags & SA_SIGINFO)
		next_segv.sa_sigaction(sig, si, uc);
	else if (next_segv.sa_handler != SIG_DFL && next_segv.sa_handler != SIG_IGN)
		next_segv.sa_handler(sig);
	else
		signal(SIGSEGV, SIG_DFL);
}

static void guard_install(void)
{
	struct sigaction sa, now;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	guard_page = (uintptr_t)sysconf(_SC_PAGESIZE);
	if (sigaction(SIGSEGV, &sa, &next_segv) || sigaction(SIGSEGV, NULL, &now))
		return;
	/* A sanitizer may keep its own handler: then there are no guards. */
	guard_ready = (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_segv;
}

static void guard_begin(struct dec *x, struct guard *g)
{
	uintptr_t base = (uintptr_t)(x->c->pt + x->c->begin), lo, hi;

	memset(g, 0, sizeof(*g));
	if (!x->c->mapped || pthread_once(&guard_once, guard_install) || !guard_ready)
		return;
	lo = (base + guard_page - 1) & ~(guard_page - 1);
	hi = (base + (uintptr_t)(x->c->end - x->c->begin)) & ~(guard_page - 1);
	/* A range no longer than the window needs none. */
	if (hi <= lo || hi - lo <= KEEP_BEHIND + GUARD_STEP ||
	    mprotect((void *)lo, hi - lo, PROT_NONE))
		return;
	g->lo = lo;
	g->hi = hi;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	thread_guard = g;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* The reader starts at the chunk's start: the window does too. */
	if (!guard_move(g, lo)) {
		thread_guard = NULL;
		mprotect((void *)lo, hi - lo, PROT_READ);
		memset(g, 0, sizeof(*g));
	}
}

static void guard_end(struct dec *x, struct guard *g)
{
	uintptr_t base = (uintptr_t)(x->c->pt + x->c->begin);

	if (!g->hi)
		return;
	thread_guard = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mprotect((void *)g->lo, g->hi - g->lo, PROT_READ);
	/* Outside the window, nothing is resident; the pages before it count as dropped. */
	if (g->wlo > base && g->wlo - base > x->dropped)
		x->dropped = g->wlo - base;
}

static void progress(struct dec *x)
{
	uint64_t off;

	if (++x->progress_count < PROGRESS_EVERY)
		return;
	x->progress_count = 0;
	off = offset_now(x);
	if (off <= x->progress_off)
		return;
	if (x->c->progress)
		__atomic_fetch_add(x->c->progress, off - x->progress_off, __ATOMIC_RELAXED);
	x->progress_off = off;
	drop_behind(x, off, KEEP_BEHIND);
}

/* @ok: decoded without error (an instruction can come with the error that follows it). */
static void on_insn(struct dec *x, const struct pt_insn *in, bool ok)
{
	if (!x->c->last && x->c->have_next_ip)
		check_mark(x, in, ok);
	if (x->pend.valid)
		flush_pending(x, in->ip == x->pend.to ? in->isid : 0);
	resolve_next(x, in->ip, in->isid);
	count_insn(&x->c->stats, in);
	if (x->insn_rend)
		x->insn_rend->ops->insn(x->insn_rend, in, x->cfg->show_offset ?
					file_offset(x, x->at) : 0, x->event_tsc);
	x->prev.ip = in->ip;
	x->prev.isid = in->isid;
	x->prev.iclass = in->iclass;
	x->prev.size = in->size;
	x->prev.mode = (uint8_t)in->mode;
	memcpy(x->prev.b, in->raw, sizeof(x->prev.b));
	x->prev.have_time = x->have_time;
	x->prev.tsc = x->tsc;
	x->have_prev = true;
	run_add(x, 1);
	maybe_flush(x);
	progress(x);
}

/* ---- events ---- */

/* Losses: the timeline shows a gap, never time spent in the function it was in. */
static void gap(struct dec *x, const char *why)
{
	struct rrec r;

	x->c->stats.gaps++;
	if (!wants(x, RREC_GAP))
		return;
	rec_init(x, &r, RREC_GAP);
	r.name = why;
	emit(x, &r);
}

static void branch_effects(struct dec *x, const struct pt_event *ev)
{
	switch (ev->type) {
	case ptev_enabled:
	case ptev_disabled:
	case ptev_async_disabled:
	case ptev_async_branch:
	case ptev_overflow:
		flush_pending(x, 0);
		break;
	default:
		break;
	}
	switch (ev->type) {
	case ptev_enabled:
		drop_prev(x);
		x->c->stats.enables++;
		branch(x, 0, ev->variant.enabled.ip, "tr strt");
		if (x->off_open) {
			x->off_open = false;
			flow_rec(x, RREC_RETURN, DREC_HOW_ON, 0, 0, ev->variant.enabled.ip, 0, NULL);
		}
		break;
	case ptev_disabled:
		x->c->stats.disables++;
		resolve_end(x, ev->ip_suppressed ? 0 : ev->variant.disabled.ip, "tr end");
		break;
	case ptev_async_disabled:
		x->c->stats.disables++;
		/* The instruction at "at" did not execute: it is where the last one went. */
		resolve_next(x, ev->variant.async_disabled.at, 0);
		branch(x, ev->variant.async_disabled.at, 0, "tr end async");
		/* Out of traced code at an interrupt, exception or VM exit until it is back. */
		if (!x->off_open) {
			x->off_open = true;
			flow_rec(x, RREC_CALL, DREC_HOW_OFF, ev->variant.async_disabled.at,
				 x->prev.isid, 0, 0, NULL);
		}
		break;
	case ptev_async_branch:
		resolve_next(x, ev->variant.async_branch.from, 0);
		x->c->stats.branches++;
		branch(x, ev->variant.async_branch.from,
		       ev->ip_suppressed ? 0 : ev->variant.async_branch.to,
		       x->async_kind ? x->async_kind : "hw int");
		if (!ev->ip_suppressed) {
			x->pend.valid = true;
			x->pend.how = x->async_kind ? x->async_how : DREC_HOW_INTR;
			x->pend.from = ev->variant.async_branch.from;
			/* The interrupted code: where the last instruction was. */
			x->pend.from_isid = x->prev.isid;
			x->pend.to = ev->variant.async_branch.to;
		}
		x->async_kind = NULL;
		break;
#if PTC_LIBIPT >= 0x201
	/* Event Trace says what the asynchronous branch that follows is. */
	case ptev_interrupt:
		x->async_kind = "hw int";
		x->async_how = DREC_HOW_INTR;
		break;
	case ptev_vmexit:
		x->async_kind = "vmexit";
		x->async_how = DREC_HOW_VMEXIT;
		break;
#endif
#if PTC_LIBIPT >= 0x202
	case ptev_swintr:
		x->async_kind = "int";
		x->async_how = DREC_HOW_INT;
		break;
#endif
	case ptev_overflow:
		drop_prev(x);
		x->c->stats.overflows++;
		gap(x, "overflow: the CPU dropped trace");
		if (!ev->ip_suppressed)
			branch(x, 0, ev->variant.overflow.ip, "tr strt");
		break;
	default:
		break;
	}
}

static void note_thread(struct dec *x)
{
	uint32_t pid, tid;

	if (!dsb_thread(x->sb, &pid, &tid))
		return;
	if (x->thread_known && pid == x->pid && tid == x->tid)
		return;
	x->thread_known = true;
	x->pid = pid;
	x->tid = tid;
	if (wants(x, RREC_THREAD)) {
		struct rrec r;

		rec_init(x, &r, RREC_THREAD);
		emit(x, &r);
	}
}

static void on_event(struct dec *x, const struct pt_event *ev)
{
	struct pt_image *image = NULL;
	struct rrec r;

	if (ev->has_tsc) {
		x->tsc = ev->tsc;
		x->have_time = true;
	}
	x->event_tsc = ev->tsc;
	if (x->sb) {
		dsb_event(x->sb, ev, &image);
		if (image && (x->bd ? pt_blk_set_image(x->bd, image) :
				  pt_insn_set_image(x->d, image)) < 0)
			add_diag(x, DECODE_DIAG_SB_ERROR, x->cfg->streams[x->c->stream].name,
				 file_offset(x, offset_now(x)), false, 0,
				 "cannot switch the decoder's memory image");
		note_thread(x);
	}
	/* Status updates restate what the decoder knows (at a PSB): nothing happened. */
	if (ev->status_update)
		return;
	x->c->stats.events++;
	branch_effects(x, ev);
	if (!wants(x, RREC_EVENT))
		return;
	rec_init(x, &r, RREC_EVENT);
	r.event = ev;
	r.offset = file_offset(x, x->at);
	emit(x, &r);
}

/* ---- errors ---- */

/* The target of a direct branch (rel8/rel16/rel32), for where ptxed reports an error. */
static bool direct_target(const struct pt_insn *in, uint64_t *to)
{
	const uint8_t *b = in->raw;
	size_t i = 0, n = in->size;
	int64_t rel;
	bool op16 = false;

	while (i < n && (b[i] == 0x66 || b[i] == 0x2e || b[i] == 0x3e || b[i] == 0xf2)) {
		op16 |= b[i] == 0x66;
		i++;
	}
	if (i >= n)
		return false;
	if (b[i] == 0xeb || (b[i] >= 0x70 && b[i] <= 0x7f) || (b[i] >= 0xe0 && b[i] <= 0xe3)) {
		if (i + 2 != n)
			return false;
		rel = (int8_t)b[i + 1];
	} else if (b[i] == 0xe8 || b[i] == 0xe9 ||
		   (b[i] == 0x0f && i + 1 < n && b[i + 1] >= 0x80 && b[i + 1] <= 0x8f)) {
		size_t at = i + (b[i] == 0x0f ? 2 : 1);
		bool w16 = in->mode == ptem_16bit ? !op16 : (op16 && in->mode != ptem_64bit);

		if (w16 && at + 2 == n) {
			rel = (int16_t)(b[at] | b[at + 1] << 8);
		} else if (at + 4 == n) {
			int32_t r;

			memcpy(&r, b + at, 4);
			rel = r;
		} else {
			return false;
		}
	} else {
		return false;
	}
	*to = in->ip + in->size + (uint64_t)rel;
	return true;
}

/* ptxed's choice of IP: the instruction's for a bad query, else where it went. */
static uint64_t error_ip(const struct pt_insn *in, int err)
{
	uint64_t to;

	if (!in || err == -pte_bad_query || in->iclass == ptic_error)
		return in ? in->ip : 0;
	if (direct_target(in, &to))
		return to;
	return in->ip + in->size;
}

static void error_at(struct dec *x, const char *msg, uint64_t ip)
{
	uint64_t off = file_offset(x, offset_now(x));
	struct rrec r;

	flush_pending(x, 0);
	drop_prev(x);
	x->c->stats.errors++;
	add_diag(x, DECODE_DIAG_ERROR, x->cfg->streams[x->c->stream].name, off, true, ip, msg);
	gap(x, msg);
	if (!wants(x, RREC_ERROR))
		return;
	rec_init(x, &r, RREC_ERROR);
	r.offset = off;
	r.to = ip;
	r.name = msg;
	emit(x, &r);
}

/*
 * An opcode this libipt does not know, where a newer one decodes a packet (2.0.5 and
 * Event Trace): the packet and what decodes it, in @msg.
 */
static bool newer_packet(struct dec *x, const char *what, char *msg, size_t size)
{
	uint64_t off = offset_now(x);
	struct iptcaps caps;
	const char *name;
	int kind;

	if (off >= x->c->end - x->c->begin)
		return false;
	kind = iptcaps_newer_packet(x->c->pt + x->c->begin + off,
				    (size_t)(x->c->end - x->c->begin - off), &name);
	iptcaps_get(&caps);
	if (kind < 0 || iptcaps_decodes(&caps, (enum iptcaps_pkt)kind))
		return false;
	snprintf(msg, size, "%s: %s packet: ", what, name);
	iptcaps_lacks(&caps, (enum iptcaps_pkt)kind, msg + strlen(msg), size - strlen(msg));
	return true;
}

/* A libipt error, in its words, at ptxed's IP. */
static void on_error(struct dec *x, const char *what, int err, const struct pt_insn *in)
{
	char msg[240];

	if (pt_errcode(err) != pte_bad_opc || !newer_packet(x, what, msg, sizeof(msg)))
		snprintf(msg, sizeof(msg), "%s: %s", what, pt_errstr(pt_errcode(err)));
	/*
	 * A branch into JIT code (an anonymous executable mapping, whose bytes no file
	 * holds): where it went is known, and its perf map may name it; the call is shown.
	 */
	if (in && pt_errcode(err) == pte_nomap && x->have_prev && x->thread_known &&
	    image_in_anon(x->img, x->pid, in->ip))
		resolve_next(x, in->ip, 0);
	error_at(x, msg, error_ip(in, err));
}

static bool stalled(struct dec *x)
{
	uint64_t limit = x->cfg->stall_limit ? x->cfg->stall_limit : STALL_LIMIT, off;

	if (++x->since_check < STALL_CHECK)
		return false;
	x->since_check = 0;
	off = offset_now(x);
	if (off != x->stall_off) {
		x->stall_off = off;
		x->stall_insns = 0;
		return false;
	}
	x->stall_insns += STALL_CHECK;
	return x->stall_insns >= limit;
}

/* ---- the loop ---- */

/* Where the decoder is, for ptxed's --offset: before it decodes what it prints. */
static void note_offset(struct dec *x)
{
	if (x->cfg->show_offset)
		x->at = offset_now(x);
}

static int drain_events(struct dec *x, int status)
{
	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_event ev;

		note_offset(x);
		status = x->bd ? pt_blk_event(x->bd, &ev, sizeof(ev)) :
				 pt_insn_event(x->d, &ev, sizeof(ev));
		if (status >= 0)
			on_event(x, &ev);
	}
	return status;
}

/* From a sync point until the end or an error. Returns -pte_eos at the end. */
static int flow_once(struct dec *x, int status, struct pt_insn *inp)
{
	struct pt_insn in;

	memset(&in, 0, sizeof(in));
	for (;;) {
		status = drain_events(x, status);
		if (status < 0)
			break;
		/*
		 * The stream's end: ptxed stops here. A chunk's end is not one: the instructions
		 * up to the first that needs the next chunk's packets are decoded (and trimmed).
		 */
		if ((status & pts_eos) && x->c->last) {
			if (!(status & pts_ip_suppressed) && wants(x, RREC_EOT)) {
				struct rrec r;

				rec_init(x, &r, RREC_EOT);
				emit(x, &r);
			}
			return -pte_eos;
		}
		in.iclass = ptic_error;
		note_offset(x);
		status = pt_insn_next(x->d, &in, sizeof(in));
		if (status < 0) {
			if (in.iclass != ptic_error)
				on_insn(x, &in, false);
			break;
		}
		on_insn(x, &in, true);
		if (stalled(x)) {
			char msg[160];

			snprintf(msg, sizeof(msg), "error: %" PRIu64 " instructions without "
				 "reading trace: a jump to itself?", x->stall_insns);
			error_at(x, msg, in.ip);
			x->stall_insns = 0;
			*inp = in;
			return -pte_internal;
		}
	}
	*inp = in;
	if (status == -pte_eos)
		return status;
	on_error(x, "error", status, &in);
	return status;
}

/* ---- the block decoder: every mode that does not print instructions ---- */

/*
 * libipt's blocks say where they start and end and how many instructions they hold, the
 * last one's class only sometimes, its size and bytes never. With end_on_call and
 * end_on_jump, every instruction of a block but the last is not a branch, so a block is
 * what the instruction decoder would have given one by one: its first and last
 * instructions are handled as on_insn() handles them, those between in one step. What
 * the last instruction is (size, bytes, class) comes from its section (image_read()) and
 * capstone, kept by section, address and mode: a section's bytes do not change, so the
 * cache needs no invalidation when the image changes (a new MMAP, another process).
 */
struct shape {
	uint64_t ip;
	int isid;
	uint8_t mode, size, iclass, valid;
	uint8_t raw[pt_max_insn_size];
};

struct shapes {
	struct shape e[1u << SHAPE_BITS];
	uint32_t used;		/* entries filled */
};

static size_t shape_slot(uint64_t ip, int isid, int mode)
{
	uint64_t h = (ip ^ (uint64_t)isid << 40 ^ (uint64_t)mode << 62) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> (64 - SHAPE_BITS));
}

static int cs_index(enum pt_exec_mode mode)
{
	return mode == ptem_16bit ? 0 : mode == ptem_32bit ? 1 : 2;
}

/* The instruction at @ip of section @isid, or NULL when it cannot be read. */
static const struct shape *shape_of(struct dec *x, int isid, uint64_t ip, enum pt_exec_mode mode)
{
	struct shape *s = &x->shapes->e[shape_slot(ip, isid, mode)];
	int m = cs_index(mode), n;
	uint8_t raw[pt_max_insn_size];
	const uint8_t *code = raw;
	uint64_t addr = ip;
	size_t len;
	cs_insn *ci;

	if (s->valid && s->ip == ip && s->isid == isid && s->mode == mode)
		return s;
	n = image_read(x->img, isid, ip, raw, sizeof(raw));
	if (n <= 0)
		return NULL;
	if (!x->cs[m]) {
		static const cs_mode modes[3] = { CS_MODE_16, CS_MODE_32, CS_MODE_64 };

		if (cs_open(CS_ARCH_X86, modes[m], &x->cs[m]) != CS_ERR_OK) {
			x->cs[m] = 0;
			return NULL;
		}
	}
	len = (size_t)n;
	ci = cs_malloc(x->cs[m]);
	if (!ci)
		return NULL;
	if (!cs_disasm_iter(x->cs[m], &code, &len, &addr, ci)) {
		cs_free(ci, 1);
		return NULL;
	}
	x->shapes->used += !s->valid;
	memset(s, 0, sizeof(*s));
	s->ip = ip;
	s->isid = isid;
	s->mode = (uint8_t)mode;
	s->size = (uint8_t)ci->size;
	s->iclass = (uint8_t)disasm_class(ci->id);
	memcpy(s->raw, raw, s->size);
	s->valid = 1;
	cs_free(ci, 1);
	return s;
}

/* The size of @l read from its section (the block path), 0: it cannot be read. */
static unsigned last_size(struct dec *x, const struct last *l)
{
	const struct shape *s = shape_of(x, l->isid, l->ip, (enum pt_exec_mode)l->mode);

	return s ? s->size : 0;
}

/*
 * A block's class that does not say which branch ended it: none (libipt's block cache), or
 * libipt 2.1's ptic_indirect (an indirect jump or any far transfer, from the same cache).
 */
static bool unclassed(enum pt_insn_class ic)
{
#if PTC_LIBIPT >= 0x201
	if (ic == ptic_indirect)
		return true;
#endif
	return ic == ptic_error;
}

/* The last instruction of @b as a pt_insn (its size and bytes as far as known). */
static void block_last(struct dec *x, const struct pt_block *b, struct pt_insn *in)
{
	const struct shape *s;

	memset(in, 0, sizeof(*in));
	in->ip = b->end_ip;
	in->isid = b->isid;
	in->mode = b->mode;
	in->iclass = b->iclass;
	if (b->truncated) {
		in->size = b->size;
		memcpy(in->raw, b->raw, sizeof(in->raw));
		if (unclassed(in->iclass)) {
			cs_insn *ci;
			const uint8_t *code = in->raw;
			size_t len = in->size;
			uint64_t addr = in->ip;
			int m = cs_index(b->mode);

			in->iclass = ptic_other;
			if (x->cs[m] || cs_open(CS_ARCH_X86, m == 0 ? CS_MODE_16 : m == 1 ?
						CS_MODE_32 : CS_MODE_64, &x->cs[m]) == CS_ERR_OK) {
				ci = cs_malloc(x->cs[m]);
				if (ci && cs_disasm_iter(x->cs[m], &code, &len, &addr, ci))
					in->iclass = disasm_class(ci->id);
				if (ci)
					cs_free(ci, 1);
			}
		}
		return;
	}
	s = shape_of(x, b->isid, b->end_ip, b->mode);
	if (!s) {
		if (unclassed(in->iclass))
			in->iclass = ptic_other;
		return;
	}
	in->size = s->size;
	memcpy(in->raw, s->raw, s->size);
	if (unclassed(in->iclass))
		in->iclass = (enum pt_insn_class)s->iclass;
}

/* An offset not asked of the decoder (flow_blk()). */
#define OFF_UNKNOWN UINT64_MAX

/* The last instruction of @b, as flow() keeps it (struct last). */
static void block_last_lite(struct dec *x, const struct pt_block *b, struct last *l)
{
	l->ip = b->end_ip;
	l->isid = b->isid;
	l->iclass = b->iclass;
	l->size = 0;
	memset(l->b, 0, sizeof(l->b));
	l->mode = (uint8_t)b->mode;
	/* Its size says whether a conditional branch was taken; its bytes name far ones. */
	if (l->iclass == ptic_call || l->iclass == ptic_return || l->iclass == ptic_jump ||
	    l->iclass == ptic_other)
		return;
	if (!b->truncated && !unclassed(l->iclass)) {
		struct shape *s = &x->shapes->e[shape_slot(b->end_ip, b->isid, b->mode)];

		if (s->valid && s->ip == b->end_ip && s->isid == b->isid && s->mode == b->mode) {
			l->size = s->size;
			memcpy(l->b, s->raw, sizeof(l->b));
			return;
		}
	}
	{
		struct pt_insn in;

		block_last(x, b, &in);
		l->iclass = in.iclass;
		l->size = in.size;
		memcpy(l->b, in.raw, sizeof(l->b));
	}
}

/* One instruction, as on_insn() takes it, with the offset the instruction decoder has. */
static inline void blk_step(struct dec *x, const struct last *in, bool ok, uint64_t off)
{
	struct decode_chunk *c = x->c;

	if (!c->last && c->have_next_ip) {
		if (in->ip == c->next_ip) {
			resolve_next(x, in->ip, in->isid);
			set_mark(x, off);
		} else if (x->mark.valid && ok &&
			   (in->iclass == ptic_cond_jump || in->iclass == ptic_return ||
			    off != x->mark.offset)) {
			x->mark.valid = false;
		}
	}
	if (x->pend.valid)
		flush_pending(x, in->ip == x->pend.to ? in->isid : 0);
	if (x->have_prev)
		resolve_next(x, in->ip, in->isid);
	c->stats.insns++;
	switch (in->iclass) {
	case ptic_cond_jump: c->stats.cond++; break;
	case ptic_call: c->stats.calls++; break;
	case ptic_return: c->stats.returns++; break;
	case ptic_far_call: case ptic_far_return: case ptic_far_jump: c->stats.far++; break;
	default: break;
	}
	x->prev = *in;
	x->prev.have_time = x->have_time;
	x->prev.tsc = x->tsc;
	x->have_prev = true;
	x->flow_ip = in->ip;
}

/*
 * Where the instruction @s at @ip of a block goes next within the block: past it, or to
 * its target when it is a direct call or jump, which libipt follows inside a block when
 * the block ends at an event's instruction count (TRIG's, libipt 2.2) rather than at a
 * branch.
 */
static uint64_t shape_next(const struct shape *s, uint64_t ip, enum pt_exec_mode mode)
{
	if (s->iclass == ptic_call || s->iclass == ptic_jump) {
		struct pt_insn in;
		uint64_t to;

		memset(&in, 0, sizeof(in));
		in.ip = ip;
		in.mode = mode;
		in.size = s->size;
		memcpy(in.raw, s->raw, s->size);
		if (direct_target(&in, &to))
			return to;
	}
	return ip + s->size;
}

/* The IP of instruction @k of @b (decoding the ones before it), or false. */
static bool block_ip(struct dec *x, const struct pt_block *b, unsigned k, uint64_t *ip)
{
	uint64_t at = b->ip;

	if (k + 1u == b->ninsn) {
		*ip = b->end_ip;
		return true;
	}
	for (unsigned i = 0; i < k; i++) {
		const struct shape *s = shape_of(x, b->isid, at, b->mode);

		if (!s || !s->size)
			return false;
		at = shape_next(s, at, b->mode);
	}
	*ip = at;
	return true;
}

/*
 * The stall check of flow() at each STALL_CHECK-th instruction decoded without error, over
 * @cnt of a block's @n, of which the last reads trace (@off_last) and the others do not
 * (@off_mid). Returns the index of the one that stalls, or -1.
 */
static long blk_stall(struct dec *x, unsigned cnt, unsigned n, uint64_t off_mid,
		      uint64_t off_last)
{
	uint64_t limit = x->cfg->stall_limit ? x->cfg->stall_limit : STALL_LIMIT;
	unsigned k = STALL_CHECK - 1 - x->since_check;

	for (; k < cnt; k += STALL_CHECK) {
		uint64_t off = k + 1 == n ? off_last : off_mid;

		if (off != x->stall_off) {
			x->stall_off = off;
			x->stall_insns = 0;
			continue;
		}
		x->stall_insns += STALL_CHECK;
		if (x->stall_insns >= limit) {
			x->since_check = 0;
			return (long)k;
		}
	}
	x->since_check = (x->since_check + cnt) % STALL_CHECK;
	return -1;
}

/*
 * The instructions of a block, from @b (@err: how pt_blk_next() ended, @off0: the offset
 * before it). Returns false when the decoder stalled (an error reported).
 */
static bool on_block(struct dec *x, const struct pt_block *b, int err, uint64_t off0)
{
	/*
	 * A block that ends where an event is pending may end at the event's instruction
	 * count instead of at a branch: direct calls and jumps inside it (libipt 2.2's TRIG).
	 */
	bool walk = err >= 0 && (err & pts_event_pending) && b->ninsn > 1;
	struct decode_chunk *c = x->c;
	unsigned n = b->ninsn, m = n, mid, cnt;
	bool last_ok = err >= 0 || err == -pte_nomap || err == -pte_bad_insn;
	bool seam = !c->last && c->have_next_ip;
	uint64_t off1 = 0, ip;
	struct last first, last;
	long stop = -1;

	if (!n)
		return true;
	x->blk_mode = b->mode;
	block_last_lite(x, b, &last);
	/* flow() checks for a stall after each instruction decoded without error. */
	cnt = last_ok ? n : n - 1;
	/*
	 * The offset after the block, for the seam's mark only where one is live or may be
	 * set in the block (its instructions lie between its first and last IP unless it
	 * walks): libipt's offset query was 4 % of -J 2's CPU time, per block.
	 */
	if ((seam && (walk || x->mark.valid ||
		      (c->next_ip >= b->ip && c->next_ip <= b->end_ip))) ||
	    x->since_check + cnt >= STALL_CHECK)
		off1 = offset_now(x);
	if (x->since_check + cnt >= STALL_CHECK)
		stop = blk_stall(x, cnt, n, off0 == OFF_UNKNOWN ? off1 : off0, off1);
	else
		x->since_check += cnt;
	if (stop >= 0)
		m = (unsigned)stop + 1;
	first.ip = b->ip;
	first.isid = b->isid;
	first.iclass = ptic_other;
	first.size = 0;
	first.mode = (uint8_t)b->mode;
	memset(first.b, 0, sizeof(first.b));
	if (walk || (seam && c->next_ip > b->ip && c->next_ip < b->end_ip)) {
		/* The next chunk starts inside, or branches may: one instruction at a time. */
		for (unsigned k = 0; k < m; k++) {
			const struct shape *s = NULL;

			if (k + 1 == n) {
				blk_step(x, &last, last_ok, off1);
				run_add(x, 1);
				break;
			}
			s = shape_of(x, b->isid, first.ip, b->mode);
			if (s) {
				first.iclass = (enum pt_insn_class)s->iclass;
				first.size = s->size;
				memcpy(first.b, s->raw, sizeof(first.b));
			}
			blk_step(x, &first, true, off0);
			run_add(x, 1);
			if (!s || !s->size)
				break;	/* cannot happen: libipt decoded it */
			first.ip = shape_next(s, first.ip, b->mode);
		}
	} else {
		blk_step(x, n == 1 ? &last : &first, n > 1 || last_ok, n == 1 ? off1 : off0);
		run_add(x, 1);
		mid = m > 1 ? m - 2 : 0;
		if (mid) {
			/* Not branches, no trace read: counted, and the seam's mark checked. */
			if (seam && x->mark.valid && off0 != x->mark.offset)
				x->mark.valid = false;
			c->stats.insns += mid;
			x->run_n += x->run_rend ? mid : 0;
		}
		if (m > 1) {
			if (m == n) {
				blk_step(x, &last, last_ok, off1);
			} else {
				first.ip = block_ip(x, b, m - 1, &ip) ? ip : 0;
				blk_step(x, &first, true, off0);
			}
			run_add(x, 1);
		}
	}
	if (c->out.len > FLUSH_AT || c->tl.len > FLUSH_AT)
		maybe_flush(x);
	x->progress_count += m;
	if (x->progress_count >= PROGRESS_EVERY) {
		x->progress_count = PROGRESS_EVERY - 1;
		progress(x);
	}
	if (stop >= 0) {
		char msg[160];

		snprintf(msg, sizeof(msg), "error: %" PRIu64 " instructions without "
			 "reading trace: a jump to itself?", x->stall_insns);
		error_at(x, msg, x->prev.ip);
		x->stall_insns = 0;
		return false;
	}
	return true;
}

/* The instruction that stalled (on_block()), as flow_once() leaves it in @inp. */
static int stalled_blk(struct dec *x, struct pt_insn *inp)
{
	memset(inp, 0, sizeof(*inp));
	inp->ip = x->prev.ip;
	inp->isid = x->prev.isid;
	inp->iclass = ptic_error;
	return -pte_internal;
}

/* flow_once() with blocks: @inp says where an error was, as flow_once()'s. */
static int flow_blk_once(struct dec *x, int status, struct pt_insn *inp)
{
	/* The block being decoded, and the last one with instructions (errors at events). */
	struct pt_block bb[2], *b = &bb[0], *lastb = NULL;
	uint64_t off0;

	x->flow_ip = 0;
	for (;;) {
		if (status & (pts_event_pending | pts_eos)) {
			status = drain_events(x, status);
			if (status < 0)
				break;
			if ((status & pts_eos) && x->c->last) {
				if (!(status & pts_ip_suppressed) && wants(x, RREC_EOT)) {
					struct rrec r;

					rec_init(x, &r, RREC_EOT);
					emit(x, &r);
				}
				return -pte_eos;
			}
		}
		note_offset(x);
		/*
		 * The offset before the block is what the instruction decoder had at each of
		 * its instructions but the last: for the seam's mark and the stall check near
		 * its next instruction count (past that, a long block's is the offset after).
		 */
		off0 = OFF_UNKNOWN;
		if ((!x->c->last && x->c->have_next_ip) || x->since_check + 1024 >= STALL_CHECK)
			off0 = offset_now(x);
		status = pt_blk_next(x->bd, b, sizeof(*b));
		if (status < 0) {
			struct pt_insn in;

			if (!on_block(x, b, status, off0))
				return stalled_blk(x, inp);
			memset(&in, 0, sizeof(in));
			if (status == -pte_nomap || status == -pte_bad_insn) {
				/* Where the next instruction could not be read. */
				in.iclass = ptic_error;
				in.ip = b->ip;
				if (b->ninsn) {
					block_last(x, b, &in);
					in.ip = error_ip(&in, 0);
					in.iclass = ptic_error;
				}
			} else if (b->ninsn) {
				block_last(x, b, &in);
			} else {
				in.iclass = ptic_error;
				in.ip = x->flow_ip;
			}
			*inp = in;
			if (status == -pte_eos)
				return status;
			on_error(x, "error", status, &in);
			return status;
		}
		if (!on_block(x, b, status, off0))
			return stalled_blk(x, inp);
		if (b->ninsn) {
			lastb = b;
			b = b == &bb[0] ? &bb[1] : &bb[0];
		}
	}
	/* An event's error: at the last instruction, as the instruction decoder has it. */
	memset(inp, 0, sizeof(*inp));
	inp->iclass = ptic_error;
	if (lastb)
		block_last(x, lastb, inp);
	if (status == -pte_eos)
		return status;
	on_error(x, "error", status, inp);
	return status;
}

#if PTC_LIBIPT >= 0x202
/*
 * --resync-on-error: libipt 2.2's pt_insn_resync() (pt_blk_resync() on the block path)
 * instead of a search for the next PSB, as ptxed does it: events it meets on the way are
 * reported, and "[disabled]" where it resumes with tracing off.
 */
static int resync(struct dec *x)
{
	int status;

	for (;;) {
		struct pt_event ev;

		note_offset(x);
		status = x->bd ? pt_blk_resync(x->bd) : pt_insn_resync(x->d);
		if (status >= 0)
			break;
		if (status != -pte_event_ignored)
			return status;
		status = x->bd ? pt_blk_event(x->bd, &ev, sizeof(ev)) :
				 pt_insn_event(x->d, &ev, sizeof(ev));
		if (status < 0)
			return status;
		on_event(x, &ev);
	}
	if ((status & pts_ip_suppressed) && wants(x, RREC_EVENT)) {
		struct pt_event ev;
		struct rrec r;

		memset(&ev, 0, sizeof(ev));
		ev.type = ptev_disabled;
		ev.ip_suppressed = 1;
		rec_init(x, &r, RREC_EVENT);
		r.event = &ev;
		r.offset = file_offset(x, x->at);
		emit(x, &r);
	}
	return status;
}
#endif

static int flow(struct dec *x, int status)
{
	struct pt_insn in;

	memset(&in, 0, sizeof(in));
	in.iclass = ptic_error;
	for (;;) {
		status = x->bd ? flow_blk_once(x, status, &in) : flow_once(x, status, &in);
#if PTC_LIBIPT >= 0x202
		if (status == -pte_eos || !x->cfg->resync_on_error)
			return status;
		status = resync(x);
		if (status < 0) {
			if (status != -pte_eos)
				on_error(x, "resync error", status, &in);
			return status;
		}
#else
		return status;
#endif
	}
}

/* A search for the next PSB over a mapped trace goes in steps of this many bytes. */
#define PSB_STEP (1u << 20)

/*
 * libipt's search for the next PSB keeps every page it reads resident: over a stretch
 * without a PSB (1 GiB of garbage or PAD) the search is done here, in bounded steps,
 * each dropped behind, and the decoder is synchronized at the PSB found. It is the one
 * libipt's search finds (the first from where it starts, at most 15 bytes before the
 * decoder's offset @off): this acts only when there is none in the first 2 MiB.
 */
static int sync_forward(struct dec *x, uint64_t off)
{
	static const uint8_t psb[16] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};
	const uint8_t *base = x->c->pt + x->c->begin;
	size_t len = (size_t)(x->c->end - x->c->begin), from = off >= 15 ? off - 15 : 0;
	size_t at = from, found = len, dropped = (size_t)x->dropped;

	if (!x->c->mapped || from >= len)
		return x->bd ? pt_blk_sync_forward(x->bd) : pt_insn_sync_forward(x->d);
	while (at < len) {
		size_t n = len - at < PSB_STEP + 15 ? len - at : PSB_STEP + 15;
		uint64_t data = file_next_data(x->c->fd, file_offset(x, at));
		const uint8_t *p;

		/* A hole of a sparse file is zeroes, no PSB: passed without a read. */
		if (data > file_offset(x, at) + PSB_STEP) {
			at = data - file_offset(x, 0) < len ? (size_t)(data - file_offset(x, 0)) : len;
			continue;
		}
		p = memmem(base + at, n, psb, sizeof(psb));

		if (p) {
			found = (size_t)(p - base);
			break;
		}
		if (n < PSB_STEP + 15)
			break;
		at += PSB_STEP;
		if (at > from + PSB_STEP)
			map_drop_behind(base, at, &dropped);
	}
	x->dropped = dropped;
	if (found - from <= 2 * PSB_STEP)
		return x->bd ? pt_blk_sync_forward(x->bd) : pt_insn_sync_forward(x->d);
	if (found >= len)
		return -pte_eos;
	return x->bd ? pt_blk_sync_set(x->bd, found) : pt_insn_sync_set(x->d, found);
}

static void run(struct dec *x, uint64_t from)
{
	uint64_t sync = 0;

	for (;;) {
		int status = !from ? -pte_nosync : x->bd ? pt_blk_sync_set(x->bd, from) :
			     pt_insn_sync_set(x->d, from);

		if (status < 0)
			status = sync_forward(x, from ? from : offset_now(x));
		from = 0;

		if (status < 0) {
			uint64_t off;

			if (status == -pte_eos)
				break;
			on_error(x, "sync error", status, NULL);
			/* No progress means there never will be: stop (ptxed's rule). */
			off = offset_now(x);
			if (off <= sync)
				break;
			sync = off;
			continue;
		}
		if (flow(x, status) == -pte_eos)
			break;
	}
	flush_pending(x, 0);
}

/* ---- the fast flow path: PSB segments decoded without libipt (fastflow.h) ---- */

/* A fast segment's trace at most: its output waits in the sink until it is known good. */
#define FAST_SEG_MAX (64u << 10)
/* Segments in a row that were not fast before the chunk stops trying. */
#define FAST_MISSES 8
/* Trace decoded by libipt between two fast segments at most (its output is held). */
#define FAST_REGION_MAX (256u << 10)

static struct pt_block_decoder *blk_new(const struct dec *x, uint64_t end);
static struct pt_insn_decoder *insn_new(const struct dec *x, uint64_t end);

/*
 * The instructions of a fast segment up to a taken branch at @from (its kind, @next the
 * address after it), this one counted, to the renderer of runs (report): the last is the
 * branch, as the block path has it (run_flush() gives a call's return address from it).
 */
static void fast_run(struct dec *x, uint64_t n, uint64_t from, uint64_t next, const char *kind)
{
	if (!x->run_rend)
		return;
	x->prev.ip = from;
	x->prev.isid = 0;
	x->prev.size = (uint8_t)(next - from);
	x->prev.iclass = kind[0] == 'c' ? ptic_call : kind[0] == 'r' ? ptic_return :
			 kind[1] == 'c' ? ptic_cond_jump : ptic_jump;	/* "jcc", "jmp" */
	x->run_n += n;
}

/*
 * fast_flow()'s record with what stays the same through a fast segment: its thread, image
 * and time (fastflow_set_timed(): the PSB+'s, said before the segment).
 */
static void fast_flow_start(struct dec *x)
{
	struct rrec *r = &x->frec;

	r->pid = x->pid;
	r->tid = x->tid;
	r->has_time = x->have_time;
	if (x->have_time && (x->tsc != x->frec_tsc || !r->time)) {
		r->time = tsc_time(x->cfg, x->tsc);
		x->frec_tsc = x->tsc;
	}
	if (!x->have_time)
		r->time = 0;
	r->from_name = "";
	r->to_name = "";
	r->names_plain = true;
	r->from_len = 0;
	r->to_len = 0;
	r->img = x->img;
	r->sym_pid = x->thread_known ? x->pid : UINT32_MAX;
	r->from_isid = -1;
	r->to_isid = -1;
}

/*
 * A call or return of a fast segment to the renderer of runs alone (renderer.flow()): the
 * record flow_rec() makes there, the run before it in the same step. (By value, not by a
 * struct fast_ahead: fast_branch() makes one on the stack, and reading its two addresses as
 * one 16-byte load stalled on the stores that had just made it.)
 */
static void fast_flow(struct dec *x, uint64_t from, uint64_t to, uint64_t ninsn,
		      uint64_t next, int from_isid, int to_isid, bool call)
{
	struct rrec *r = &x->frec;
	uint64_t n = x->run_n + ninsn;

	x->prev.ip = from;
	x->prev.isid = 0;
	x->prev.size = (uint8_t)(next - from);
	x->prev.iclass = call ? ptic_call : ptic_return;
	x->run_n = 0;
	fast_flow_start(x);
	r->kind = call ? RREC_CALL : RREC_RETURN;
	r->how = call ? DREC_HOW_CALL : DREC_HOW_RET;
	r->from = from;
	r->to = to;
	r->from_isid = from_isid;
	r->to_isid = to_isid;
	x->run_rend->ops->flow(x->run_rend, r, n, next);
}

/*
 * fastflow's branch function with x->ff_calls (fast_segment()): a call or return, what
 * fast_branch() and fast_flow() make of it, and only what changes from one to the next
 * (fast_flow_start() set the rest): a third of report's time went to the two before.
 */
static void fast_call_ret(void *ctx, uint64_t from, uint64_t to, const char *kind,
			  uint64_t ninsn, uint64_t next)
{
	struct dec *x = ctx;
	struct rrec *r = &x->frec;
	uint64_t n = x->run_n + ninsn;
	bool call = kind[0] == 'c';

	x->ff_told += ninsn;
	x->prev.ip = from;
	x->prev.isid = 0;
	x->prev.size = (uint8_t)(next - from);
	x->prev.iclass = call ? ptic_call : ptic_return;
	x->run_n = 0;
	r->kind = call ? RREC_CALL : RREC_RETURN;
	r->how = call ? DREC_HOW_CALL : DREC_HOW_RET;
	r->from = from;
	r->to = to;
	x->run_rend->ops->flow(x->run_rend, r, n, next);
}

/*
 * A taken branch of a fast segment: the BRANCH record, and for a call or a return the
 * frame's (flow_rec(), as resolve_next() has it) in the sections of the base image, the
 * only image the fast path reads (fastflow.c's code_at()).
 */
static void fast_put(struct dec *x, const struct fast_ahead *a)
{
	bool call = a->kind[0] == 'c', ret = a->kind[0] == 'r';	/* "call", "return" */

	if (x->ff_flow && (call || ret)) {
		fast_flow(x, a->from, a->to, a->ninsn, a->next, a->from_isid, a->to_isid, call);
		return;
	}
	fast_run(x, a->ninsn, a->from, a->next, a->kind);
	branch(x, a->from, a->to, a->kind);
	if (call || ret)
		flow_rec(x, call ? RREC_CALL : RREC_RETURN, call ? DREC_HOW_CALL : DREC_HOW_RET,
			 a->from, a->from_isid, a->to, a->to_isid, NULL);
}

/* The branches fast_branch() holds, handed on (@keep: else dropped with their segment). */
static void fast_drain(struct dec *x, bool keep)
{
	for (; keep && x->ahead_n; x->ahead_n--) {
		fast_put(x, &x->ahead[x->ahead_at]);
		x->ahead_at = (x->ahead_at + 1) % FAST_AHEAD;
	}
	x->ahead_at = x->ahead_n = 0;
}

static void fast_branch(void *ctx, uint64_t from, uint64_t to, const char *kind,
			uint64_t ninsn, uint64_t next)
{
	struct dec *x = ctx;
	uint32_t pid = x->thread_known ? x->pid : UINT32_MAX;
	struct fast_ahead *a;
	uint64_t end;

	x->ff_told += ninsn;
	if (!(x->wants & (RREC_BIT(RREC_CALL) | RREC_BIT(RREC_RETURN)))) {
		fast_run(x, ninsn, from, next, kind);
		branch(x, from, to, kind);
		return;
	}
	/* No names to read ahead (report): each in turn; a jump is a record only to --branches. */
	if (!(x->flags & RENDER_NAMES)) {
		struct fast_ahead now;

		if (kind[0] != 'c' && kind[0] != 'r') {
			if (wants(x, RREC_BRANCH))
				fast_run(x, ninsn, from, next, kind);
			else if (x->run_rend)
				x->run_n += ninsn;
			branch(x, from, to, kind);
			return;
		}
		if (x->ff_flow) {
			/* renderer.flow() looks up the sections of the addresses it does not know. */
			fast_flow(x, from, to, ninsn, next, -1, -1, kind[0] == 'c');
			return;
		}
		now.from = from;
		now.to = to;
		now.kind = kind;
		now.ninsn = ninsn;
		now.next = next;
		now.from_isid = image_base_find(x->img, from, &end);
		now.to_isid = image_base_find(x->img, to, &end);
		fast_put(x, &now);
		return;
	}
	/* --calls: a jump makes no record; queued, it cost two section look-ups each. */
	if (kind[0] != 'c' && kind[0] != 'r' && !wants(x, RREC_BRANCH))
		return;
	if (x->ahead_n == FAST_AHEAD) {
		fast_put(x, &x->ahead[x->ahead_at]);
		x->ahead_at = (x->ahead_at + 1) % FAST_AHEAD;
		x->ahead_n--;
	}
	a = &x->ahead[(x->ahead_at + x->ahead_n++) % FAST_AHEAD];
	a->from = from;
	a->to = to;
	a->kind = kind;
	a->ninsn = ninsn;
	a->next = next;
	a->from_isid = image_base_find(x->img, from, &end);
	a->to_isid = image_base_find(x->img, to, &end);
	if (x->names && (x->flags & RENDER_NAMES) && (kind[0] == 'c' || kind[0] == 'r')) {
		const struct symname *f = &x->names[sym_slot(pid, a->from_isid, from)];
		const struct symname *t = &x->names[sym_slot(pid, a->to_isid, to)];

		__builtin_prefetch(f);
		__builtin_prefetch(f + 1);
		__builtin_prefetch(t);
		__builtin_prefetch(t + 1);
	}
}

/*
 * --insn on the fast path: a block's lines from the run's shared table (x->lines) or
 * x->iblk, made on a miss with the renderer's insn_text() (the instruction path's lines,
 * byte for byte) and kept: in the shared table while it has room, else in x->iblk; a block
 * seen before costs one copy. x->iblk is emptied with the block table (insnblk.h).
 */
static const char *fast_insn_text(struct dec *x, uint64_t ip, unsigned n, size_t *len)
{
	struct render *r = x->insn_rend;
	struct pt_insn in[FASTFLOW_BLOCK_INSNS];
	char *dst, *p;

	_Static_assert(FASTFLOW_BLOCK_INSNS * RENDER_INSN_ROOM <= INSNBLK_TEXT_MAX,
		       "a block's lines fit insnblk's room");
	if (n > FASTFLOW_BLOCK_INSNS || fastflow_insns(x->ff, ip, n, in) != n)
		return NULL;
	dst = p = insnblk_room(x->iblk, n * RENDER_INSN_ROOM);
	for (unsigned i = 0; i < n; i++)
		p += r->ops->insn_text(r, &in[i], 0, 0, p);
	*len = (size_t)(p - dst);
	/* (Kept in the shared table, the room is still this text's until the next call.) */
	if (!x->lines || !insnblk_shared_add(x->lines, ip, n, dst, *len))
		insnblk_keep(x->iblk, ip, n, *len);
	return dst;
}

static void fast_insn(void *ctx, uint64_t ip, unsigned n)
{
	struct dec *x = ctx;
	struct dsink *sink = x->insn_rend->sink;
	const char *t;
	uint8_t *p;
	size_t len;

	t = x->lines ? insnblk_shared_find(x->lines, ip, n, &len) : NULL;
	if (!t) {
		if (fastflow_epoch(x->ff) != x->iblk_epoch) {
			insnblk_clear(x->iblk);
			x->iblk_epoch = fastflow_epoch(x->ff);
		}
		t = insnblk_find(x->iblk, ip, n, &len);
	}
	if (!t)
		t = fast_insn_text(x, ip, n, &len);
	/* (fastflow read the same code to cut the block: it cannot fail to read it now.) */
	p = t ? dsink_room(sink, len) : NULL;
	if (!p) {
		sink->err = t ? -ENOMEM : -EIO;
		return;
	}
	memcpy(p, t, len);
	dsink_commit(sink, len);
}

/*
 * Trace from @from to @to with libipt, as a chunk of its own: @final, the rest of this
 * chunk; else ending where the next PSB+'s FUP (@ip) is, as the chunk before a seam does.
 * Returns whether it ended as the decoder of the whole chunk would have been there: at that
 * FUP's instruction, no error on the way (else the caller takes it back).
 */
static bool fast_region(struct dec *x, uint64_t from, uint64_t to, bool final, uint64_t ip)
{
	struct decode_chunk *c = x->c;
	bool last = c->last, have = c->have_next_ip, clean;
	uint64_t next_ip = c->next_ip, errors = c->stats.errors, overflows = c->stats.overflows;
	size_t ndiag = c->nr_diags, more = c->more_diags;

	if (x->bd) {
		struct pt_block_decoder *bd = blk_new(x, c->begin + to);

		if (!bd)
			return false;
		pt_blk_free_decoder(x->bd);
		x->bd = bd;
	} else {
		struct pt_insn_decoder *d = insn_new(x, c->begin + to);	/* --insn */

		if (!d)
			return false;
		pt_insn_free_decoder(x->d);
		x->d = d;
	}
	if (!final) {
		c->last = false;
		c->have_next_ip = true;
		c->next_ip = ip;
	}
	/* What a new chunk's decoder starts with. */
	x->have_prev = false;
	x->mark.valid = false;
	x->pend.valid = false;
	x->async_kind = NULL;
	x->since_check = 0;
	x->stall_off = 0;
	x->stall_insns = 0;
	x->flow_ip = 0;
	run(x, from);
	/*
	 * What follows the mark is the next segment's (trim()): only what is before counts.
	 * The whole chunk's decoder would check the next PSB+ against its state: a fast
	 * segment is 64-bit code, so must the code before it be.
	 */
	clean = x->mark.valid && x->mark.mode == ptem_64bit;
	if (!final) {
		trim(x);
		clean = clean && c->stats.errors == errors && c->stats.overflows == overflows &&
			c->nr_diags == ndiag && c->more_diags == more;
		x->mark.valid = false;
		x->have_prev = false;
		c->last = last;
		c->have_next_ip = have;
		c->next_ip = next_ip;
	}
	return clean;
}

/*
 * The next PSB from @at, before @limit (then: @len): past a hole of a sparse file without
 * reading it, as sync_forward().
 */
static size_t next_psb(struct dec *x, const uint8_t *buf, size_t len, size_t at,
		       size_t limit)
{
	static const uint8_t psb[16] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};
	size_t end = limit < len ? limit : len;
	const uint8_t *p;
	uint64_t off;

	/*
	 * Where the next hole starts is kept: one lseek() a PSB cost -J 2 (the loop of
	 * bench/decode: 7,900 a run, half its system time).
	 */
	if (x->c->mapped && at < end &&
	    ((off = file_offset(x, at)) < x->data_lo || off >= x->data_hi)) {
		if (file_next_data(x->c->fd, off) > off)
			return len;	/* a hole: libipt's search passes it */
		x->data_lo = off;
		x->data_hi = file_next_hole(x->c->fd, off);
	}
	p = at < end ? memmem(buf + at, end - at, psb, sizeof(psb)) : NULL;
	return p ? (size_t)(p - buf) : len;
}

/* What the chunk's sinks and counts were, to take back a cut that was not one. */
struct fast_snap {
	uint64_t out, tl;
	struct decode_stats stats;
	size_t ndiag;
	uint64_t more;
	uint64_t run_n;		/* the instructions not handed over yet, up to prev */
	struct last prev;
	bool have_time;
	uint64_t tsc;
};

static void fast_save(const struct dec *x, struct fast_snap *s)
{
	s->out = dsink_pos(&x->c->out);
	s->tl = dsink_pos(&x->c->tl);
	s->stats = x->c->stats;
	s->ndiag = x->c->nr_diags;
	s->more = x->c->more_diags;
	s->run_n = x->run_n;
	s->prev = x->prev;
	s->have_time = x->have_time;
	s->tsc = x->tsc;
}

static void fast_restore(struct dec *x, const struct fast_snap *s)
{
	dsink_truncate(&x->c->out, s->out);
	dsink_truncate(&x->c->tl, s->tl);
	x->c->stats = s->stats;
	x->c->nr_diags = s->ndiag;
	x->c->more_diags = s->more;
	x->run_n = s->run_n;
	x->prev = s->prev;
	x->have_time = s->have_time;
	x->tsc = s->tsc;
	renders_forget(x);
}

/*
 * The chunk's last segment as the stream's one decoder (-J 1) sees it, into @view (a
 * FAST_SEG_MAX buffer): from its PSB at @at through the next chunk's PSB+ and what follows
 * it, FAST_SEG_MAX bytes or up to the stream's end, as run_fast() gives fastflow_segment()
 * in a chunk that runs on. The part past the chunk is read from the file (a neighbour's
 * pages may be guarded: guard_begin()). Returns its length, 0: not read.
 */
static size_t seam_view(const struct dec *x, size_t at, uint8_t *view)
{
	const struct decode_chunk *c = x->c;
	size_t len = (size_t)(c->end - c->begin), want = FAST_SEG_MAX, got;

	if (c->last || !c->len || c->len <= c->end || len - at >= FAST_SEG_MAX)
		return 0;
	if (want > c->len - c->begin - at)
		want = (size_t)(c->len - c->begin - at);
	got = len - at;
	memcpy(view, c->pt + c->begin + at, got);
	if (!c->mapped) {
		memcpy(view + got, c->pt + c->end, want - got);
		return want;
	}
	if (c->fd < 0)
		return 0;
	while (got < want) {
		ssize_t n = pread(c->fd, view + got, want - got, (off_t)file_offset(x, got + at));

		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	return want;
}

/*
 * One fast segment from the PSB at @at, its end in @next. The chunk's last is decoded over
 * seam_view() (then it must end at the chunk's end, the next chunk's PSB): fastflow reads
 * the same bytes as in a chunk that runs on, so what it says is what the stream's one
 * decoder says there, and a segment ends as a chunk does (fastflow.h). libipt took that
 * segment before: 20 times fastflow's cost, each chunk.
 */
static bool fast_segment(struct dec *x, const uint8_t *buf, size_t len, size_t at, bool want,
			 size_t *next)
{
	fastflow_branch_fn *fn = !want ? NULL : x->ff_calls ? fast_call_ret : fast_branch;
	size_t n;

	if (fn == fast_call_ret)
		fast_flow_start(x);

	if (len - at < FAST_SEG_MAX && !x->c->last && next_psb(x, buf, len, at + 1, len) == len) {
		if (!x->seam)
			x->seam = malloc(FAST_SEG_MAX);
		n = x->seam ? seam_view(x, at, x->seam) : 0;
		if (n) {
			if (!fastflow_segment(x->ff, x->seam, n, 0, &x->c->stats, fn, x, next))
				return false;
			*next += at;
			return *next == len;
		}
	}
	return fastflow_segment(x->ff, buf, len < at + FAST_SEG_MAX ? len : at + FAST_SEG_MAX,
				at, &x->c->stats, fn, x, next);
}

/*
 * The chunk segment by segment: each PSB segment that fastflow decodes (its last through
 * the next chunk's PSB+: fast_segment()), the others with libipt between, as chunks of
 * their own would be.
 * Such a cut is kept only where libipt's decoder of the whole chunk would have been at the
 * same place with nothing else to say: the libipt stretch before it ended at the next
 * PSB+'s FUP instruction with no error; else it is taken back and the stretch goes on to
 * the next PSB. What could be taken back is held in the sinks (FAST_REGION_MAX bounds it).
 */
static void run_fast(struct dec *x)
{
	struct decode_chunk *c = x->c;
	const uint8_t *buf = c->pt + c->begin;
	size_t len = (size_t)(c->end - c->begin), from = 0, next;
	size_t at = next_psb(x, buf, len, 0, FAST_REGION_MAX + 16);
	bool want = x->wants & (RREC_BIT(RREC_BRANCH) | RREC_BIT(RREC_CALL) |
				RREC_BIT(RREC_RETURN));
	unsigned misses = 0;

	while (at < len && misses < FAST_MISSES && at - from <= FAST_REGION_MAX) {
		struct fast_snap before, after;
		uint64_t ip;

		if (!fastflow_start(x->ff, buf, len, at, &ip)) {
			misses++;
			at = next_psb(x, buf, len, at + 1, from + FAST_REGION_MAX + 16);
			continue;
		}
		fast_save(x, &before);
		x->hold = true;
		x->hold_out = before.out;
		x->hold_tl = before.tl;
		if (from < at && !fast_region(x, from, at, false, ip)) {
			/* Not where the whole chunk's decoder would be: no cut here. */
			fast_restore(x, &before);
			misses++;
			at = next_psb(x, buf, len, at + 1, from + FAST_REGION_MAX + 16);
			continue;
		}
		fast_save(x, &after);
		x->ff_told = 0;
		/* The time libipt has there: the PSB+'s TSC (its events'), else the one before. */
		if ((x->flags & RENDER_TIME) && fastflow_tsc(buf, len, at, &x->tsc))
			x->have_time = true;
		if (fast_segment(x, buf, len, at, want, &next)) {
			c->stats.fast++;
			fast_drain(x, true);
			/* The instructions after its last branch, up to the next PSB+'s FUP. */
			if (x->run_rend)
				x->run_n += c->stats.insns - after.stats.insns - x->ff_told;
			from = at = next;
			misses = 0;
			x->hold = false;
			maybe_flush(x);
			if (at - x->progress_off >= PSB_STEP) {
				if (c->progress)
					__atomic_fetch_add(c->progress, at - x->progress_off,
							   __ATOMIC_RELAXED);
				x->progress_off = at;
				drop_behind(x, at, KEEP_BEHIND);
			}
			continue;
		}
		/* Not fast: libipt decodes it from this PSB on, nothing of the try stays. */
		fast_drain(x, false);
		fast_restore(x, &after);
		from = at;
		misses++;
		at = next_psb(x, buf, len, at + 1, from + FAST_REGION_MAX + 16);
	}
	x->hold = false;
	/* A last segment decoded fast leaves nothing (the next chunk starts at its end). */
	if (from < len || c->last)
		fast_region(x, from, len, true, 0);
}

/*
 * libipt's errata (struct pt_errata, libipt 2.0 to 2.2) against the fast path: the packets
 * fastflow takes are a PSB+ (PSB, PSBEND, FUP, MODE.Exec, MODE.TSX, CBR, PIP, VMCS, timing,
 * PAD), then TNT, TIP and timing packets up to the next PSB. Where each workaround acts:
 *  - SKL014 (pt_blk_proceed_skl014): a TIP.PGD without IP, and only with address filters.
 *    Neither is taken (TIP.PGD says "not fast"; filters keep the fast path off): cannot apply.
 *  - SKD022 (pt_blk_handle_erratum_skd022): an async disable, FUP then TIP.PGD: not taken.
 *  - SKD010, APL11, APL12 (pt_evt_decode_ovf): what follows an OVF: an OVF is not taken.
 *  - SKL168 (pt_tcal_update_mtc): which MTCs calibrate the CYC time; it returns early, never
 *    an error, so only times change, and no mode that takes this path prints one.
 *  - SKZ84 (pt_pkt_decode_tma): a TMA with reserved bits is skipped as 8 bytes instead of an
 *    error: fastflow says "not fast" for such a TMA, with or without the erratum; with it,
 *    FF_E_SKZ84 also makes no cut before a segment that may hold one (the packets after it
 *    are read askew, and a decoder from the cut may err otherwise than one through it).
 *  - BDM64 (pt_blk_handle_erratum_bdm64): an aborted TSX event may move the branch before
 *    it; only a MODE.TSX with TXAbort in a PSB+ reaches fastflow: FF_E_BDM64 refuses it.
 *  - SKD007 (pt_pkt_handle_skd007): a 2-byte CYC whose second byte is 0x02 before an 0xf3
 *    is read as an OVF; fastflow would read two CYCs: FF_E_SKD007 refuses it, and makes no
 *    cut before a segment that may hold one (as SKZ84's, below).
 *  - BDM70 (pt_evt_check_bdm70): a PSB+ whose first later packet other than timing, PAD,
 *    CBR, PIP, MODE, VMCS, MNT is a TIP.PGE is tracing off: FF_E_BDM70 refuses such a PSB+,
 *    at a segment's start and at its end (where the segment before stops), and run_fast()
 *    makes no cut there.
 * Bits of the struct this libipt does not name (its reserved words: a later libipt's
 * errata) keep the fast path off. Timing packets: fastflow.c's skip_size().
 */
static bool fastflow_errata(const struct pt_errata *e, unsigned *ff)
{
	static const uint32_t none[sizeof(e->reserved) / sizeof(e->reserved[0])];

	if (memcmp(e->reserved, none, sizeof(none)))
		return false;
	*ff = (e->bdm70 ? FF_E_BDM70 : 0) | (e->bdm64 ? FF_E_BDM64 : 0) |
	      (e->skd007 ? FF_E_SKD007 : 0) | (e->skz84 ? FF_E_SKZ84 : 0);
	return true;
}

/* Whether the fast path may decode this chunk's segments: what it cannot show is not asked. */
static bool fast_ok(const struct dec *x, const struct pt_config *pc, unsigned *errata)
{
	const struct decode_config *cfg = x->cfg;

	/* (Without sideband, no RREC_THREAD comes: fast or not.) */
	if (cfg->no_fast || x->sb || !x->bd || cfg->stall_limit || cfg->event_tick ||
	    cfg->event_iflags || (x->wants & RREC_BIT(RREC_INSN)))
		return false;
	/*
	 * Time (report, the timeline): a fast segment does not follow it. Only where libipt's
	 * would not move either (fastflow_set_timed(): the PSB+'s TSC at most), and only for a
	 * renderer that counts instructions in runs (report; the timeline's frames are not).
	 */
	for (size_t i = 0; i < x->nr_rend; i++)
		if ((x->rend[i].ops->flags & RENDER_TIME) && !x->rend[i].ops->insns)
			return false;
	/*
	 * Calls and returns (--calls): not where they are shown with their time (JSON; a fast
	 * segment has no time of its own to give them).
	 */
	for (size_t i = 0; i < x->nr_rend; i++)
		if (x->rend[i].ops->json &&
		    (x->rend[i].ops->wants & (RREC_BIT(RREC_CALL) | RREC_BIT(RREC_RETURN))))
			return false;
	if (pc->addr_filter.config.addr_cfg || !fastflow_errata(&pc->errata, errata))
		return false;
	/*
	 * MTC and CYC are errors to libipt only through pt_time_ctc_delta(), which cannot fail
	 * while a CTC fits the MTCFreq field's range (4 bits, as IA32_RTIT_CTL has it).
	 */
	return pc->mtc_freq <= 15;
}

/*
 * Whether --insn may take the fast path: the one renderer prints lines that insn_text()
 * makes, with no offset, time or tick in them, and nothing else is asked for; the trace's
 * terms as fast_ok()'s.
 */
static bool fast_insn_ok(const struct dec *x, const struct pt_config *pc, unsigned *errata)
{
	const struct decode_config *cfg = x->cfg;
	const unsigned shown = RREC_BIT(RREC_INSN) | RREC_BIT(RREC_STREAM) | RREC_BIT(RREC_EVENT) |
			       RREC_BIT(RREC_EOT) | RREC_BIT(RREC_ERROR);

	if (cfg->no_fast || cfg->insn_path || x->sb || !x->d || x->nr_rend != 1 ||
	    !x->insn_rend || !x->insn_rend->ops->insn_text || x->run_rend ||
	    cfg->show_offset || cfg->show_time || cfg->stall_limit || cfg->event_tick ||
	    cfg->event_iflags || (x->flags & RENDER_TIME) || (x->wants & ~shown))
		return false;
	if (pc->addr_filter.config.addr_cfg || !fastflow_errata(&pc->errata, errata))
		return false;
	return pc->mtc_freq <= 15;	/* as fast_ok() */
}

/* ---- setup ---- */

static void on_sb_diag(void *ctx, const struct dsb_diag *d)
{
	struct dec *x = ctx;
	struct decode_chunk *c = x->c;
	enum decode_diag_kind kind = d->kind == DSB_ERROR ? DECODE_DIAG_SB_ERROR :
				     DECODE_DIAG_WARNING;

	/* Each chunk replays the sideband before it; a record is reported by one chunk. */
	if ((!c->first && d->tsc <= c->tsc_lo) || (!c->last && d->tsc > c->tsc_hi))
		return;
	add_diag(x, kind, d->file->path, d->offset, false, 0, d->msg);
	if (d->kind == DSB_LOSS) {
		c->stats.lost++;
		if (wants(x, RREC_GAP)) {
			bool had = x->have_time;
			uint64_t tsc = x->tsc;

			/* The gap starts when the record says the trace was lost. */
			x->tsc = d->tsc;
			x->have_time = true;
			gap(x, d->msg);
			x->tsc = tsc;
			x->have_time = had;
		} else {
			c->stats.gaps++;
		}
	}
}

static void setup_config(const struct dec *x, struct pt_config *pc)
{
	const struct decode_config *cfg = x->cfg;

	pt_config_init(pc);
	pc->begin = (uint8_t *)(x->c->pt + x->c->begin);
	pc->end = (uint8_t *)(x->c->pt + x->c->end);
	pc->cpu = cfg->cpu;
	pc->mtc_freq = cfg->mtc_freq;
	pc->nom_freq = cfg->nom_freq;
	pc->cpuid_0x15_eax = cfg->cpuid_0x15_eax;
	pc->cpuid_0x15_ebx = cfg->cpuid_0x15_ebx;
	pc->addr_filter = cfg->addr_filter;
	pc->flags.variant.insn.enable_tick_events = cfg->event_tick;
#if PTC_LIBIPT >= 0x201
	pc->flags.variant.insn.enable_iflags_events = cfg->event_iflags;
	pc->flags.variant.insn.keep_tcal_on_ovf = cfg->keep_tcal_on_ovf;
#endif
	/* A CPU libipt does not know has no errata to work around (ptxed goes on too). */
	if (cfg->cpu.vendor && pt_cpu_errata(&pc->errata, &pc->cpu) < 0)
		memset(&pc->errata, 0, sizeof(pc->errata));
}

/* The files given by hand, into @img: what every chunk's decoder starts with. */
static int load_files(const struct decode_config *cfg, struct image_store *img, struct error *e)
{
	size_t i;
	int ret;

	for (i = 0; i < cfg->nr_kcore; i++) {
		const struct decode_file *f = &cfg->kcore[i];

		if (f->raw)
			ret = image_add_raw(img, image_kernel(img), f->path, f->from, f->size,
					    f->addr, e);
		else
			ret = image_add_kcore(img, f->path, f->base, f->has_base, e);
		if (ret < 0) {
			err_what(e, "--pevent:kcore");
			return ret;
		}
	}
	for (i = 0; i < cfg->nr_files; i++) {
		const struct decode_file *f = &cfg->files[i];

		if (f->raw)
			ret = image_add_raw(img, NULL, f->path, f->from, f->size, f->addr, e);
		else
			ret = image_add_elf(img, NULL, f->path, f->base, f->has_base, e);
		if (ret < 0) {
			err_what(e, f->raw ? "--raw" : "--elf");
			return ret;
		}
	}
	return 0;
}

int decode_check_files(const struct decode_config *cfg, struct error *e)
{
	struct image_store *img;
	int ret = image_store_new(&img, NULL, e);

	if (!ret)
		ret = load_files(cfg, img, e);
	image_store_free(img);
	return ret;
}

static int setup_image(struct dec *x, struct error *e)
{
	int ret = image_store_new(&x->img, x->c->syms, e);

	return ret ? ret : load_files(x->cfg, x->img, e);
}

/* A block decoder for the chunk's trace up to @end, on the base image (NULL: no memory). */
static struct pt_block_decoder *blk_new(const struct dec *x, uint64_t end)
{
	const struct decode_config *cfg = x->cfg;
	struct pt_block_decoder *bd;
	struct pt_config pc;

	setup_config(x, &pc);
	pc.end = (uint8_t *)(x->c->pt + end);
	/*
	 * Each block ends at its one branch: the instructions before it are not branches.
	 * The block decoder's flags are not laid out as the instruction decoder's.
	 */
	memset(&pc.flags, 0, sizeof(pc.flags));
	pc.flags.variant.block.end_on_call = 1;
	pc.flags.variant.block.end_on_jump = 1;
	pc.flags.variant.block.enable_tick_events = cfg->event_tick;
#if PTC_LIBIPT >= 0x201
	pc.flags.variant.block.enable_iflags_events = cfg->event_iflags;
	pc.flags.variant.block.keep_tcal_on_ovf = cfg->keep_tcal_on_ovf;
#endif
	bd = pt_blk_alloc_decoder(&pc);
	if (bd && x->img && pt_blk_set_image(bd, image_base(x->img)) < 0) {
		pt_blk_free_decoder(bd);
		return NULL;
	}
	return bd;
}

/* An instruction decoder for the chunk's trace up to @end, on the base image (NULL: no memory). */
static struct pt_insn_decoder *insn_new(const struct dec *x, uint64_t end)
{
	struct pt_insn_decoder *d;
	struct pt_config pc;

	setup_config(x, &pc);
	pc.end = (uint8_t *)(x->c->pt + end);
	d = pt_insn_alloc_decoder(&pc);
	if (d && x->img && pt_insn_set_image(d, image_base(x->img)) < 0) {
		pt_insn_free_decoder(d);
		return NULL;
	}
	return d;
}

void decode_cache_bound(enum decode_cache_id id, struct decode_cache *c)
{
	switch (id) {
	case DECODE_CACHE_BLOCKS:
		*c = (struct decode_cache){ "blocks", "fast path blocks", FASTFLOW_BLOCKS,
					    (uint64_t)FASTFLOW_BLOCKS * FASTFLOW_BLOCK_BYTES };
		break;
	case DECODE_CACHE_NAMES:
		*c = (struct decode_cache){ "names", "call and return names", 1u << NAMES_BITS,
					    (uint64_t)sizeof(struct symname) << NAMES_BITS };
		break;
	case DECODE_CACHE_SHAPES:
		*c = (struct decode_cache){ "shapes", "block path instructions", 1u << SHAPE_BITS,
					    sizeof(struct shapes) };
		break;
	case DECODE_CACHE_LINES:
		*c = (struct decode_cache){ "insn_blocks", "block lines (--insn)", INSNBLK_ENTRIES,
					    INSNBLK_BYTES };
		break;
	default:
		*c = (struct decode_cache){ "insn_text", "instruction text (--insn)",
					    disasm_bound_entries(), disasm_bound_bytes() };
		break;
	}
}

/* The caches' use as the chunk ends (kept ones: from the thread's earlier chunks too). */
static void cache_use(struct dec *x)
{
	uint64_t *u = x->c->stats.cache_used;

	if (x->ff)
		u[DECODE_CACHE_BLOCKS] = fastflow_blocks_used(x->ff);
	u[DECODE_CACHE_NAMES] = x->names_used;
	if (x->shapes)
		u[DECODE_CACHE_SHAPES] = x->shapes->used;
	if (x->dis)
		u[DECODE_CACHE_TEXT] = disasm_used(x->dis);
	if (x->iblk)
		u[DECODE_CACHE_LINES] = insnblk_used(x->iblk);
	if (x->lines && insnblk_shared_used(x->lines) > u[DECODE_CACHE_LINES])
		u[DECODE_CACHE_LINES] = insnblk_shared_used(x->lines);
}

/*
 * What a decoder thread keeps from one chunk to its next, while no sideband changes the
 * image: the image of the files given by hand (whose sections hold libipt's block
 * caches), the fast path's blocks, the block path's instructions and the names. Each
 * chunk built them again (the bench's walk: capstone over 20,000 blocks, a chunk of
 * 32 KiB or more each time, -J 2 took twice -J 1's CPU time), and with --insn the lines of
 * the fast path's blocks (the walk's -J 2 took 2.4 times -J 1's). Each is bounded
 * (fastflow.h, SHAPE_BITS, NAMES_BITS, insnblk.h): about 6 MiB a thread beside the files'
 * mappings, 15 MiB with --insn (whose lines go to the run's shared table first, and to
 * iblk only when that is full: until then iblk only lends the room a text is made in).
 */
struct decode_keep {
	struct image_store *img;	/* NULL: nothing kept */
	struct fastflow *ff;
	struct insnblk *iblk;		/* --insn: with ff, the lines of its blocks */
	uint64_t iblk_epoch;
	struct shapes *shapes;
	struct symname *names;		/* in names_mem */
	void *names_mem;
	uint32_t names_used;
	csh cs[3];
	/*
	 * --insn's text cache (disasm.h: keyed by address, mode and bytes, so right for any
	 * image): made per chunk, its 8 MiB were zeroed each time (calloc() of memory freed
	 * before: the walk's -J 2 spent 11.7 % of its instructions in memset()).
	 */
	struct disasm *dis;
	uint64_t built;			/* blocks its chunks cut (decode_keep_built()) */
};

void decode_keep_free(struct decode_keep *k)
{
	if (!k)
		return;
	fastflow_free(k->ff);
	insnblk_free(k->iblk);
	disasm_free(k->dis);
	free(k->shapes);
	free(k->names_mem);
	for (int i = 0; i < 3; i++)
		if (k->cs[i])
			cs_close(&k->cs[i]);
	image_store_free(k->img);
	free(k);
}

uint64_t decode_keep_built(const struct decode_keep *k)
{
	return k ? k->built : 0;
}

/* The kept image and caches lent to the chunk (not the fast path's: setup's); false: none. */
static bool borrow(struct dec *x)
{
	struct decode_keep *k = x->keep;

	if (!k || !k->img)
		return false;
	x->img = k->img;
	x->shapes = k->shapes;
	x->names = k->names;
	x->names_mem = k->names_mem;
	x->names_used = k->names_used;
	memcpy(x->cs, k->cs, sizeof(x->cs));
	k->img = NULL;
	k->shapes = NULL;
	k->names = NULL;
	k->names_mem = NULL;
	k->names_used = 0;
	memset(k->cs, 0, sizeof(k->cs));
	return true;
}

/* Back to the thread after a chunk that went well; after any other, all is let go of. */
static void give_back(struct dec *x)
{
	struct decode_keep *k = x->keep;

	if (!k)
		return;
	if (x->c->ret || !x->img) {
		fastflow_free(k->ff);
		k->ff = NULL;
		return;
	}
	k->img = x->img;
	k->shapes = x->shapes;
	k->names = x->names;
	k->names_mem = x->names_mem;
	k->names_used = x->names_used;
	memcpy(k->cs, x->cs, sizeof(k->cs));
	if (x->ff) {
		k->built += fastflow_built(x->ff) - x->ff_built;
		fastflow_set_insn(x->ff, NULL, NULL);	/* (its context was this chunk) */
		k->ff = x->ff;
		k->iblk = x->iblk;
		k->iblk_epoch = x->iblk_epoch;
		x->iblk = NULL;
	}
	x->img = NULL;
	x->shapes = NULL;
	x->names = NULL;
	x->names_mem = NULL;
	x->ff = NULL;
	memset(x->cs, 0, sizeof(x->cs));
}

/* --insn's fast path, where fast_insn_ok() lets it run (and there is memory for it). */
static void setup_fast_insn(struct dec *x, const struct pt_config *pc)
{
	unsigned errata = 0;

	if (!fast_insn_ok(x, pc, &errata))
		return;
	/* The thread's from its chunk before: the blocks, and their lines with them. */
	if (x->keep && x->keep->ff && x->keep->iblk) {
		x->iblk = x->keep->iblk;
		x->iblk_epoch = x->keep->iblk_epoch;
		x->keep->iblk = NULL;
	} else {
		x->iblk = insnblk_new();
		if (!x->iblk)
			return;
	}
	if (x->keep && x->keep->ff) {
		x->ff = x->keep->ff;
		x->keep->ff = NULL;
	} else {
		x->ff = fastflow_new(x->img);
		if (!x->ff)
			return;
		fastflow_share(x->ff, x->c->blocks);
		x->iblk_epoch = fastflow_epoch(x->ff);
	}
	fastflow_set_errata(x->ff, errata);
	x->ff_calls = false;
	fastflow_set_calls_only(x->ff, false);
	fastflow_set_insn(x->ff, fast_insn, x);
	x->ff_built = fastflow_built(x->ff);
	x->lines = x->c->lines;
}

static int setup(struct dec *x, struct error *e)
{
	const struct decode_config *cfg = x->cfg;
	const struct decode_stream *st = &cfg->streams[x->c->stream];
	struct pt_config pc;
	unsigned errata = 0;
	int ret;

	setup_config(x, &pc);
	if (!borrow(x)) {
		ret = setup_image(x, e);
		if (ret)
			return ret;
	}
	if (st->nr_sb) {
		ret = dsb_new(&x->sb, x->img, st->sb, st->nr_sb, on_sb_diag, x, e);
		if (ret)
			return ret;
	}
	if (x->flags & RENDER_DISASM) {
		if (x->keep && x->keep->dis) {
			x->dis = x->keep->dis;
			x->keep->dis = NULL;
		} else {
			ret = disasm_new(&x->dis, cfg->att, e);
			if (ret)
				return ret;
		}
		for (size_t i = 0; i < x->nr_rend; i++)
			x->rend[i].dis = x->dis;
	}
	if (!x->insn_rend && !cfg->insn_path) {
		x->bd = blk_new(x, x->c->end);
		if (!x->shapes)
			x->shapes = calloc(1, sizeof(*x->shapes));
		if (!x->bd || !x->shapes)
			return err_runtime(e, -ENOMEM, "%s: libipt could not make a decoder",
					   st->name);
		ret = pt_blk_set_image(x->bd, image_base(x->img));
		if (ret < 0)
			return err_runtime(e, -EINVAL, "%s: %s", st->name,
					   pt_errstr(pt_errcode(ret)));
		if (fast_ok(x, &pc, &errata)) {
			if (x->keep && x->keep->ff) {
				x->ff = x->keep->ff;
				x->keep->ff = NULL;
			} else {
				x->ff = fastflow_new(x->img);
				if (x->ff)
					fastflow_share(x->ff, x->c->blocks);
			}
			if (x->ff) {
				fastflow_set_errata(x->ff, errata);
				fastflow_set_timed(x->ff, x->flags & RENDER_TIME);
				x->ff_flow = x->nr_rend == 1 && x->run_rend &&
					     x->run_rend->ops->flow && !wants(x, RREC_BRANCH);
				/*
				 * fast_branch() gives a jump's instructions to the next call's
				 * run and does nothing else with it (branch() makes no record):
				 * fastflow leaves them to the next call or return (ff_told).
				 */
				x->ff_calls = x->ff_flow && !(x->flags & RENDER_NAMES) &&
					      (x->wants & (RREC_BIT(RREC_CALL) |
							   RREC_BIT(RREC_RETURN)));
				fastflow_set_calls_only(x->ff, x->ff_calls);
				fastflow_set_insn(x->ff, NULL, NULL);
			}
		}
		if (x->ff)
			x->ff_built = fastflow_built(x->ff);
		return 0;
	}
	x->d = pt_insn_alloc_decoder(&pc);
	if (!x->d)
		return err_runtime(e, -ENOMEM, "%s: libipt could not make a decoder", st->name);
	ret = pt_insn_set_image(x->d, image_base(x->img));
	if (ret < 0)
		return err_runtime(e, -EINVAL, "%s: %s", st->name, pt_errstr(pt_errcode(ret)));
	setup_fast_insn(x, &pc);
	return 0;
}

static void teardown(struct dec *x)
{
	give_back(x);
	pt_insn_free_decoder(x->d);
	pt_blk_free_decoder(x->bd);
	fastflow_free(x->ff);
	insnblk_free(x->iblk);
	free(x->shapes);
	free(x->names_mem);
	for (int i = 0; i < 3; i++)
		if (x->cs[i])
			cs_close(&x->cs[i]);
	free(x->seam);
	/* The text cache goes back to the thread whatever the chunk did (it is by the bytes). */
	if (x->keep && !x->keep->dis) {
		x->keep->dis = x->dis;
		x->dis = NULL;
	}
	disasm_free(x->dis);
	dsb_free(x->sb);
	image_store_free(x->img);
}

static void stream_start(struct dec *x)
{
	struct rrec r;

	if (!wants(x, RREC_STREAM))
		return;
	memset(&r, 0, sizeof(r));
	r.kind = RREC_STREAM;
	r.stream = (uint32_t)x->c->stream;
	r.stream_name = x->cfg->streams[x->c->stream].name;
	emit(x, &r);
}

/* The run's renderers, on the chunk's sinks. */
static void add_render(struct dec *x, enum render_output output, struct dsink *sink)
{
	const struct renderer *rd = render_find(x->cfg, output);
	struct render *r;

	if (!rd || !rd->put)
		return;
	r = &x->rend[x->nr_rend++];
	r->ops = rd;
	r->cfg = x->cfg;
	r->sink = sink;
	x->wants |= rd->wants;
	x->flags |= rd->flags;
	if (rd->wants & RREC_BIT(RREC_INSN))
		x->insn_rend = r;
	if (rd->insns)
		x->run_rend = r;
}

int decode_chunk_kept(struct decode_chunk *c, struct decode_keep **keep)
{
	struct error err;
	struct dec x;

	memset(&x, 0, sizeof(x));
	x.c = c;
	x.cfg = c->cfg;
	/* Sideband changes the image as it goes: such a chunk builds its own. */
	if (keep && !c->cfg->streams[c->stream].nr_sb) {
		if (!*keep)
			*keep = calloc(1, sizeof(**keep));
		x.keep = *keep;
	}
	add_render(&x, RENDER_OUT, &c->out);
	if (c->tl.out)
		add_render(&x, RENDER_TIMELINE, &c->tl);
	err_clear(&err);
	/* A stream's header comes first, even when its decoder cannot start. */
	if (c->first)
		stream_start(&x);
	c->ret = setup(&x, &err);
	if (!c->ret) {
		struct guard g;

		guard_begin(&x, &g);
		if (x.ff)
			run_fast(&x);
		else
			run(&x, 0);
		guard_end(&x, &g);
		if (x.run_n)
			run_flush(&x, false);
		if (!c->last)
			trim(&x);
		/* Sideband due before the next chunk's first event is this chunk's to report. */
		if (x.sb && !c->last)
			dsb_advance(x.sb, c->tsc_hi, &(struct pt_image *){ NULL });
		if (c->last && wants(&x, RREC_END)) {
			struct rrec r;

			update_time(&x);
			rec_init(&x, &r, RREC_END);
			emit(&x, &r);
		}
		if (c->progress && c->end - c->begin > x.progress_off)
			__atomic_fetch_add(c->progress, c->end - c->begin - x.progress_off,
					   __ATOMIC_RELAXED);
		c->stats.bytes = c->end - c->begin;
		cache_use(&x);
		drop_behind(&x, c->end - c->begin, 0);
	}
	teardown(&x);
	if (!c->ret) {
		int a = dsink_flush(&c->out, dsink_pos(&c->out));
		int b = dsink_flush(&c->tl, dsink_pos(&c->tl));

		if (a || b)
			c->ret = err_runtime(&err, a ? a : b, "cannot write the output: %s",
					     strerror(-(a ? a : b)));
	}
	/* A chunk's error is rare and large: kept only when there is one. */
	if (c->ret) {
		c->error = malloc(sizeof(*c->error));
		if (c->error)
			*c->error = err;
	}
	return c->ret;
}

int decode_chunk(struct decode_chunk *c)
{
	return decode_chunk_kept(c, NULL);
}
