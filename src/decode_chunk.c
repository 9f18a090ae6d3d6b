// SPDX-License-Identifier: MIT
/*
 * One chunk of a stream through libipt's instruction-flow decoder, as ptxed
 * decodes: events, instructions, errors at their offset and a resync at the
 * next PSB; rendered into the chunk's sinks for the chosen output.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "decode_chunk.h"
#include "decode_rec.h"
#include "decode_sb.h"
#include "disasm.h"
#include "fileio.h"
#include "memimage.h"

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
/* Trace bytes behind the decoder kept mapped (libipt never reads back further). */
#define KEEP_BEHIND (256u << 10)

/* Where a chunk stood when it met the next chunk's first instruction. */
struct mark {
	bool valid;
	uint64_t out, tl;	/* sink positions */
	uint64_t offset;	/* trace offset */
	size_t ndiag;
	struct decode_stats stats;
};

/* What is kept of the last instruction: a whole pt_insn is slow to copy at every one. */
struct last {
	uint64_t ip;
	int isid;
	enum pt_insn_class iclass;
	uint8_t size;
	uint8_t b0, b1;		/* its first bytes: which far transfer it is */
};

struct dec {
	struct decode_chunk *c;
	const struct decode_config *cfg;
	struct pt_insn_decoder *d;
	struct image_store *img;
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
	uint64_t progress_off;
	unsigned progress_count;
	uint64_t dropped;	/* trace bytes whose pages were dropped */
	unsigned since_check;
	uint64_t stall_off, stall_insns;
	bool timeline, records;	/* timeline records; calls records on the out sink */
};

