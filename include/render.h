/* SPDX-License-Identifier: MIT */
/*
 * Decode output formats. The decoder loop (decode_chunk.c, dec_*.c) knows no format:
 * it produces typed records (an instruction, a taken branch, a call, a
 * return, an event, a gap, an error, a thread switch, a stream's start and
 * end) and hands each to the renderers of the run: the mode's (on the
 * chunk's out sink) and, with --timeline, the timeline's (on its tl sink).
 * A renderer turns records into bytes of its sink; where its output needs
 * state only the merge has (call depth, open functions), it writes decoder
 * records (decode_rec.h) and a filter at the merge turns them into text.
 *
 * Adding a format is one file defining a struct renderer and one line in
 * the table of render.c.
 *
 * Records carry fields, not text: an event is libipt's struct pt_event (a
 * renderer names it with render_event_text() or reads its fields), an error
 * its offset, IP and message. A renderer says which records it wants
 * (@wants): the decoder builds no record nobody wants, and looks up
 * symbols, time or disassembly only for a renderer that asks for them.
 * Instructions go to one renderer at most (the mode's).
 */
#ifndef PTC_RENDER_H
#define PTC_RENDER_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decode_config.h"
#include "decode_rec.h"
#include "dsink.h"
#include "fastflow.h"

struct disasm;
struct drec;

enum rrec_kind {
	RREC_STREAM,		/* a stream starts (its first chunk, before decoding) */
	RREC_INSN,		/* an instruction: through renderer.insn(), not put() */
	RREC_BRANCH,		/* a taken branch from -> to (0: none), name: perf's kind */
	RREC_CALL,		/* from -> to; from_name/to_name with RENDER_NAMES */
	RREC_RETURN,
	RREC_EVENT,		/* a libipt event (not a status update): event, offset */
	RREC_EOT,		/* the end of the trace, with an IP (ptxed's "[end of trace]") */
	RREC_GAP,		/* trace missing from here on: name says why */
	RREC_ERROR,		/* a decode error at offset, ip: name is libipt's words */
	RREC_THREAD,		/* pid/tid run from here on */
	RREC_END,		/* the stream ends (its last chunk) */
	RREC_KINDS
};

#define RREC_BIT(k) (1u << (k))

struct image_store;

struct rrec {
	enum rrec_kind kind;
	uint64_t from, to;		/* BRANCH, CALL, RETURN; ERROR: to is the IP */
	const char *name;		/* BRANCH kind, GAP and ERROR message */
	const char *from_name, *to_name;	/* CALL, RETURN: symbol+offset (RENDER_NAMES) */
	bool names_plain;		/* both are as printable.h prints them (no escape) */
	/*
	 * With names_plain: from_name's length (strlen()), to_len to_name's. Apart: read as
	 * one load (GCC pairs adjacent fields), two stores just made did not forward to it.
	 */
	uint16_t from_len;
	/* CALL, RETURN with RENDER_SYMS: what image_resolve_pid() takes to resolve them */
	struct image_store *img;
	uint32_t sym_pid;		/* the thread's process, UINT32_MAX: not known */
	int from_isid, to_isid;		/* -1: not looked up (renderer.flow(): the base image's) */
	const struct pt_event *event;	/* EVENT */
	uint64_t offset;		/* EVENT (ptxed's --offset), ERROR: in the file */
	bool has_time;
	uint64_t time;			/* ns of perf time */
	uint32_t pid, tid;		/* the thread sideband says runs (0 without) */
	unsigned how;			/* CALL, RETURN: what opened or closed it (drec_how) */
	uint16_t to_len;
	uint32_t stream;		/* STREAM: its index; stream_name its name */
	const char *stream_name;
};

