// SPDX-License-Identifier: MIT
/*
 * What libipt says besides instructions: its events (the sideband's view of them, the
 * branches they are: tracing on and off, interrupts, overflows), its errors at ptxed's IP,
 * and the gaps both leave, as records.
 */
#include <stdio.h>
#include <string.h>

#include "dec_events.h"
#include "dec_records.h"
#include "iptcaps.h"

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

/* ---- events ---- */

/* Losses: the timeline shows a gap, never time spent in the function it was in. */
void dec_gap(struct dec *x, const char *why)
{
	struct rrec r;

	x->c->stats.gaps++;
	if (!wants(x, RREC_GAP))
		return;
	rec_init(x, &r, RREC_GAP);
	r.name = why;
	dec_emit(x, &r);
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
		dec_gap(x, "overflow: the CPU dropped trace");
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
		dec_emit(x, &r);
	}
}

void on_event(struct dec *x, const struct pt_event *ev)
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
	dec_emit(x, &r);
}

/* ---- errors ---- */

/* The target of a direct branch (rel8/rel16/rel32), for where ptxed reports an error. */
bool direct_target(const struct pt_insn *in, uint64_t *to)
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
uint64_t error_ip(const struct pt_insn *in, int err)
{
	uint64_t to;

	if (!in || err == -pte_bad_query || in->iclass == ptic_error)
		return in ? in->ip : 0;
	if (direct_target(in, &to))
		return to;
	return in->ip + in->size;
}

void error_at(struct dec *x, const char *msg, uint64_t ip)
{
	uint64_t off = file_offset(x, offset_now(x));
	struct rrec r;

	flush_pending(x, 0);
	drop_prev(x);
	x->c->stats.errors++;
	add_diag(x, DECODE_DIAG_ERROR, x->cfg->streams[x->c->stream].name, off, true, ip, msg);
	dec_gap(x, msg);
	if (!wants(x, RREC_ERROR))
		return;
	rec_init(x, &r, RREC_ERROR);
	r.offset = off;
	r.to = ip;
	r.name = msg;
	dec_emit(x, &r);
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
void on_error(struct dec *x, const char *what, int err, const struct pt_insn *in)
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
