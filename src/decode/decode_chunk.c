// SPDX-License-Identifier: MIT
/*
 * One chunk of a stream, decoded as ptxed decodes (decode_chunk.h): its setup (the image,
 * the sideband, the decoders and which path may run: the fast path's errata and terms),
 * what a thread keeps from one chunk to its next, and the entry points. The decoding
 * itself is in the dec_*.c files (dec.h says how they stand); what it finds goes to the
 * run's renderers (render.h) as records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_chunk.h"
#include "dec_events.h"
#include "dec_fast.h"
#include "dec_guard.h"
#include "dec_libipt.h"
#include "dec_names.h"
#include "dec_records.h"
#include "dec_shapes.h"
#include "memfill.h"
#include "disasm.h"
#include "fastflow.h"
#include "insnblk.h"

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
			dec_gap(x, d->msg);
			x->tsc = tsc;
			x->have_time = had;
		} else {
			c->stats.gaps++;
		}
	}
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
	int ret = image_store_new_in(&x->img, x->c->syms, x->c->iscache, e);

	return ret ? ret : load_files(x->cfg, x->img, e);
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
					    (uint64_t)sizeof(struct nameset) << NAMES_SET_BITS };
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
	struct nameset *names;
	uint32_t names_used;
	uint64_t names_filled;
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
	names_free(k->names);
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
	x->names_used = k->names_used;
	x->names_filled = k->names_filled;
	memcpy(x->cs, k->cs, sizeof(x->cs));
	k->img = NULL;
	k->shapes = NULL;
	k->names = NULL;
	k->names_used = 0;
	k->names_filled = 0;
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
	k->names_used = x->names_used;
	k->names_filled = x->names_filled;
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
	fast_insn_lines(x);
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
		if (!x->shapes) {
			x->shapes = calloc(1, sizeof(*x->shapes));
			/* Kept by the thread: written now, not page by page as read (memfill.h). */
			if (x->shapes && x->keep)
				memfill(x->shapes, sizeof(*x->shapes));
		}
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
	names_free(x->names);
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
	dec_emit(x, &r);
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
	x.data_lo = c->data_lo;
	x.data_hi = c->data_hi;
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
			dec_run(&x, 0);
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
			dec_emit(&x, &r);
		}
		if (c->progress && c->end - c->begin > x.progress_off)
			__atomic_fetch_add(c->progress, c->end - c->begin - x.progress_off,
					   __ATOMIC_RELAXED);
		c->stats.bytes = c->end - c->begin;
		cache_use(&x);
		/*
		 * Its last KEEP_BEHIND are left to the merge's sweep (drop_merged()), which
		 * takes a megabyte of chunks in one call: a drop here each chunk was a TLB
		 * flush of the other CPU each (the loop's -J 2 --insn: 196 chunks).
		 */
		drop_behind(&x, c->end - c->begin, KEEP_BEHIND);
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