static uint64_t offset_now(const struct dec *x)
{
	uint64_t off = 0;

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

/* ---- output helpers ---- */

static const char hexd[] = "0123456789abcdef";
/* "00" to "ff": two hex digits a step. */
static const char pairs[] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

static char *put_hex16(char *p, uint64_t v)
{
	for (int i = 14; i >= 0; i -= 2, v >>= 8)
		memcpy(p + i, pairs + 2 * (v & 0xff), 2);
	return p + 16;
}

/* perf's %16lx: right-aligned, no leading zeros. */
static char *put_hex_w16(char *p, uint64_t v)
{
	char *e = p + 16;

	memset(p, ' ', 16);
	for (; v >= 16; v >>= 8) {
		e -= 2;
		memcpy(e, pairs + 2 * (v & 0xff), 2);
	}
	/* The last pair taken was at least 0x10: what is left is one digit, or none. */
	if (v || e == p + 16)
		*--e = hexd[v];
	return p + 16;
}

static void put_text(struct dec *x, const char *s)
{
	dsink_put(&x->c->out, s, strlen(s));
}

static void put_json(struct dsink *s, json_t *o)
{
	char buf[1024];
	size_t n;

	if (!o)
		return;
	n = json_dumpb(o, buf, sizeof(buf) - 1, JSON_COMPACT);
	if (n && n < sizeof(buf) - 1) {
		buf[n++] = '\n';
		dsink_put(s, buf, n);
	} else if (n) {
		char *big = json_dumps(o, JSON_COMPACT);

		if (big) {
			dsink_put(s, big, strlen(big));
			dsink_put(s, "\n", 1);
			free(big);
		}
	}
	json_decref(o);
}

static void hexstr(char *buf, uint64_t v)
{
	snprintf(buf, 19, "0x%" PRIx64, v);
}

static json_t *json_hex(uint64_t v)
{
	char b[20];

	hexstr(b, v);
	return json_string(b);
}

static void maybe_flush(struct dec *x)
{
	struct decode_chunk *c = x->c;

	if (c->out.len > FLUSH_AT)
		dsink_flush(&c->out, x->mark.valid ? x->mark.out : dsink_pos(&c->out));
	if (c->tl.len > FLUSH_AT)
		dsink_flush(&c->tl, x->mark.valid ? x->mark.tl : dsink_pos(&c->tl));
}

static void record(struct dec *x, struct dsink *s, enum drec_kind kind, uint64_t from,
		   uint64_t to, const char *s1, const char *s2)
{
	struct drec r;

	memset(&r, 0, sizeof(r));
	r.kind = (uint8_t)kind;
	r.from = from;
	r.to = to;
	r.pid = x->pid;
	r.tid = x->tid;
	if (x->have_time) {
		r.has_time = 1;
		r.time = tsc_time(x->cfg, x->tsc);
	}
	drec_put(s, &r, s1, s2);
}

/* An event or error line: in --insn text as ptxed prints it, a record for --calls. */
static void mark_line(struct dec *x, const char *line)
{
	if (x->cfg->mode == DECODE_INSN && !x->cfg->json) {
		put_text(x, line);
		put_text(x, "\n");
	} else if (x->cfg->mode == DECODE_CALLS) {
		record(x, &x->c->out, DREC_MARK, 0, 0, line, NULL);
	}
}

static void update_time(struct dec *x)
{
	uint32_t lost_mtc, lost_cyc;
	uint64_t tsc;

	if (pt_insn_time(x->d, &tsc, &lost_mtc, &lost_cyc) >= 0) {
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
	const uint8_t b[2] = { in->b0, in->b1 };

	switch (in->iclass) {
	case ptic_call: return "call";
	case ptic_return: return "return";
	case ptic_jump: return "jmp";
	case ptic_cond_jump: return "jcc";
	case ptic_far_call:
		if (in->size >= 2 && b[0] == 0x0f && (b[1] == 0x05 || b[1] == 0x34))
			return "syscall";
		return b[0] == 0xcd || b[0] == 0xcc || b[0] == 0xce ? "int" : "far call";
	case ptic_far_return:
		if (in->size >= 2 && b[0] == 0x0f && (b[1] == 0x07 || b[1] == 0x35))
			return "sysret";
		return b[0] == 0xcf ? "iret" : "far return";
	case ptic_far_jump: return "far jmp";
	default: return "";
	}
}

static void branch_row(struct dec *x, uint64_t from, uint64_t to, const char *kind)
{
	if (x->cfg->mode != DECODE_BRANCHES)
		return;
	if (x->cfg->json) {
		json_t *o = json_object();

		json_object_set_new(o, "from", json_hex(from));
		json_object_set_new(o, "to", json_hex(to));
		json_object_set_new(o, "type", json_string(kind));
		put_json(&x->c->out, o);
		return;
	}
	{
		char line[40], *p = line;

		*p++ = ' ';
		p = put_hex_w16(p, from);
		memcpy(p, " => ", 4);
		p = put_hex_w16(p + 4, to);
		*p++ = '\n';
		dsink_put(&x->c->out, line, (size_t)(p - line));
	}
}

/* A call's callee for the timeline: its symbol, without "+0x0". */
static void callee_name(char *name)
{
	size_t n = strlen(name);

	if (n > 4 && !strcmp(name + n - 4, "+0x0"))
		name[n - 4] = '\0';
}

/* The successor of the last instruction is known: what was it, a branch taken, a call? */
static void resolve_next(struct dec *x, uint64_t to, int to_isid)
{
	const struct last *p = &x->prev;

	if (!x->have_prev)
		return;
	x->have_prev = false;
	if (!taken(p, to))
		return;
	x->c->stats.branches++;
	branch_row(x, p->ip, to, branch_kind(p));
	if ((p->iclass == ptic_call || p->iclass == ptic_return) && (x->records || x->timeline)) {
		char from_name[512], to_name[512];
		enum drec_kind k = p->iclass == ptic_call ? DREC_CALL : DREC_RET;

		image_symbolize(x->img, p->isid, p->ip, from_name, sizeof(from_name));
		image_symbolize(x->img, to_isid, to, to_name, sizeof(to_name));
		if (x->timeline)
			update_time(x);
		if (x->records)
			record(x, &x->c->out, k, p->ip, to, from_name, to_name);
		if (x->timeline) {
			callee_name(to_name);
			record(x, &x->c->tl, k, p->ip, to, to_name, NULL);
		}
	}
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
	branch_row(x, from, 0, kind && *kind ? kind : "tr end");
}

static void drop_prev(struct dec *x)
{
	x->have_prev = false;
}

/* ---- trimming at the next chunk's first instruction ---- */

static void set_mark(struct dec *x)
{
	x->mark.valid = true;
	x->mark.out = dsink_pos(&x->c->out);
	x->mark.tl = dsink_pos(&x->c->tl);
	x->mark.offset = offset_now(x);
	x->mark.ndiag = x->c->nr_diags;
	x->mark.stats = x->c->stats;
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
		set_mark(x);
		return;
	}
	if (!x->mark.valid || !ok)
		return;
	if (in->iclass == ptic_cond_jump || in->iclass == ptic_return ||
	    offset_now(x) != x->mark.offset)
		x->mark.valid = false;
}

/* ---- instructions ---- */

static void insn_text(struct dec *x, const struct pt_insn *in)
{
	uint8_t *p = dsink_room(&x->c->out, 64 + DISASM_TEXT_AT + 512 + 16), *start = p;
	const char *tail;
	size_t len;

	if (!p) {
		x->c->out.err = -ENOMEM;
		return;
	}
	if (x->cfg->show_offset) {
		p = (uint8_t *)put_hex16((char *)p, file_offset(x, x->at));
		*p++ = ' ';
		*p++ = ' ';
	}
	if (x->cfg->show_time) {
		p = (uint8_t *)put_hex16((char *)p, x->event_tsc);
		*p++ = ' ';
		*p++ = ' ';
	}
	if (in->speculative) {
		*p++ = '?';
		*p++ = ' ';
	}
	p = (uint8_t *)put_hex16((char *)p, in->ip);
	tail = disasm_line(x->dis, in, &len);
	if (len > DISASM_TEXT_AT + 512)
		len = DISASM_TEXT_AT + 512;
	/*
	 * In blocks of 16: a memcpy() of a short, bounded length becomes "rep movsq", slow to
	 * start on some CPUs, for each of millions of lines. disasm_line() keeps 16 bytes of
	 * slack after a line, and the room reserved above has it too.
	 */
	for (size_t i = 0; i < len; i += 16)
		memcpy(p + i, tail + i, 16);
	dsink_commit(&x->c->out, (size_t)(p - start) + len);
}

static void insn_json(struct dec *x, const struct pt_insn *in)
{
	char bytes[48];
	json_t *o = json_object();
	const char *text;
	size_t tlen, i;

	for (i = 0; i < in->size && i < sizeof(in->raw); i++) {
		bytes[2 * i] = hexd[in->raw[i] >> 4];
		bytes[2 * i + 1] = hexd[in->raw[i] & 15];
	}
	bytes[2 * i] = '\0';
	text = disasm_line(x->dis, in, &tlen);
	/* The text without the bytes in front and the newline behind. */
	text += DISASM_TEXT_AT;
	tlen = tlen > DISASM_TEXT_AT ? tlen - DISASM_TEXT_AT - 1 : 0;
	json_object_set_new(o, "ip", json_hex(in->ip));
	json_object_set_new(o, "bytes", json_string(bytes));
	json_object_set_new(o, "insn", json_stringn(text, tlen));
	json_object_set_new(o, "mode", json_integer(in->mode == ptem_16bit ? 16 :
						    in->mode == ptem_32bit ? 32 : 64));
	if (in->speculative)
		json_object_set_new(o, "speculative", json_true());
	if (x->cfg->show_offset)
		json_object_set_new(o, "offset", json_integer((json_int_t)file_offset(x, x->at)));
	if (x->cfg->show_time)
		json_object_set_new(o, "tsc", json_integer((json_int_t)x->event_tsc));
	put_json(&x->c->out, o);
}

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
	resolve_next(x, in->ip, in->isid);
	count_insn(&x->c->stats, in);
	if (x->cfg->mode == DECODE_INSN) {
		if (x->cfg->json)
			insn_json(x, in);
		else
			insn_text(x, in);
	}
	x->prev.ip = in->ip;
	x->prev.isid = in->isid;
	x->prev.iclass = in->iclass;
	x->prev.size = in->size;
	x->prev.b0 = in->raw[0];
	x->prev.b1 = in->raw[1];
	x->have_prev = true;
	maybe_flush(x);
	progress(x);
}