/* A renderer at work in one chunk. */
struct render {
	const struct renderer *ops;
	const struct decode_config *cfg;
	struct dsink *sink;
	struct disasm *dis;		/* with RENDER_DISASM */
	/* 0 in each new chunk and where the decoder took back the sink's end (what the
	 * renderer defined in the chunk's output may be gone), then the renderer's own */
	uint64_t chunk;
};

enum render_flags {
	RENDER_NAMES = 1,	/* CALL/RETURN records carry symbol names */
	RENDER_TIME = 2,	/* the renderer shows time (CALL/RETURN records always carry
				 * libipt's time for the call or return instruction) */
	RENDER_DISASM = 4,	/* INSN records are disassembled */
	RENDER_SYMS = 8,	/* CALL/RETURN records carry what resolves their symbols and
				 * objects (the renderer resolves them, and may keep them) */
};

/* The room of an insn_text() line: offset, time, "? ", address, disasm.h's line, 16. */
#define RENDER_INSN_ROOM 336

enum render_output {
	RENDER_OUT,		/* the instruction stream: stdout */
	RENDER_TIMELINE,	/* --timeline FILE */
};

struct renderer {
	const char *name;
	/* Which runs it renders: the output, and for RENDER_OUT the mode and --json. */
	enum render_output output;
	enum decode_mode mode;
	bool json;
	unsigned wants;			/* RREC_BIT()s */
	unsigned flags;
	void (*put)(struct render *r, const struct rrec *rec);
	/*
	 * RREC_INSN records, the hot path, without a struct rrec: @offset (ptxed's
	 * --offset, 0 without it) and @tsc (--time) as in the record.
	 */
	void (*insn)(struct render *r, const struct pt_insn *in, uint64_t offset, uint64_t tsc);
	/*
	 * The line insn() writes, into @dst instead (room for RENDER_INSN_ROOM bytes, of which
	 * up to 16 past the line may be written): its length. NULL: the renderer has none (the
	 * fast flow path prints a renderer's instructions through it, from insnblk.h's cache).
	 */
	size_t (*insn_text)(struct render *r, const struct pt_insn *in, uint64_t offset,
			    uint64_t tsc, char *dst);
	/*
	 * Instructions counted in runs, for a renderer that wants no RREC_INSN (the block
	 * decoder's path stays on): @n instructions in a row, the last at @ip, @next the
	 * address after it (0: not known; known where a CALL or EVENT record follows), @far
	 * it is a far return (iret, sysret: a run ends there). A run ends where a record
	 * comes: no record comes between a run's instructions.
	 */
	void (*insns)(struct render *r, uint64_t n, uint64_t ip, uint64_t next, bool far);
	/*
	 * The fast flow path's calls and returns (how DREC_HOW_CALL, DREC_HOW_RET) to the
	 * renderer of runs, where it is the run's only renderer and wants no branches (NULL:
	 * insns() and put()): insns() of @n instructions, the last the call or return at
	 * @rec->from with @next after it, then put() of @rec, in one step.
	 */
	void (*flow)(struct render *r, const struct rrec *rec, uint64_t n, uint64_t next);
	/*
	 * NULL, or flow() of @n calls and returns in one step (fastflow_set_batch()): @rec
	 * holds what stays the same through a fast segment (its kind, how, from and to are the
	 * renderer's to set), @run instructions before the first (added to its count).
	 */
	void (*flows)(struct render *r, struct rrec *rec, uint64_t run,
		      const struct fastflow_cr *v, unsigned n);

	/* At the merge, for output that needs it (NULL, 0: bytes as the sinks have them). */
	dout_filter_fn *filter;
	size_t state_size;		/* the filter's state (zeroed, in dout.state) */
	void (*begin)(struct dout *o, const struct decode_config *cfg);	/* before all */
	void (*finish)(struct dout *o);	/* after all, when the run succeeded */
	/* NULL, or the output's dout.convert, .unframe and .seed (dsink.h). */
	dout_convert_fn *convert;
	dout_filter_fn *unframe;
	uint64_t (*seed)(struct dout *o);
};

