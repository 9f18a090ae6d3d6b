// SPDX-License-Identifier: MIT
/* --timeline: decoder records to Chrome trace events, balanced per thread, gaps marked. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_rec.h"
#include "timeline.h"
#include "utf8.h"

/* What drec_put() keeps of a name (decode_rec.c), and its JSON string at most. */
#define NAME_MAX_LEN 1024
#define ESC_MAX (6 * NAME_MAX_LEN + 2)

/* jansson's spelling of @ns in microseconds, what json_real() in an event prints. */
static void ts_text(uint64_t ns, char *buf)
{
	json_t *j = json_real((double)ns / 1000.0);
	char *s = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(16)) :
		NULL;
	size_t n = s ? strnlen(s, TIMELINE_TS_MAX - 1) : 0;

	json_decref(j);
	memcpy(buf, s ? s : "", n);
	buf[n] = '\0';
	free(s);
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
	char text[TIMELINE_TS_MAX];
} ts_cache;

static __thread struct {
	char name[NAME_CACHED];
	char json[6 * NAME_CACHED + 2];
} name_cache[NAME_CACHE];

/* @name (cut as drec_put() cuts it) as a JSON string, quotes included; "" when none. */
static const char *name_json(const char *name, char *buf)
{
	size_t n = strnlen(name, NAME_MAX_LEN), h = 2166136261u, len;
	char cut[NAME_MAX_LEN + 1];
	json_t *j;
	char *s;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	h %= NAME_CACHE;
	if (n < NAME_CACHED && name_cache[h].json[0] && !memcmp(name_cache[h].name, name, n) &&
	    !name_cache[h].name[n])
		return name_cache[h].json;
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
	}
	return buf;
}

void timeline_put(struct dsink *s, const struct drec *hdr, const char *name)
{
	char json[ESC_MAX + 1];
	const char *s1 = name;
	const char *ts = "";

	/*
	 * The time's text only where it differs from the last record's with a time: the
	 * filter reads it only when the time moves on (when()), and spells it itself where
	 * a record has none (a chunk's first, say). The records are a fifth smaller.
	 */
	if (hdr->has_time && (!ts_cache.ok || ts_cache.ns != hdr->time)) {
		ts_text(hdr->time, ts_cache.text);
		ts_cache.ns = hdr->time;
		ts_cache.ok = true;
		ts = ts_cache.text;
	}
	/* A call's event the merge writes by hand (one()): its name as the file has it. */
	if (hdr->kind == DREC_CALL && hdr->how == DREC_HOW_CALL)
		s1 = name_json(name ? name : "", json);
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
