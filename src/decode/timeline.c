// SPDX-License-Identifier: MIT
/* --timeline: decoder records to Chrome trace events, balanced per thread, gaps marked. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_rec.h"
#include "timeline.h"
#include "utf8.h"

/* What drec_put() keeps of a name (decode_rec.c, timeline.h), and its JSON string at most. */
#define ESC_MAX (6 * TIMELINE_NAME_MAX + 2)
_Static_assert(TIMELINE_NAME_JSON_MAX == ESC_MAX + 1, "timeline.h's room for a name");

/* jansson's spelling of @ns in microseconds, what json_real() in an event prints; its length. */
static size_t ts_text(uint64_t ns, char *buf)
{
	json_t *j = json_real((double)ns / 1000.0);
	char *s = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(16)) :
		NULL;
	size_t n = s ? strnlen(s, TIMELINE_TS_MAX - 1) : 0;

	json_decref(j);
	memcpy(buf, s ? s : "", n);
	buf[n] = '\0';
	free(s);
	return n;
}

/*
 * Per chunk thread: the last time spelt, and the names of calls escaped lately (a few
 * functions are most of the calls). Short names only.
 */
#define NAME_CACHE 16
#define NAME_CACHED 128

static __thread struct {
	bool ok;
	uint64_t ns;
	size_t len;
	char text[TIMELINE_TS_MAX];
} ts_cache;

static __thread struct {
	char name[NAME_CACHED];
	char json[6 * NAME_CACHED + 2];
	size_t len;		/* of json */
} name_cache[NAME_CACHE];

/*
 * @name (cut as drec_put() cuts it) as a JSON string, quotes included; "" when none.
 * A name of printable ASCII but '"' and '\\' is its own JSON (jansson escapes only those
 * two, control characters, and with flags not given here '/' and non-ASCII): quoted by
 * hand. Through jansson (a string made, dumped, freed) it was a fifth of the walk's
 * --timeline CPU, its 25,000 names missing the cache below at nearly every call.
 */
static const char *name_json(const char *name, size_t n, char *buf, size_t *jlen)
{
	size_t h = 2166136261u, len;
	char cut[TIMELINE_NAME_MAX + 1];
	bool plain = true;
	json_t *j;
	char *s;

	/*
	 * Copied as it is read: GCC made the copy after it a rep movsq, 38 % of this
	 * function's samples. (Not plain: jansson writes @buf again.) The cache's hash
	 * only for the others: its multiply, a chain through every byte, cost as much.
	 */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		plain &= c >= 0x20 && c <= 0x7e && c != '"' && c != '\\';
		buf[i + 1] = (char)c;
	}
	if (plain) {
		buf[0] = '"';
		buf[n + 1] = '"';
		buf[n + 2] = '\0';
		*jlen = n + 2;
		return buf;
	}
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	h %= NAME_CACHE;
	if (n < NAME_CACHED && name_cache[h].json[0] && !memcmp(name_cache[h].name, name, n) &&
	    !name_cache[h].name[n]) {
		*jlen = name_cache[h].len;
		return name_cache[h].json;
	}
	memcpy(cut, name, n);
	cut[n] = '\0';
	j = utf8_json_string(cut);
	s = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	json_decref(j);
	len = s ? strnlen(s, ESC_MAX) : 0;
	memcpy(buf, s ? s : "", len);
	buf[len] = '\0';
	free(s);
	if (n < NAME_CACHED && len && len < sizeof(name_cache[h].json)) {
		memcpy(name_cache[h].name, cut, n + 1);
		memcpy(name_cache[h].json, buf, len + 1);
		name_cache[h].len = len;
	}
	*jlen = len;
	return buf;
}

const char *timeline_name_json(const char *name, char *buf)
{
	size_t len;

	return name_json(name, strnlen(name, TIMELINE_NAME_MAX), buf, &len);
}

void timeline_put(struct dsink *s, const struct drec *hdr, const char *name)
{
	timeline_put_len(s, hdr, name, name ? strnlen(name, TIMELINE_NAME_MAX) : 0);
}

