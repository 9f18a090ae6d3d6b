/* SPDX-License-Identifier: MIT */
/*
 * dec_records.c: records to the renderers, diagnostics, branches, the seam's mark; with
 * the three helpers both decoding paths call at every branch or block, in line.
 */
#ifndef PTC_DEC_RECORDS_H
#define PTC_DEC_RECORDS_H

#include "dec.h"

void add_diag(struct dec *x, enum decode_diag_kind kind, const char *where, uint64_t offset,
	      bool has_ip, uint64_t ip, const char *msg);
void run_flush(struct dec *x, bool need_next);
void dec_emit(struct dec *x, const struct rrec *rec);
void rec_init(const struct dec *x, struct rrec *r, enum rrec_kind kind);
void maybe_flush(struct dec *x);
void update_time(struct dec *x);
bool is_branch(enum pt_insn_class ic);
const char *branch_kind(const struct last *in);
void flow_rec(struct dec *x, enum rrec_kind rk, enum drec_how how, uint64_t from,
	      int from_isid, uint64_t to, int to_isid, const struct last *at);
void resolve_next(struct dec *x, uint64_t to, int to_isid);
void set_mark(struct dec *x, uint64_t off);
void renders_forget(struct dec *x);
void trim(struct dec *x);

/* @n more instructions, the last x->prev: a far return ends a run (it ends an interrupt). */
static inline void run_add(struct dec *x, unsigned n)
{
	if (!x->run_rend)
		return;
	x->run_n += n;
	if (x->prev.iclass == ptic_far_return)
		run_flush(x, true);
}

static inline void branch(struct dec *x, uint64_t from, uint64_t to, const char *kind)
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
	dec_emit(x, r);
}

/* The pending interrupt frame, its target in section @to_isid (0: not known). */
static inline void flush_pending(struct dec *x, int to_isid)
{
	if (!x->pend.valid)
		return;
	x->pend.valid = false;
	flow_rec(x, RREC_CALL, x->pend.how, x->pend.from, x->pend.from_isid, x->pend.to,
		 to_isid, NULL);
}

#endif