/* The renderer of @output for @cfg, or NULL: that output has none (--stats alone). */
const struct renderer *render_find(const struct decode_config *cfg, enum render_output output);

/* Open @o on @fd for @rd's output (state, opening). 0 or -ENOMEM. */
int render_open(struct dout *o, int fd, const struct renderer *rd,
		const struct decode_config *cfg);
/* The closing (when @ok), everything to the file; frees @o. Returns dout's error. */
int render_close(struct dout *o, const struct renderer *rd, bool ok);

/* What ptxed's --event:* options add to an event's line. */
enum render_event_flags {
	RENDER_EV_IP = 1,	/* --event:ip: its IPs */
};

/*
 * The event as ptxed (libipt 2.2) prints it, without brackets and the offset and time in
 * front; "" for one it does not name.
 */
void render_event_text(const struct pt_event *ev, unsigned flags, char *buf, size_t n);

/*
 * The event as a JSON object (a json_t *, NULL for one ptxed does not name): "event" is
 * libipt's name of its type (ptev_ without the prefix: "async_branch", "interrupt",
 * "vmexit", ...), "text" ptxed's line, then its fields by name (addresses as "0x..."
 * strings, numbers as numbers, flags true when set), and "tsc" where it has one.
 */
void *render_event_json(const struct pt_event *ev);

/* "00" to "ff": a byte's two hex digits, for the renderers' hex printing (two a step). */
extern const char render_hex_pairs[513];

/* @v in hex at @p, no leading zeros: its digits counted, written two at a time from the last. */
static inline char *render_put_hex(char *p, uint64_t v)
{
	unsigned n = (64 - (unsigned)__builtin_clzll(v | 1) + 3) / 4;
	char *q = p + n;

	for (; v >= 0x100; v >>= 8) {
		q -= 2;
		memcpy(q, &render_hex_pairs[2 * (v & 0xff)], 2);
	}
	if (v >= 0x10)
		memcpy(q - 2, &render_hex_pairs[2 * v], 2);
	else
		q[-1] = render_hex_pairs[2 * v + 1];
	return p + n;
}

/*
 * The header of a decoder record (decode_rec.h) of kind @drec_kind: @rec's thread, time,
 * addresses and how; its strings are the caller's (drec_put()).
 */
static inline void render_drec_init(struct drec *d, const struct rrec *rec, int drec_kind)
{
	memset(d, 0, sizeof(*d));
	d->kind = (uint8_t)drec_kind;
	d->how = rec->how;
	d->from = rec->from;
	d->to = rec->to;
	d->pid = rec->pid;
	d->tid = rec->tid;
	d->has_time = rec->has_time;
	d->time = rec->has_time ? rec->time : 0;
}
/* A decoder record of @rec's thread, time and addresses. */
void render_drec(struct dsink *s, const struct rrec *rec, int drec_kind, const char *s1,
		 const char *s2);

/* "[stream: NAME]" (escaped, printable.h) when the run has more than one stream. */
void render_stream_header(struct render *r, const struct rrec *rec);

/* Text or JSON lines into a sink. */
void render_text(struct dsink *s, const char *text);
void render_json_line(struct dsink *s, void *json_obj);	/* a json_t *, stolen */

/* --calls in the chunk (text and JSON differ only at the merge). */
#define RENDER_CALLS_WANTS (RREC_BIT(RREC_STREAM) | RREC_BIT(RREC_CALL) | RREC_BIT(RREC_RETURN) | \
			    RREC_BIT(RREC_EVENT) | RREC_BIT(RREC_EOT) | RREC_BIT(RREC_ERROR))
void render_calls_put(struct render *r, const struct rrec *rec);

/* The formats (render_*.c). */
extern const struct renderer render_insn, render_branches, render_calls, render_stats,
	render_insn_json, render_branches_json, render_calls_json, render_timeline,
	render_report;

#endif
