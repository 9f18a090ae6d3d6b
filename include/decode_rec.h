/* SPDX-License-Identifier: MIT */
/*
 * The records a chunk's decoder writes where its output needs state that
 * only the merge has: the call depth of --calls, the open functions of
 * --timeline. The merge turns them into text or JSON (decode_calls_filter,
 * timeline.h) in stream order.
 */
#ifndef PTC_DECODE_REC_H
#define PTC_DECODE_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "depth_text.h"
#include "dsink.h"

enum drec_kind {
	DREC_STREAM,		/* a stream starts: s1 its name, pid = stream index */
	DREC_CALL,		/* from -> to, s1/s2 their names */
	DREC_RET,
	DREC_MARK,		/* s1: an event or error line ("[disabled]") */
	DREC_GAP,		/* trace missing from time on: s1 why */
	DREC_THREAD,		/* pid/tid run from time on */
	DREC_END,		/* the stream ends at time */
};

/* What opened or closed a frame (CALL, RET; a RET below DREC_HOW_IRET is a return). */
enum drec_how {
	DREC_HOW_CALL,		/* a call instruction */
	DREC_HOW_INTR,		/* an interrupt or exception: an asynchronous branch */
	DREC_HOW_INT,		/* a software interrupt (int N) */
	DREC_HOW_VMEXIT,	/* a VM exit (Event Trace says so) */
	DREC_HOW_OFF,		/* an asynchronous disable: out of traced code (timeline only) */
	DREC_HOW_RET,		/* RET: a return instruction */
	DREC_HOW_IRET,		/* iret */
	DREC_HOW_VMENTRY,	/* vmlaunch, vmresume */
	DREC_HOW_ON,		/* tracing is back after DREC_HOW_OFF (timeline only) */
};

struct drec {
	uint16_t len;		/* the whole record: header and both strings with their NULs */
	uint8_t kind;
	uint8_t has_time;
	uint32_t pid, tid;
	uint64_t from, to;
	uint64_t time;		/* ns of perf time (or TSC-derived, see decode.h) */
	uint16_t len1, len2;	/* string lengths without NUL */
	uint32_t how;		/* CALL, RET: enum drec_how */
	/* char s1[len1 + 1], s2[len2 + 1] */
};

static inline const char *drec_s1(const struct drec *r)
{
	return (const char *)(r + 1);
}

static inline const char *drec_s2(const struct drec *r)
{
	return (const char *)(r + 1) + r->len1 + 1;
}

/* The word --calls shows for a frame's opening or closing: "call", "interrupt", "iret", ... */
const char *decode_how_word(unsigned how);

/* Append a record to @s (strings may be NULL: empty). */
void drec_put(struct dsink *s, const struct drec *hdr, const char *s1, const char *s2);
/* The same with strings of up to @max bytes (drec_put: 1024; the record's len is 16 bits). */
void drec_put_max(struct dsink *s, const struct drec *hdr, const char *s1, const char *s2,
		  size_t max);
/*
 * The same with the strings' lengths known (@l1, @l2 bytes, no NUL among them; at most
 * drec_put_max()'s @max): not measured again.
 */
void drec_put_len(struct dsink *s, const struct drec *hdr, const char *s1, size_t l1,
		  const char *s2, size_t l2);

/*
 * The whole record at *@off of @data's @len bytes, *@off moved past it; NULL at the end
 * (or at a record cut short). Every walk of handed-over records goes through it.
 */
/*
 * The depth after records that moved it by @s (calls less returns) and took it @m at
 * least below where they started, from @start: a return at depth 0 leaves it at 0.
 */
static inline uint64_t drec_depth_after(uint64_t start, int64_t s, int64_t m)
{
	int64_t a = (int64_t)start + s, b = s - m;

	return (uint64_t)(a > b ? a : b);
}

static inline const struct drec *drec_next(const uint8_t *data, size_t len, size_t *off)
{
	const struct drec *r;

	if (*off + sizeof(*r) > len)
		return NULL;
	r = (const struct drec *)(data + *off);
	if (r->len < sizeof(*r) || r->len > len - *off)
		return NULL;
	*off += r->len;
	return r;
}

/* Call @fn for each whole record of @data (what a sink handed over), in order. */
typedef void drec_fn(struct dout *o, const struct drec *r);
void drec_each(struct dout *o, const uint8_t *data, size_t len, drec_fn *fn);

/*
 * The filter of --calls output: the call depth across hand-overs; @line prints a record at
 * its depth (indented text, render_calls.c; JSON lines, render_json.c).
 */
struct calls_state;
typedef void calls_line_fn(struct dout *o, struct calls_state *st, const struct drec *r);
struct calls_state {
	calls_line_fn *line;
	bool headers;		/* a line where each stream starts (more than one stream) */
	uint64_t depth;
	/*
	 * -J 2 and more, text: bytes of lines workers made at a guessed depth that the merge
	 * found right and that it had to indent again (render_calls.c). The merge writes them,
	 * workers read them (atomic) to stop guessing where the guesses keep failing.
	 */
	uint64_t guess_hit, guess_miss;
	struct depth_text dtext;	/* the last line's "[depth N] " (render_calls.c) */
};
dout_filter_fn decode_calls_filter;

#endif
