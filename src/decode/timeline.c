// SPDX-License-Identifier: MIT
/* --timeline: decoder records to Chrome trace events, balanced per thread, gaps marked. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_rec.h"
#include "timeline.h"
#include "utf8.h"

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
	if (r->has_time && r->time > st->last)
		st->last = r->time;
	return st->last;
}

static void close_open(struct dout *o, struct timeline_state *st)
{
	for (; st->depth; st->depth--)
		emit(o, st, event(st, "E", st->last));
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
		ev = event(st, "B", st->last);
		if (r->how == DREC_HOW_CALL) {
			json_object_set_new(ev, "name", utf8_json_string(drec_s1(r)));
		} else {
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
		}
		emit(o, st, ev);
		st->depth++;
		break;
	case DREC_RET:
		when(st, r);
		end_gap(o, st);
		/* A return from a call before the trace began closes nothing. */
		if (st->depth) {
			st->depth--;
			emit(o, st, event(st, "E", st->last));
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

void timeline_filter(struct dout *o, const uint8_t *data, size_t len)
{
	drec_each(o, data, len, one);
}
