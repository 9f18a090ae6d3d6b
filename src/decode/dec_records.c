// SPDX-License-Identifier: MIT
/*
 * What a chunk hands on: records to the run's renderers (render.h), diagnostics, a taken
 * branch as a BRANCH record and a CALL or RETURN frame, and the mark where the next chunk
 * takes over (what follows it is trimmed). Both decoding paths (dec_libipt.c, dec_fast.c)
 * write through these; the names of addresses come from dec_names.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dec_names.h"
#include "dec_records.h"
#include "dec_shapes.h"

void add_diag(struct dec *x, enum decode_diag_kind kind, const char *where,
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

/*
 * The instructions counted up to the last (x->prev) to the renderer of runs; @need_next:
 * with the address after the last (a call's return address, where tracing resumes after
 * a disable), read from its section where the block decoder did not say its size.
 */
void run_flush(struct dec *x, bool need_next)
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

void dec_emit(struct dec *x, const struct rrec *rec)
{
	/* The instructions before a record come before it. */
	if (x->run_n)
		run_flush(x, rec->kind == RREC_CALL || rec->kind == RREC_EVENT);
	for (size_t i = 0; i < x->nr_rend; i++)
		if (x->rend[i].ops->wants & RREC_BIT(rec->kind))
			x->rend[i].ops->put(&x->rend[i], rec);
}

/* A record of @kind with the thread and time the decoder has. */
void rec_init(const struct dec *x, struct rrec *r, enum rrec_kind kind)
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

void maybe_flush(struct dec *x)
{
	struct decode_chunk *c = x->c;
	uint64_t out = x->mark.valid ? x->mark.out : dsink_pos(&c->out);
	uint64_t tl = x->mark.valid ? x->mark.tl : dsink_pos(&c->tl);

	if (x->hold) {
		out = out < x->hold_out ? out : x->hold_out;
		tl = tl < x->hold_tl ? tl : x->hold_tl;
	}
	if (dsink_due(&c->out, FLUSH_AT))
		dsink_flush(&c->out, out);
	if (dsink_due(&c->tl, FLUSH_AT))
		dsink_flush(&c->tl, tl);
}

void update_time(struct dec *x)
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

bool is_branch(enum pt_insn_class ic)
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
const char *branch_kind(const struct last *in)
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
 * A CALL or RETURN record (a frame opens or closes) from -> to, at the time of the
 * instruction @at (the call or return: libipt's time for it, as ptxed --time prints it),
 * NULL: now (the decoder's last event).
 */
void flow_rec(struct dec *x, enum rrec_kind rk, enum drec_how how, uint64_t from,
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
	dec_emit(x, &r);
}

/* The successor of the last instruction is known: what was it, a branch taken, a call? */
void resolve_next(struct dec *x, uint64_t to, int to_isid)
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

/* ---- trimming at the next chunk's first instruction ---- */

/* The mark at the instruction the decoder is at, @off its trace offset. */
void set_mark(struct dec *x, uint64_t off)
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
void renders_forget(struct dec *x)
{
	for (size_t i = 0; i < x->nr_rend; i++)
		x->rend[i].chunk = 0;
}

/* Drop what the next chunk decodes too: everything from its first instruction on. */
void trim(struct dec *x)
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