void timeline_put_len(struct dsink *s, const struct drec *hdr, const char *name, size_t n)
{
	char json[ESC_MAX + 1];
	const char *s1 = name;
	const char *ts = "";
	size_t l1, l2 = 0;

	/*
	 * The time's text only where it differs from the last record's with a time: the
	 * filter reads it only when the time moves on (when()), and spells it itself where
	 * a record has none (a chunk's first, say). The records are a fifth smaller.
	 */
	if (hdr->has_time && (!ts_cache.ok || ts_cache.ns != hdr->time)) {
		ts_cache.len = ts_text(hdr->time, ts_cache.text);
		ts_cache.ns = hdr->time;
		ts_cache.ok = true;
		ts = ts_cache.text;
		l2 = ts_cache.len;
	}
	/*
	 * A call's event the merge writes by hand (one()): its name as the file has it. Its
	 * length and the time's as spelled: drec_put_max() measured both again.
	 */
	if (hdr->kind == DREC_CALL && hdr->how == DREC_HOW_CALL) {
		s1 = name_json(name ? name : "", name ? n : 0, json, &l1);
		drec_put_len(s, hdr, s1, l1, ts, l2);
		return;
	}
	drec_put_max(s, hdr, s1, ts, ESC_MAX);
}

void timeline_begin(struct dout *o)
{
	static const char head[] = "{\"traceEvents\": [\n";

	dout_write(o, head, sizeof(head) - 1);
}

void timeline_finish(struct dout *o)
{
	static const char tail[] = "\n],\n\"displayTimeUnit\": \"ns\"}\n";

	dout_write(o, tail, sizeof(tail) - 1);
}

static void emit(struct dout *o, struct timeline_state *st, json_t *ev)
{
	char *s = json_dumps(ev, JSON_COMPACT | JSON_REAL_PRECISION(16));

	json_decref(ev);
	if (!s)
		return;
	if (st->any)
		dout_write(o, ",\n", 2);
	dout_write(o, s, strlen(s));
	free(s);
	st->any = true;
	st->events++;
}

/* An event of @ph at @ns on the current thread. */
static json_t *event(const struct timeline_state *st, const char *ph, uint64_t ns)
{
	json_t *ev = json_object();

	json_object_set_new(ev, "ph", json_string(ph));
	json_object_set_new(ev, "ts", json_real((double)ns / 1000.0));
	json_object_set_new(ev, "pid", json_integer(st->thread_known ? st->pid : 0));
	json_object_set_new(ev, "tid", json_integer(st->thread_known ? st->tid : st->stream));
	return ev;
}

/* Time only moves on: a record's time before the last one seen counts as the last. */
static uint64_t when(struct timeline_state *st, const struct drec *r)
{
	if (r->has_time && r->time > st->last) {
		st->last = r->time;
		if (r->len2 && r->len2 < TIMELINE_TS_MAX)
			memcpy(st->last_ts, drec_s2(r), (size_t)r->len2 + 1);
		else
			st->last_ts[0] = '\0';
	}
	return st->last;
}

