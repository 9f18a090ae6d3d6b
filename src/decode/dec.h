/* SPDX-License-Identifier: MIT */
/*
 * What the files of one chunk's decoding share (decode_chunk.h is their face): struct dec,
 * the chunk's decoder state, and the few helpers every one of them calls in line. From the
 * top: decode_chunk.c sets a chunk up and runs it through dec_fast.c (fastflow's segments)
 * or dec_libipt.c (libipt's decoders, dec_events.c for their events and errors); both hand
 * what they find to dec_records.c, which names addresses through dec_names.c and sizes the
 * block path's instructions through dec_shapes.c; dec_guard.c bounds what is resident of
 * a mapped trace. Each dec_*.c says what it gives the others in its own dec_*.h (private
 * to src/decode/, as this one; the hot paths' helpers in line, as in the one file they
 * came from).
 */
#ifndef PTC_DEC_H
#define PTC_DEC_H

#include <capstone/capstone.h>
#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decode_config.h"
#include "decode_rec.h"
#include "decode_sb.h"
#include "memimage.h"
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
struct symname;
struct nameset;

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
	struct nameset *names;		/* name_of()'s, 2^NAMES_SET_BITS (names_free()) */
	uint32_t names_used;		/* its entries filled */
	uint32_t names_missed;		/* name_find()'s in a section: resolved and spelled */
	uint64_t names_filled;		/* its groups written first (names_fill()), a bit each */
	csh cs[3];			/* capstone for it, by mode (16, 32, 64), opened on need */
	uint64_t flow_ip;		/* the last instruction's IP in this flow (errors) */
	struct image_store *img;
	struct decode_keep *keep;	/* the thread's: img and the caches lent to this chunk */
	uint64_t ff_built;		/* fastflow_built() when the chunk took ff */
	struct insnblk *iblk;		/* --insn on the fast path: blocks' lines (fast_insn()) */
	struct insnblk_shared *lines;	/* the run's, looked in first (NULL: none) */
	bool lines_many;		/* it held REF_LINES when last asked (dec_fast.c) */
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

static inline uint64_t offset_now(const struct dec *x)
{
	uint64_t off = 0;

	if (x->bd)
		pt_blk_get_offset(x->bd, &off);
	else
		pt_insn_get_offset(x->d, &off);
	return off;
}

/* The trace offset as the user counts it: in the .pt file. */
static inline uint64_t file_offset(const struct dec *x, uint64_t off)
{
	return x->cfg->streams[x->c->stream].from + x->c->begin + off;
}

/* perf time in ns of a TSC, by the conversion the run has (decode_config.h). */
static inline uint64_t tsc_time(const struct decode_config *cfg, uint64_t tsc)
{
	if (cfg->have_conv)
		return dsb_tsc_to_time(&cfg->conv, tsc);
	if (cfg->nom_freq)
		return tsc * 10 / cfg->nom_freq;
	return tsc;
}

static inline bool wants(const struct dec *x, enum rrec_kind k)
{
	return x->wants & RREC_BIT(k);
}

#endif
