// SPDX-License-Identifier: MIT
/* --json: JSON lines of --insn, --branches and --calls. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_rec.h"
#include "disasm.h"
#include "render.h"
#include "utf8.h"

static const char hexd[] = "0123456789abcdef";

static json_t *json_hex(uint64_t v)
{
	char b[20];

	snprintf(b, 19, "0x%" PRIx64, v);
	return json_string(b);
}

/* A stream's header line, with more than one stream. */
static void stream_line(struct render *r, const struct rrec *rec)
{
	json_t *o;
	char *t;

	if (r->cfg->nr_streams < 2)
		return;
	o = json_pack("{s:o}", "stream", utf8_json_string(rec->stream_name));
	t = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (t && strlen(t) + 1 < 4200) {
		dsink_put(r->sink, t, strlen(t));
		dsink_put(r->sink, "\n", 1);
	}
	free(t);
	json_decref(o);
}

/* ---- --insn --json ---- */

static void insn_line(struct render *r, const struct pt_insn *in, uint64_t offset, uint64_t tsc)
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
	text = disasm_line(r->dis, in, &tlen);
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
	if (r->cfg->show_offset)
		json_object_set_new(o, "offset", json_integer((json_int_t)offset));
	if (r->cfg->show_time)
		json_object_set_new(o, "tsc", json_integer((json_int_t)tsc));
	render_json_line(r->sink, o);
}

static void event_line(struct render *r, const struct pt_event *ev)
{
	render_json_line(r->sink, render_event_json(ev));
}

static void insn_put(struct render *r, const struct rrec *rec)
{
	json_t *o;

	switch (rec->kind) {
	case RREC_STREAM:
		stream_line(r, rec);
		break;
	case RREC_EVENT:
		event_line(r, rec->event);
		break;
	case RREC_ERROR:
		o = json_object();
		json_object_set_new(o, "error", json_string(rec->name));
		json_object_set_new(o, "offset", json_integer((json_int_t)rec->offset));
		json_object_set_new(o, "ip", json_hex(rec->to));
		render_json_line(r->sink, o);
		break;
	default:
		break;
	}
}

const struct renderer render_insn_json = {
	.name = "insn-json",
	.output = RENDER_OUT,
	.mode = DECODE_INSN,
	.json = true,
	.wants = RREC_BIT(RREC_INSN) | RREC_BIT(RREC_STREAM) | RREC_BIT(RREC_EVENT) |
		 RREC_BIT(RREC_ERROR),
	.flags = RENDER_DISASM,
	.put = insn_put,
	.insn = insn_line,
};

/* ---- --branches --json ---- */

/*
 * A branch's line spelt here as jansson spells it (JSON_COMPACT, keys in the order set):
 * through jansson, a line cost two objects, three strings, a printf each and their frees,
 * most of --branches --json's CPU. A type that needs escaping goes through jansson.
 */
static bool branch_line(struct render *r, const struct rrec *rec)
{
	const char *t = rec->name;
	size_t n;
	char *p, *q;

	/* (No type: jansson leaves the key out.) */
	if (!t || (n = strnlen(t, 64)) == 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (t[i] < 0x20 || t[i] > 0x7e || t[i] == '"' || t[i] == '\\')
			return false;
	/* {"from":"0x...","to":"0x...","type":"..."} and a newline: 66 bytes with two 16-digit IPs */
	p = q = (char *)dsink_room(r->sink, 66 + n);
	if (!p)
		return true;	/* (out of memory: the sink says so) */
	memcpy(p, "{\"from\":\"0x", 11);
	p = render_put_hex(p + 11, rec->from);
	memcpy(p, "\",\"to\":\"0x", 10);
	p = render_put_hex(p + 10, rec->to);
	memcpy(p, "\",\"type\":\"", 10);
	p += 10;
	memcpy(p, t, n);
	p += n;
	memcpy(p, "\"}\n", 3);
	p += 3;
	dsink_commit(r->sink, (size_t)(p - q));
	return true;
}

static void branches_put(struct render *r, const struct rrec *rec)
{
	json_t *o;

	if (rec->kind == RREC_STREAM) {
		stream_line(r, rec);
		return;
	}
	if (branch_line(r, rec))
		return;
	o = json_object();
	json_object_set_new(o, "from", json_hex(rec->from));
	json_object_set_new(o, "to", json_hex(rec->to));
	json_object_set_new(o, "type", json_string(rec->name));
	render_json_line(r->sink, o);
}

const struct renderer render_branches_json = {
	.name = "branches-json",
	.output = RENDER_OUT,
	.mode = DECODE_BRANCHES,
	.json = true,
	.wants = RREC_BIT(RREC_BRANCH) | RREC_BIT(RREC_STREAM),
	.put = branches_put,
};

/* ---- --calls --json: the records of --calls, JSON lines at the merge ---- */

static void json_line(struct dout *o, struct calls_state *st, const struct drec *r)
{
	json_t *j = json_object();
	char hex[24], *s;

	switch (r->kind) {
	case DREC_STREAM:
		json_object_set_new(j, "stream", utf8_json_string(drec_s1(r)));
		break;
	case DREC_CALL:
	case DREC_RET:
		/* "call", "return", or what else opened or closed the frame ("interrupt"). */
		json_object_set_new(j, "type", json_string(r->kind == DREC_RET &&
							   r->how < DREC_HOW_IRET ? "return" :
							   decode_how_word(r->how)));
		json_object_set_new(j, "depth", json_integer((json_int_t)st->depth));
		snprintf(hex, sizeof(hex), "0x%" PRIx64, r->from);
		json_object_set_new(j, "from", json_string(hex));
		json_object_set_new(j, "from_sym", utf8_json_string(drec_s1(r)));
		snprintf(hex, sizeof(hex), "0x%" PRIx64, r->to);
		json_object_set_new(j, "to", json_string(hex));
		json_object_set_new(j, "to_sym", utf8_json_string(drec_s2(r)));
		if (r->has_time)
			json_object_set_new(j, "time", json_integer((json_int_t)r->time));
		break;
	case DREC_MARK:
		json_object_set_new(j, "type", json_string("mark"));
		json_object_set_new(j, "depth", json_integer((json_int_t)st->depth));
		json_object_set_new(j, "text", json_string(drec_s1(r)));
		break;
	default:
		json_decref(j);
		return;
	}
	s = json_dumps(j, JSON_COMPACT);
	if (s) {
		dout_write(o, s, strlen(s));
		dout_write(o, "\n", 1);
		free(s);
	}
	json_decref(j);
}


static void calls_begin(struct dout *o, const struct decode_config *cfg)
{
	struct calls_state *st = o->state;

	st->line = json_line;
	st->headers = cfg->nr_streams > 1;
}

const struct renderer render_calls_json = {
	.name = "calls-json",
	.output = RENDER_OUT,
	.mode = DECODE_CALLS,
	.json = true,
	.wants = RENDER_CALLS_WANTS,
	.flags = RENDER_NAMES,
	.put = render_calls_put,
	.filter = decode_calls_filter,
	.state_size = sizeof(struct calls_state),
	.begin = calls_begin,
};