static char *put_mem(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

static char *put_u32(char *p, uint32_t v)
{
	char t[10];
	int n = 0;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = t[--n];
	return p;
}

/* The "B" prefix and the "E" event at the current time and thread (emit_fast()). */
static void spell_key(struct timeline_state *st, uint32_t pid, uint32_t tid)
{
	char ids[48], *q = ids, *p;
	size_t ts_len, ids_len;

	if (!st->last_ts[0])
		ts_text(st->last, st->last_ts);
	ts_len = strlen(st->last_ts);
	q = put_mem(q, ",\"pid\":", 7);
	q = put_u32(q, pid);
	q = put_mem(q, ",\"tid\":", 7);
	q = put_u32(q, tid);
	ids_len = (size_t)(q - ids);

	p = put_mem(st->e_line, "{\"ph\":\"E\",\"ts\":", 15);
	p = put_mem(p, st->last_ts, ts_len);
	p = put_mem(p, ids, ids_len);
	*p++ = '}';
	st->e_len = (uint8_t)(p - st->e_line);

	p = put_mem(st->b_pre, "{\"ph\":\"B\",\"ts\":", 15);
	p = put_mem(p, st->last_ts, ts_len);
	p = put_mem(p, ids, ids_len);
	p = put_mem(p, ",\"name\":", 8);
	st->b_len = (uint8_t)(p - st->b_pre);

	st->key_ns = st->last;
	st->key_pid = pid;
	st->key_tid = tid;
	st->key_ok = true;
}

/*
 * An "E" event, or a call's "B" (@name: its JSON string, "" for none), spelt by hand as
 * emit() spells it through jansson: the merge writes every event, one thread alone, so
 * each is copied straight into the output's buffer from what spell_key() made.
 */
static void emit_fast(struct dout *o, struct timeline_state *st, char ph, const char *name,
		      size_t name_len)
{
	uint32_t pid = st->thread_known ? st->pid : 0;
	uint32_t tid = st->thread_known ? st->tid : st->stream;
	size_t need = 2 + TIMELINE_EV_MAX + name_len + 1;
	char *p;

	if (!st->key_ok || st->key_ns != st->last || st->key_pid != pid || st->key_tid != tid)
		spell_key(st, pid, tid);
	if (o->len + need > o->cap)
		dout_flush(o);
	if (o->err) {
		/* dout_write() drops everything after a write error. */
	} else if (need > o->cap) {
		/* A buffer smaller than an event (not dout_init()'s): piece by piece. */
		if (st->any)
			dout_write(o, ",\n", 2);
		if (ph == 'E') {
			dout_write(o, st->e_line, st->e_len);
		} else {
			dout_write(o, st->b_pre, name_len ? st->b_len : st->b_len - 8u);
			dout_write(o, name, name_len);
			dout_write(o, "}", 1);
		}
	} else {
		p = (char *)o->buf + o->len;
		if (st->any)
			p = put_mem(p, ",\n", 2);
		if (ph == 'E') {
			p = put_mem(p, st->e_line, st->e_len);
		} else {
			/* No name (jansson failed to spell it): no "name" either, as before. */
			p = put_mem(p, st->b_pre, name_len ? st->b_len : st->b_len - 8u);
			p = put_mem(p, name, name_len);
			*p++ = '}';
		}
		o->len = (size_t)((uint8_t *)p - o->buf);
	}
	st->any = true;
	st->events++;
}

static void close_open(struct dout *o, struct timeline_state *st)
{
	for (; st->depth; st->depth--)
		emit_fast(o, st, 'E', NULL, 0);
}

static void end_gap(struct dout *o, struct timeline_state *st)
{
	json_t *ev, *args;

	if (!st->gap_open)
		return;
	st->gap_open = false;
	ev = event(st, "X", st->gap_start);
	json_object_set_new(ev, "name", json_string("trace gap"));
	json_object_set_new(ev, "cat", json_string("gap"));
	json_object_set_new(ev, "dur", json_real((double)(st->last - st->gap_start) / 1000.0));
	args = json_object();
	json_object_set_new(args, "reason", utf8_json_string(st->gap_why));
	json_object_set_new(ev, "args", args);
	emit(o, st, ev);
}

static void stream_start(struct dout *o, struct timeline_state *st, const struct drec *r)
{
	json_t *ev, *args;

	st->stream = r->pid;
	st->last = 0;
	st->last_ts[0] = '\0';
	st->key_ok = false;
	st->thread_known = false;
	st->depth = 0;
	st->gap_open = false;
	/* The thread of a stream without sideband: named after the stream. */
	ev = event(st, "M", 0);
	json_object_del(ev, "ts");
	json_object_set_new(ev, "name", json_string("thread_name"));
	args = json_object();
	json_object_set_new(args, "name", utf8_json_string(drec_s1(r)));
	json_object_set_new(ev, "args", args);
	emit(o, st, ev);
}

static void one(struct dout *o, const struct drec *r)
{
	struct timeline_state *st = o->state;
	json_t *ev;

	switch (r->kind) {
	case DREC_STREAM:
		stream_start(o, st, r);
		break;
	case DREC_THREAD:
		if (st->thread_known && st->pid == r->pid && st->tid == r->tid)
			break;
		/* What ran on this CPU before ends where the switch was seen. */
		when(st, r);
		end_gap(o, st);
		close_open(o, st);
		st->thread_known = true;
		st->pid = r->pid;
		st->tid = r->tid;
		break;
	case DREC_CALL:
		when(st, r);
		end_gap(o, st);
		if (r->how == DREC_HOW_CALL) {
			/* The name comes as the file spells it (timeline_put()). */
			emit_fast(o, st, 'B', drec_s1(r), r->len1);
		} else {
			ev = event(st, "B", st->last);
			/* An interrupt, a VM exit, untraced time: a frame of its own, named so. */
			char name[1200];

			if (drec_s1(r)[0])
				snprintf(name, sizeof(name), "%s: %s", decode_how_word(r->how),
					 drec_s1(r));
			else
				snprintf(name, sizeof(name), "%s", r->how == DREC_HOW_OFF ?
					 "trace off (interrupt, exception or VM exit)" :
					 decode_how_word(r->how));
			json_object_set_new(ev, "name", utf8_json_string(name));
			json_object_set_new(ev, "cat", json_string(r->how == DREC_HOW_VMEXIT ?
								    "vm" : "interrupt"));
			emit(o, st, ev);
		}
		st->depth++;
		break;
	case DREC_RET:
		when(st, r);
		end_gap(o, st);
		/* A return from a call before the trace began closes nothing. */
		if (st->depth) {
			st->depth--;
			emit_fast(o, st, 'E', NULL, 0);
		}
		break;
	case DREC_GAP:
		/* What was open ends where the gap begins. */
		when(st, r);
		end_gap(o, st);
		close_open(o, st);
		st->gap_open = true;
		st->gap_start = st->last;
		snprintf(st->gap_why, sizeof(st->gap_why), "%s", drec_s1(r));
		break;
	case DREC_END:
		when(st, r);
		end_gap(o, st);
		close_open(o, st);
		break;
	default:
		break;
	}
}

/*
 * one() for each record; a call's "B" and a return's "E" outside a gap (most records)
 * done here, as one() does them, without a call through drec_each() for each.
 */
void timeline_filter(struct dout *o, const uint8_t *data, size_t len)
{
	struct timeline_state *st = o->state;
	const struct drec *r;
	size_t off = 0;

	while ((r = drec_next(data, len, &off))) {
		if (st->gap_open) {
			one(o, r);
		} else if (r->kind == DREC_RET) {
			when(st, r);
			if (st->depth) {
				st->depth--;
				emit_fast(o, st, 'E', NULL, 0);
			}
		} else if (r->kind == DREC_CALL && r->how == DREC_HOW_CALL) {
			when(st, r);
			emit_fast(o, st, 'B', drec_s1(r), r->len1);
			st->depth++;
		} else {
			one(o, r);
		}
	}
}

/*
 * -J 2 and more: what a worker's sink lets go of becomes pieces, each a header and its
 * bytes (padded to 8), for timeline_unframe():
 * - TLP_RECS: records, for timeline_filter() at the merge (a chunk's head; a gap, a
 *   thread switch, a stream's start or end, an interrupt: what depends on the state the
 *   chunk starts in, or is rare);
 * - TLP_SEG: a text segment starts, @t the worker's last time then;
 * - TLP_TEXT: events, each ",\n{...}", at the worker's last time (which is at most the
 *   output's: the restamp);
 * - TLP_COND_E: a return at the least depth the segment reached (@m calls less returns
 *   since it started): its "E" is written only where the depth the segment started at
 *   is more than -@m, as one() writes it only where a call is open;
 * - TLP_SEGEND: @s calls less returns, @m their least, @n the events of TLP_TEXT, @t the
 *   worker's last time and its text.
 */
enum { TLP_RECS = 1, TLP_SEG, TLP_TEXT, TLP_COND_E, TLP_SEGEND };

struct tl_piece {
	uint32_t kind, len;
	int64_t s, m;
	uint64_t t, n;
};

/*
 * The worker's view of its chunk (one chunk at a time a thread; dsink.conv[0] names it):
 * the thread and the last time as the merge will see them after the records it filters,
 * the key its events are spelt from (timeline_state's fields, its own).
 */
static __thread struct {
	uint64_t id;
	struct timeline_state st;
	bool thread_ok;		/* the thread is the worker's st's */
	bool gap_closed;	/* no gap open after the records so far */
	bool text;		/* in a text segment */
	size_t tp;		/* 1 + where the open TLP_TEXT piece's header is in cbuf, or 0 */
	int64_t s, m;
	uint64_t events;
} tlc;
/* Run-wide, so that no two threads' chunks have the same name. */
static uint64_t tlc_serial;

/*
 * Events are spelt straight into cbuf (the waiting output), a window of TL_STAGE bytes at
 * a time past clen, with room for a TLP_TEXT header before it where no piece is open.
 * They were spelt in a stage of the thread's and copied into cbuf: the copy (past the
 * cache: cbuf is cold) was the loop's -J 2 memmove, 2-3 % of the run's samples.
 */
#define TL_STAGE (16u << 10)
_Static_assert(TL_STAGE >= 2 + TIMELINE_EV_MAX + ESC_MAX + 1, "an event fits the window");

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* A piece of @kind with @len bytes of @p after its header (false: out of memory). */
static bool piece(struct dsink *s, struct tl_piece h, const void *p, size_t len)
{
	size_t n = sizeof(h) + pad8(len);
	uint8_t *q = dsink_conv_room(s, n);

	if (!q)
		return false;
	h.len = (uint32_t)len;
	memcpy(q, &h, sizeof(h));
	if (len)
		memcpy(q + sizeof(h), p, len);
	memset(q + sizeof(h) + len, 0, pad8(len) - len);
	s->clen += n;
	return true;
}

/*
 * A window for @o's events at cbuf's end: after the open piece's text, or after room for
 * the header of one that opens with them (win_commit()). Nothing else is written into
 * cbuf until the window is committed (o->buf NULL: none).
 */
static bool win_open(struct dsink *s, struct dout *o)
{
	size_t gap = tlc.tp ? 0 : sizeof(struct tl_piece);
	uint8_t *p = dsink_conv_room(s, gap + TL_STAGE);

	if (!p)
		return false;
	o->buf = p + gap;
	o->len = 0;
	o->cap = TL_STAGE;
	return true;
}

/* The window's events taken into cbuf: the open piece's, or a piece opened for them. */
static void win_commit(struct dsink *s, struct dout *o)
{
	if (o->buf && o->len) {
		if (!tlc.tp) {
			tlc.tp = s->clen + 1;
			s->clen += sizeof(struct tl_piece);
		}
		s->clen += o->len;
	}
	o->buf = NULL;
	o->len = 0;
}

/* Room in a window for an event of @name_len: a new window where the open one is full. */
static bool win_room(struct dsink *s, struct dout *o, size_t name_len)
{
	if (o->buf && o->len + 3 + TIMELINE_EV_MAX + name_len <= o->cap)
		return true;
	win_commit(s, o);
	return win_open(s, o);
}

/*
 * The window's events taken, and the open piece closed as @kind (TLP_TEXT, or TLP_COND_E
 * with @m): at the merge a TLP_TEXT piece is as long as the events of the segment so far,
 * in one write() where it is long, not copied into the output's buffer first.
 */
static bool text_close(struct dsink *s, struct dout *o, uint32_t kind, int64_t m)
{
	struct tl_piece h = { .kind = kind, .m = m };
	size_t at, pad;
	uint8_t *q;

	win_commit(s, o);
	if (!tlc.tp)
		return true;
	at = tlc.tp - 1;
	tlc.tp = 0;
	h.len = (uint32_t)(s->clen - at - sizeof(h));
	pad = pad8(h.len) - h.len;
	q = dsink_conv_room(s, pad);
	if (!q)
		return false;
	memset(q, 0, pad);
	s->clen += pad;
	memcpy(s->cbuf + at, &h, sizeof(h));
	return true;
}

static bool seg_end(struct dsink *s, struct dout *o)
{
	const char *ts = tlc.st.last_ts;

	if (!text_close(s, o, TLP_TEXT, 0))
		return false;
	tlc.text = false;
	return piece(s, (struct tl_piece){ .kind = TLP_SEGEND, .s = tlc.s, .m = tlc.m,
					   .t = tlc.st.last, .n = tlc.events }, ts, strlen(ts) + 1);
}

/* Records turned into a segment at once at most (a piece's length is 32 bits). */
#define TL_TEXT_MAX (64u << 20)

/* A text segment starts, at the worker's last time. */
static bool seg_start(struct dsink *s)
{
	if (!piece(s, (struct tl_piece){ .kind = TLP_SEG, .t = tlc.st.last }, NULL, 0))
		return false;
	tlc.text = true;
	tlc.s = tlc.m = 0;
	tlc.events = 0;
	return true;
}

/* A record outside a segment: what it tells of the thread, the gap and the time. */
static void head_rec(const struct drec *r)
{
	struct timeline_state *st = &tlc.st;

	switch (r->kind) {
	case DREC_STREAM:
		st->stream = r->pid;
		st->last = 0;
		st->last_ts[0] = '\0';
		st->key_ok = false;
		st->thread_known = false;
		tlc.thread_ok = true;
		tlc.gap_closed = true;
		break;
	case DREC_THREAD:
		/* (No time: the merge takes it only from a switch to another thread.) */
		st->thread_known = true;
		st->pid = r->pid;
		st->tid = r->tid;
		tlc.thread_ok = true;
		break;
	case DREC_GAP:
		when(st, r);
		tlc.gap_closed = false;
		break;
	case DREC_CALL:
	case DREC_RET:
	case DREC_END:
		when(st, r);
		tlc.gap_closed = true;
		break;
	default:
		break;
	}
}

int timeline_convert(struct dsink *s, const uint8_t *data, size_t len)
{
	const struct timeline_state *ost = s->out->state;
	struct timeline_state *st = &tlc.st;
	size_t off = 0, at = 0, recs = 0;
	const struct drec *r;
	bool out = false;
	struct dout o;

	if (!s->conv[0]) {
		s->conv[0] = __atomic_add_fetch(&tlc_serial, 1, __ATOMIC_RELAXED);
		memset(&tlc, 0, sizeof(tlc));
		tlc.id = s->conv[0];
		/* Every event after a chunk's head comes after another: the comma. */
		st->any = true;
		tlc.thread_ok = ost->plain;
	} else if (s->conv[0] != tlc.id) {
		return 1;	/* (not this thread's chunk: records, as before) */
	}
	tlc.tp = 0;
	memset(&o, 0, sizeof(o));
	o.fd = -1;
	if (tlc.text && len <= TL_TEXT_MAX) {
		if (!seg_start(s))
			return -ENOMEM;
		out = true;
	} else {
		tlc.text = false;
	}
	for (; (r = drec_next(data, len, &off)); at = off) {
		if (tlc.text) {
			if (r->kind == DREC_CALL && r->how == DREC_HOW_CALL) {
				if (!win_room(s, &o, r->len1))
					return -ENOMEM;
				dsink_ahead(o.buf + o.len);
				when(st, r);
				emit_fast(&o, st, 'B', drec_s1(r), r->len1);
				tlc.s++;
				tlc.events++;
				continue;
			}
			if (r->kind == DREC_RET) {
				when(st, r);
				if (tlc.s > tlc.m) {
					if (!win_room(s, &o, 0))
						return -ENOMEM;
					dsink_ahead(o.buf + o.len);
					emit_fast(&o, st, 'E', NULL, 0);
					tlc.events++;
				} else {
					/* A piece of its own, the events before it theirs. */
					if (!text_close(s, &o, TLP_TEXT, 0) || !win_open(s, &o))
						return -ENOMEM;
					emit_fast(&o, st, 'E', NULL, 0);
					if (!text_close(s, &o, TLP_COND_E, tlc.m))
						return -ENOMEM;
				}
				if (--tlc.s < tlc.m)
					tlc.m = tlc.s;
				continue;
			}
			/* Anything else the merge filters: the segment ends before it. */
			if (!seg_end(s, &o))
				return -ENOMEM;
			recs = at;
		}
		head_rec(r);
		if (tlc.thread_ok && tlc.gap_closed && len <= TL_TEXT_MAX) {
			/* The head ends here: its records, then a segment. */
			if (!piece(s, (struct tl_piece){ .kind = TLP_RECS }, data + recs, off - recs) ||
			    !seg_start(s))
				return -ENOMEM;
			out = true;
		}
	}
	if (tlc.text) {
		/* The next flush goes on in text (a segment of its own). */
		if (!seg_end(s, &o))
			return -ENOMEM;
		tlc.text = true;
		return 0;
	}
	if (!out)
		return 1;	/* all records: as they are, no copy */
	return off > recs && !piece(s, (struct tl_piece){ .kind = TLP_RECS }, data + recs,
				     off - recs) ? -ENOMEM : 0;
}

/* @n bytes of a segment's events: the file's first without its comma, times restamped. */
static void seg_write(struct dout *o, struct timeline_state *st, const char *p, size_t n)
{
	if (!n)
		return;
	if (!st->any) {
		p += 2;
		n -= 2;
		st->any = true;
	}
	/*
	 * Events at a time before the output's last (the worker saw less of the time than
	 * the merge did: a chunk's first events) are at the last, as one() would write them:
	 * rare, so the number is read back, event by event, until one is not before it.
	 */
	while (st->restamp && n) {
		const char *e = n > 3 ? memmem(p + 3, n - 3, ",\n{", 3) : NULL;
		size_t len = e ? (size_t)(e - p) : n;
		const char *ts = memmem(p, len, "\"ts\":", 5);
		char num[TIMELINE_TS_MAX + 1];
		size_t k = 0;

		if (ts) {
			ts += 5;
			while (ts + k < p + len && k < TIMELINE_TS_MAX && ts[k] != ',' &&
			       ts[k] != '}')
				k++;
			memcpy(num, ts, k);
			num[k] = '\0';
		}
		if (!ts || strtod(num, NULL) >= st->last_d) {
			st->restamp = false;
			break;
		}
		dout_write(o, p, (size_t)(ts - p));
		dout_write(o, st->last_ts, strlen(st->last_ts));
		dout_write(o, ts + k, (size_t)(p + len - ts - k));
		p += len;
		n -= len;
	}
	dout_write(o, p, n);
}

void timeline_unframe(struct dout *o, const uint8_t *data, size_t len)
{
	struct timeline_state *st = o->state;
	size_t off = 0;

	while (off + sizeof(struct tl_piece) <= len) {
		struct tl_piece h;
		const char *p;

		memcpy(&h, data + off, sizeof(h));
		off += sizeof(h);
		if (h.len > len - off)
			break;
		p = (const char *)data + off;
		off += pad8(h.len);
		switch (h.kind) {
		case TLP_RECS:
			timeline_filter(o, (const uint8_t *)p, h.len);
			break;
		case TLP_SEG:
			st->seg_depth = st->depth;
			st->restamp = st->last > h.t;
			if (st->restamp) {
				if (!st->last_ts[0])
					ts_text(st->last, st->last_ts);
				st->last_d = strtod(st->last_ts, NULL);
			}
			break;
		case TLP_TEXT:
			seg_write(o, st, p, h.len);
			break;
		case TLP_COND_E:
			if ((int64_t)st->seg_depth + h.m >= 1) {
				seg_write(o, st, p, h.len);
				st->events++;
			}
			break;
		case TLP_SEGEND: {
			st->depth = drec_depth_after(st->seg_depth, h.s, h.m);
			st->events += h.n;
			st->restamp = false;
			if (h.t > st->last) {
				st->last = h.t;
				if (h.len && h.len <= TIMELINE_TS_MAX && !p[h.len - 1])
					memcpy(st->last_ts, p, h.len);
				else
					st->last_ts[0] = '\0';
			}
			break;
		}
		default:
			break;
		}
	}
}