/* ---- events ---- */

static const char *exec_mode_name(enum pt_exec_mode m)
{
	switch (m) {
	case ptem_16bit: return "16-bit";
	case ptem_32bit: return "32-bit";
	case ptem_64bit: return "64-bit";
	default: return "<unknown>";
	}
}

/* The event as ptxed prints it (without brackets); "" for one it does not name. */
static void event_text(const struct pt_event *ev, char *b, size_t n)
{
	switch (ev->type) {
	case ptev_enabled:
		snprintf(b, n, "%s", ev->variant.enabled.resumed ? "resumed" : "enabled");
		break;
	case ptev_disabled:
	case ptev_async_disabled:
		snprintf(b, n, "disabled");
		break;
	case ptev_async_branch:
		snprintf(b, n, "interrupt");
		break;
	case ptev_paging:
		snprintf(b, n, "paging, cr3: %016" PRIx64 "%s", ev->variant.paging.cr3,
			 ev->variant.paging.non_root ? ", nr" : "");
		break;
	case ptev_async_paging:
		snprintf(b, n, "paging, cr3: %016" PRIx64 "%s", ev->variant.async_paging.cr3,
			 ev->variant.async_paging.non_root ? ", nr" : "");
		break;
	case ptev_overflow:
		snprintf(b, n, "overflow");
		break;
	case ptev_exec_mode:
		snprintf(b, n, "exec mode: %s", exec_mode_name(ev->variant.exec_mode.mode));
		break;
	case ptev_tsx:
		snprintf(b, n, "%s", ev->variant.tsx.aborted ? "aborted" :
			 ev->variant.tsx.speculative ? "begin transaction" : "committed");
		break;
	case ptev_stop:
		snprintf(b, n, "stopped");
		break;
	case ptev_vmcs:
		snprintf(b, n, "vmcs, base: %016" PRIx64, ev->variant.vmcs.base);
		break;
	case ptev_async_vmcs:
		snprintf(b, n, "vmcs, base: %016" PRIx64, ev->variant.async_vmcs.base);
		break;
	case ptev_exstop:
		snprintf(b, n, "exstop");
		break;
	case ptev_mwait:
		snprintf(b, n, "mwait %" PRIx32 " %" PRIx32, ev->variant.mwait.hints,
			 ev->variant.mwait.ext);
		break;
	case ptev_pwre:
		snprintf(b, n, "pwre c%u.%u%s", (ev->variant.pwre.state + 1) & 0xf,
			 (ev->variant.pwre.sub_state + 1) & 0xf, ev->variant.pwre.hw ? " hw" : "");
		break;
	case ptev_pwrx:
		snprintf(b, n, "pwrx %s%s%sc%u (c%u)", ev->variant.pwrx.interrupt ? "int: " : "",
			 ev->variant.pwrx.store ? "st: " : "",
			 ev->variant.pwrx.autonomous ? "hw: " : "",
			 (ev->variant.pwrx.last + 1) & 0xf, (ev->variant.pwrx.deepest + 1) & 0xf);
		break;
	case ptev_ptwrite:
		snprintf(b, n, "ptwrite: %" PRIx64, ev->variant.ptwrite.payload);
		break;
	case ptev_tick:
		snprintf(b, n, "tick");
		break;
	case ptev_cbr:
		snprintf(b, n, "cbr: %x", ev->variant.cbr.ratio);
		break;
	case ptev_mnt:
		snprintf(b, n, "mnt: %" PRIx64, ev->variant.mnt.payload);
		break;
	default:
		b[0] = '\0';
		break;
	}
}

