// SPDX-License-Identifier: MIT
/*
 * The fast flow path's glue: a chunk segment by segment, the PSB segments fastflow decodes
 * (fastflow.h) with libipt (dec_libipt.c) between them, each cut taken back where it is not
 * where the whole chunk's decoder would be; fastflow's branches and --insn blocks into
 * records. Apart from dec_libipt.c: it runs libipt, never the other way round.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dec_fast.h"
#include "dec_guard.h"
#include "dec_libipt.h"
#include "dec_names.h"
#include "dec_records.h"
#include "fastflow.h"
#include "fileio.h"
#include "insnblk.h"

/* ---- the fast flow path: PSB segments decoded without libipt (fastflow.h) ---- */

/* A fast segment's trace at most: its output waits in the sink until it is known good. */
#define FAST_SEG_MAX (64u << 10)
/* Segments in a row that were not fast before the chunk stops trying. */
#define FAST_MISSES 8
/* Trace decoded by libipt between two fast segments at most (its output is held). */
#define FAST_REGION_MAX (256u << 10)

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
 * fastflow's batch of calls and returns (fastflow_set_batch()) to the renderer's flows():
 * what fast_call_ret() does for each, once a batch (only the last is x->prev).
 */
static void fast_calls(void *ctx, const struct fastflow_cr *v, unsigned n, uint64_t ninsn)
{
	struct dec *x = ctx;
	const struct fastflow_cr *l = &v[n - 1];
	uint64_t run = x->run_n;

	x->ff_told += ninsn;
	x->prev.ip = l->from;
	x->prev.isid = 0;
	x->prev.size = (uint8_t)(l->next - l->from);
	x->prev.iclass = l->call ? ptic_call : ptic_return;
	x->run_n = 0;
	x->run_rend->ops->flows(x->run_rend, &x->frec, run, v, n);
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
		names_prefetch(x, pid, a->from_isid, from);
		names_prefetch(x, pid, a->to_isid, to);
	}
}

/*
 * The lines kept, at least, for a worker before its turn to write references to them
 * (dsink_ref()), not the text: the merge makes the text where it passes the bytes on.
 * Where the program's lines are many, the worker that copied them in read them from
 * memory and wrote them out, and its cache lost the flow's tables to them (the walk of
 * bench/decode, 8 MB of lines: -J 2 --insn's CPU 0.70 -> 0.50 s so); where they are few
 * (the loop's), the copies cost the worker little, and the merge, one thread, fell
 * behind two workers (CPU 1.16x, the workers waiting at the mark).
 */
#define REF_LINES (1u << 20)

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
	/* (The lines grow only here, in any worker: asked again at each miss.) */
	fast_insn_lines(x);
	return dst;
}

void fast_insn_lines(struct dec *x)
{
	if (x->lines && !x->lines_many)
		x->lines_many = insnblk_shared_bytes(x->lines) >= REF_LINES;
}

/* A reference written for the lines @t (@len bytes) in place of them: true. */
static __attribute__((noinline)) bool fast_insn_ref(struct dsink *sink, const char *t,
						    size_t len)
{
	if (len <= DSINK_REF_LEN || !dsink_ref_ok(sink))
		return false;
	if (!dsink_ref(sink, t, len))
		sink->err = -ENOMEM;
	return true;
}

void fast_insn(void *ctx, uint64_t ip, unsigned n)
{
	struct dec *x = ctx;
	struct dsink *sink = x->insn_rend->sink;
	const char *t;
	uint8_t *p;
	size_t len;

	t = x->lines ? insnblk_shared_find(x->lines, ip, n, &len) : NULL;
	/* Before its turn (cold: not yet written straight out), maybe by reference. */
	if (t && __builtin_expect(sink->cold, 0) && x->lines_many && fast_insn_ref(sink, t, len))
		return;
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
	dec_run(x, from);
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

	if (fn == fast_call_ret) {
		fast_flow_start(x);
		/* (no memory for a batch: one call a call or return, as without flows()) */
		fastflow_set_batch(x->ff, x->run_rend->ops->flows ? fast_calls : NULL);
	}

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
void run_fast(struct dec *x)
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
