/* SPDX-License-Identifier: MIT */
/*
 * --timeline: function calls per thread as a Chrome trace-event file
 * ({"traceEvents": [...]}), which Perfetto UI and chrome://tracing open.
 * Calls become "B" events and returns "E" events on the thread the sideband
 * says runs ("pid"/"tid"; without sideband, pid 0 and the stream's index as
 * tid, named after the stream); "ts" is in microseconds of perf time (decode.h
 * says how it is derived).
 *
 * Begin/end pairs balance on every thread: a return whose call was before the
 * trace has no "E"; a thread switched out, a trace gap and the stream's end
 * close what is open. Where trace is missing (decode error, overflow, a
 * TRUNCATED or LOST record) the open functions end and a "gap" slice (cat
 * "gap", ph "X") covers the time until decoding resumes: lost time is never
 * shown as time spent in a function.
 *
 * The filter reads decoder records (decode_rec.h) in stream order, made by
 * timeline_put() in the chunks: what the merge would spell for each of them
 * there (the time in microseconds as jansson prints it, a call's name as a JSON
 * string), so that the merge, one thread for every event, only copies.
 */
#ifndef PTC_TIMELINE_H
#define PTC_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "decode_rec.h"
#include "dsink.h"

/* The longest time text: jansson's "%.16g" of a double and ".0". */
#define TIMELINE_TS_MAX 40
/* {"ph":"B","ts":TS,"pid":P,"tid":T,"name": at most, and room to spare. */
#define TIMELINE_EV_MAX 128

struct timeline_state {
	bool any;		/* an event was written: the next needs a comma */
	uint32_t stream;
	bool thread_known;
	uint32_t pid, tid;
	uint64_t depth;		/* open "B" events on the current thread */
	uint64_t last;		/* the last time seen (ns) */
	char last_ts[TIMELINE_TS_MAX];	/* last as the file spells it ("": not yet) */
	/*
	 * A call's "B" up to its name, and a whole "E", as the file spells them at the time
	 * and thread in key_*: most events repeat the last one's time and thread.
	 */
	bool key_ok;
	uint64_t key_ns;
	uint32_t key_pid, key_tid;
	uint8_t b_len, e_len;
	char b_pre[TIMELINE_EV_MAX], e_line[TIMELINE_EV_MAX];
	bool gap_open;
	uint64_t gap_start;
	char gap_why[256];
	uint64_t events;	/* written: B, E, X, M */
	/*
	 * -J 2 and more (timeline_convert()): @plain, set before the workers start, says a
	 * chunk's thread is known without its records (one stream, no sideband: pid 0, tid
	 * 0, as stream_start() leaves it). At the merge, in a worker's text segment: the
	 * depth it started at, and whether its events' times are before @last (restamp:
	 * @last_d, last_ts read back as a number).
	 */
	bool plain;
	bool restamp;
	uint64_t seg_depth;
	double last_d;
};

/* The file's opening and closing (around every stream's records). */
void timeline_begin(struct dout *o);
void timeline_finish(struct dout *o);
dout_filter_fn timeline_filter;
/*
 * -J 2 and more: a worker writes its chunk's events itself (timeline_convert()) after its
 * head (the records up to where its thread is known and no gap is open), the merge
 * stitches them (timeline_unframe(): the comma, a return below the chunk's start depth,
 * a time before the last one seen) and filters only the heads.
 */
dout_convert_fn timeline_convert;
dout_filter_fn timeline_unframe;
/* In the chunk: a record for timeline_filter() (@name: a call's callee, a gap's reason). */
void timeline_put(struct dsink *s, const struct drec *hdr, const char *name);
/* The same with @name's length known (@n: strnlen(@name, TIMELINE_NAME_MAX)). */
#define TIMELINE_NAME_MAX 1024
void timeline_put_len(struct dsink *s, const struct drec *hdr, const char *name, size_t n);
/*
 * A call's @name as the file has it: a JSON string, quotes included, of the name cut at
 * 1024 bytes (as drec_put() cuts it), invalid UTF-8 as U+FFFD; "" when jansson fails.
 * In @buf (TIMELINE_NAME_JSON_MAX bytes) or a copy kept for the thread.
 */
#define TIMELINE_NAME_JSON_MAX (6 * 1024 + 3)
const char *timeline_name_json(const char *name, char *buf);

#endif