static void event_json(struct dec *x, const struct pt_event *ev, const char *text)
{
	json_t *o = json_object();
	char name[64];
	size_t i;

	/* The event's name: ptxed's words up to a comma or colon. */
	for (i = 0; text[i] && text[i] != ',' && text[i] != ':' && i < sizeof(name) - 1; i++)
		name[i] = text[i];
	name[i] = '\0';
	json_object_set_new(o, "event", json_string(name));
	if (strcmp(name, text))
		json_object_set_new(o, "detail", json_string(text));
	if (ev->has_tsc)
		json_object_set_new(o, "tsc", json_integer((json_int_t)ev->tsc));
	put_json(&x->c->out, o);
}

/* Losses: the timeline shows a gap, never time spent in the function it was in. */
static void gap(struct dec *x, const char *why)
{
	x->c->stats.gaps++;
	if (x->timeline)
		record(x, &x->c->tl, DREC_GAP, 0, 0, why, NULL);
}

static void branch_effects(struct dec *x, const struct pt_event *ev)
{
	switch (ev->type) {
	case ptev_enabled:
		drop_prev(x);
		x->c->stats.enables++;
		branch_row(x, 0, ev->variant.enabled.ip, "tr strt");
		break;
	case ptev_disabled:
		x->c->stats.disables++;
		resolve_end(x, ev->ip_suppressed ? 0 : ev->variant.disabled.ip, "tr end");
		break;
	case ptev_async_disabled:
		x->c->stats.disables++;
		/* The instruction at "at" did not execute: it is where the last one went. */
		resolve_next(x, ev->variant.async_disabled.at, 0);
		branch_row(x, ev->variant.async_disabled.at, 0, "tr end async");
		break;
	case ptev_async_branch:
		resolve_next(x, ev->variant.async_branch.from, 0);
		x->c->stats.branches++;
		branch_row(x, ev->variant.async_branch.from,
			   ev->ip_suppressed ? 0 : ev->variant.async_branch.to, "interrupt");
		break;
	case ptev_overflow:
		drop_prev(x);
		x->c->stats.overflows++;
		gap(x, "overflow: the CPU dropped trace");
		if (!ev->ip_suppressed)
			branch_row(x, 0, ev->variant.overflow.ip, "tr strt");
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
	if (x->timeline)
		record(x, &x->c->tl, DREC_THREAD, 0, 0, NULL, NULL);
}

static void on_event(struct dec *x, const struct pt_event *ev)
{
	struct pt_image *image = NULL;
	char text[160];

	if (ev->has_tsc) {
		x->tsc = ev->tsc;
		x->have_time = true;
	}
	x->event_tsc = ev->tsc;
	if (x->sb) {
		dsb_event(x->sb, ev, &image);
		if (image && pt_insn_set_image(x->d, image) < 0)
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
	event_text(ev, text, sizeof(text));
	if (!text[0])
		return;
	if (x->cfg->mode == DECODE_INSN && x->cfg->json) {
		event_json(x, ev, text);
	} else {
		char line[200], off[20] = "";

		/* ptxed puts the offset in front of events too. */
		if (x->cfg->show_offset && x->cfg->mode == DECODE_INSN)
			snprintf(off, sizeof(off), "%016" PRIx64 "  ", file_offset(x, x->at));
		snprintf(line, sizeof(line), "[%s%s]", off, text);
		mark_line(x, line);
	}
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
	char line[320];

	drop_prev(x);
	x->c->stats.errors++;
	add_diag(x, DECODE_DIAG_ERROR, x->cfg->streams[x->c->stream].name, off, true, ip, msg);
	gap(x, msg);
	if (x->cfg->mode == DECODE_INSN && x->cfg->json) {
		json_t *o = json_object();

		json_object_set_new(o, "error", json_string(msg));
		json_object_set_new(o, "offset", json_integer((json_int_t)off));
		json_object_set_new(o, "ip", json_hex(ip));
		put_json(&x->c->out, o);
	} else {
		snprintf(line, sizeof(line), "[%" PRIx64 ", %" PRIx64 ": %s]", off, ip, msg);
		mark_line(x, line);
	}
}

/* A libipt error, in its words, at ptxed's IP. */
static void on_error(struct dec *x, const char *what, int err, const struct pt_insn *in)
{
	char msg[200];

	snprintf(msg, sizeof(msg), "%s: %s", what, pt_errstr(pt_errcode(err)));
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
		status = pt_insn_event(x->d, &ev, sizeof(ev));
		if (status >= 0)
			on_event(x, &ev);
	}
	return status;
}

/* From a sync point until the end or an error. Returns -pte_eos at the end. */
static int flow(struct dec *x, int status)
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
			if (!(status & pts_ip_suppressed))
				mark_line(x, "[end of trace]");
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
			return -pte_internal;
		}
	}
	if (status == -pte_eos)
		return status;
	on_error(x, "error", status, &in);
	return status;
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
		return pt_insn_sync_forward(x->d);
	while (at < len) {
		size_t n = len - at < PSB_STEP + 15 ? len - at : PSB_STEP + 15;
		const uint8_t *p = memmem(base + at, n, psb, sizeof(psb));

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
		return pt_insn_sync_forward(x->d);
	return found < len ? pt_insn_sync_set(x->d, found) : -pte_eos;
}

