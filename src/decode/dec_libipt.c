// SPDX-License-Identifier: MIT
/*
 * A chunk (or a stretch between fast segments) through libipt, as ptxed decodes: the
 * instruction decoder for --insn, the block decoder for the other modes, a resync at the
 * next PSB after an error, the stall check, and the decoders made for the chunk's trace.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "csopen.h"
#include "dec_events.h"
#include "dec_guard.h"
#include "dec_libipt.h"
#include "dec_records.h"
#include "dec_shapes.h"
#include "disasm.h"
#include "fileio.h"
#include "iptcaps.h"

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
/*
 * The stream's end (its end-of-trace record made): ptxed stops here. A chunk's end is not
 * one: the instructions up to the first that needs the next chunk's packets are decoded
 * (and trimmed).
 */
static bool stream_end(struct dec *x, int status)
{
	if (!(status & pts_eos) || !x->c->last)
		return false;
	if (!(status & pts_ip_suppressed) && wants(x, RREC_EOT)) {
		struct rrec r;

		rec_init(x, &r, RREC_EOT);
		dec_emit(x, &r);
	}
	return true;
}

static int flow_once(struct dec *x, int status, struct pt_insn *inp)
{
	struct pt_insn in;

	memset(&in, 0, sizeof(in));
	for (;;) {
		status = drain_events(x, status);
		if (status < 0)
			break;
		if (stream_end(x, status))
			return -pte_eos;
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
			if (x->cs[m] || csopen(m == 0 ? CS_MODE_16 : m == 1 ? CS_MODE_32 :
					       CS_MODE_64, &x->cs[m]) == CS_ERR_OK) {
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
 * before it; *@after: the offset after it, or OFF_UNKNOWN where not asked). Returns false
 * when the decoder stalled (an error reported).
 */
static bool on_block(struct dec *x, const struct pt_block *b, int err, uint64_t off0,
		     uint64_t *after)
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

	/* (An empty block may still have read trace: its offset is not known either.) */
	*after = OFF_UNKNOWN;
	if (!n)
		return true;
	x->blk_mode = b->mode;
	block_last_lite(x, b, &last);
	/* flow() checks for a stall after each instruction decoded without error. */
	cnt = last_ok ? n : n - 1;
	/*
	 * The offset after the block, for the seam's mark, asked after every block with a
	 * seam: it is the next block's offset before (flow_blk_once()) unless events come
	 * between, so a block costs one of libipt's offset queries, not one and a half (the
	 * loop's -J 2: next_ip met every few blocks, 21.5 M asks before a block and 10.8 M
	 * after; the queries were 3 % of its samples).
	 */
	if (seam || x->since_check + cnt >= STALL_CHECK) {
		off1 = offset_now(x);
		*after = off1;
	}
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
	uint64_t off0, after = OFF_UNKNOWN;

	x->flow_ip = 0;
	for (;;) {
		if (status & (pts_event_pending | pts_eos)) {
			status = drain_events(x, status);
			after = OFF_UNKNOWN;	/* events read trace */
			if (status < 0)
				break;
			if (stream_end(x, status))
				return -pte_eos;
		}
		note_offset(x);
		/*
		 * The offset before the block is what the instruction decoder had at each of
		 * its instructions but the last: for the seam's mark and the stall check near
		 * its next instruction count (past that, a long block's is the offset after).
		 */
		off0 = OFF_UNKNOWN;
		if ((!x->c->last && x->c->have_next_ip) || x->since_check + 1024 >= STALL_CHECK)
			off0 = after != OFF_UNKNOWN ? after : offset_now(x);
		status = pt_blk_next(x->bd, b, sizeof(*b));
		if (status < 0) {
			struct pt_insn in;

			if (!on_block(x, b, status, off0, &after))
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
		if (!on_block(x, b, status, off0, &after))
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
		dec_emit(x, &r);
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

void dec_run(struct dec *x, uint64_t from)
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

void setup_config(const struct dec *x, struct pt_config *pc)
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

/* A block decoder for the chunk's trace up to @end, on the base image (NULL: no memory). */
struct pt_block_decoder *blk_new(const struct dec *x, uint64_t end)
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
struct pt_insn_decoder *insn_new(const struct dec *x, uint64_t end)
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