static void run(struct dec *x)
{
	uint64_t sync = 0;

	for (;;) {
		int status = sync_forward(x, offset_now(x));

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
		if (x->timeline) {
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

static int setup(struct dec *x, struct error *e)
{
	const struct decode_config *cfg = x->cfg;
	const struct decode_stream *st = &cfg->streams[x->c->stream];
	struct pt_config pc;
	int ret;

	setup_config(x, &pc);
	ret = setup_image(x, e);
	if (ret)
		return ret;
	if (st->nr_sb) {
		ret = dsb_new(&x->sb, x->img, st->sb, st->nr_sb, on_sb_diag, x, e);
		if (ret)
			return ret;
	}
	if (cfg->mode == DECODE_INSN) {
		ret = disasm_new(&x->dis, cfg->att, e);
		if (ret)
			return ret;
	}
	x->d = pt_insn_alloc_decoder(&pc);
	if (!x->d)
		return err_runtime(e, -ENOMEM, "%s: libipt could not make a decoder", st->name);
	ret = pt_insn_set_image(x->d, image_base(x->img));
	if (ret < 0)
		return err_runtime(e, -EINVAL, "%s: %s", st->name, pt_errstr(pt_errcode(ret)));
	return 0;
}

static void teardown(struct dec *x)
{
	pt_insn_free_decoder(x->d);
	disasm_free(x->dis);
	dsb_free(x->sb);
	image_store_free(x->img);
}

static void stream_start(struct dec *x)
{
	const struct decode_stream *st = &x->cfg->streams[x->c->stream];
	struct drec r;

	memset(&r, 0, sizeof(r));
	r.kind = DREC_STREAM;
	r.pid = (uint32_t)x->c->stream;
	if (x->records)
		drec_put(&x->c->out, &r, st->name, NULL);
	if (x->timeline)
		drec_put(&x->c->tl, &r, st->name, NULL);
}

int decode_chunk(struct decode_chunk *c)
{
	struct dec x;

	memset(&x, 0, sizeof(x));
	x.c = c;
	x.cfg = c->cfg;
	x.timeline = c->tl.out != NULL;
	x.records = c->cfg->mode == DECODE_CALLS;
	err_clear(&c->error);
	c->ret = setup(&x, &c->error);
	if (!c->ret) {
		if (c->first)
			stream_start(&x);
		run(&x);
		if (!c->last)
			trim(&x);
		/* Sideband due before the next chunk's first event is this chunk's to report. */
		if (x.sb && !c->last)
			dsb_advance(x.sb, c->tsc_hi, &(struct pt_image *){ NULL });
		if (c->last && x.timeline) {
			update_time(&x);
			record(&x, &c->tl, DREC_END, 0, 0, NULL, NULL);
		}
		if (c->progress && c->end - c->begin > x.progress_off)
			__atomic_fetch_add(c->progress, c->end - c->begin - x.progress_off,
					   __ATOMIC_RELAXED);
		c->stats.bytes = c->end - c->begin;
		drop_behind(&x, c->end - c->begin, 0);
	}
	teardown(&x);
	if (!c->ret) {
		int a = dsink_flush(&c->out, dsink_pos(&c->out));
		int b = dsink_flush(&c->tl, dsink_pos(&c->tl));

		if (a || b)
			c->ret = err_runtime(&c->error, a ? a : b, "cannot write the output: %s",
					     strerror(-(a ? a : b)));
	}
	return c->ret;
}
