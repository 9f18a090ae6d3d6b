// SPDX-License-Identifier: MIT
/* Decoder records, and the --calls filter that indents them by call depth at the merge. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_rec.h"

#define NAME_MAX_LEN 1024
/* Deeper than this is shown as a number: a runaway depth must not print megabytes of blanks. */
#define INDENT_MAX 64

void drec_put(struct dsink *s, const struct drec *hdr, const char *s1, const char *s2)
{
	size_t l1 = s1 ? strnlen(s1, NAME_MAX_LEN) : 0, l2 = s2 ? strnlen(s2, NAME_MAX_LEN) : 0;
	size_t len = (sizeof(*hdr) + l1 + 1 + l2 + 1 + 7) & ~(size_t)7;
	uint8_t *p = dsink_room(s, len);
	struct drec *r = (struct drec *)p;

	if (!p) {
		s->err = s->err ? s->err : -ENOMEM;
		return;
	}
	*r = *hdr;
	r->len = (uint16_t)len;
	r->len1 = (uint16_t)l1;
	r->len2 = (uint16_t)l2;
	memcpy(p + sizeof(*r), s1 ? s1 : "", l1);
	p[sizeof(*r) + l1] = '\0';
	memcpy(p + sizeof(*r) + l1 + 1, s2 ? s2 : "", l2);
	memset(p + sizeof(*r) + l1 + 1 + l2, 0, len - sizeof(*r) - l1 - 1 - l2);
	dsink_commit(s, len);
}

static void indent(struct dout *o, uint64_t depth)
{
	static const char blanks[2 * INDENT_MAX + 1] =
		"                                                                "
		"                                                                ";
	char num[32];

	if (depth > INDENT_MAX) {
		int n = snprintf(num, sizeof(num), "[depth %" PRIu64 "] ", depth);

		dout_write(o, blanks, 2 * INDENT_MAX);
		dout_write(o, num, (size_t)n);
		return;
	}
	dout_write(o, blanks, (size_t)(2 * depth));
}

static void text_line(struct dout *o, struct calls_state *st, const struct drec *r)
{
	char line[2 * NAME_MAX_LEN + 128];
	int n = 0;

	switch (r->kind) {
	case DREC_STREAM:
		if (st->headers)
			n = snprintf(line, sizeof(line), "[stream: %s]\n", drec_s1(r));
		dout_write(o, line, (size_t)(n > 0 ? n : 0));
		return;
	case DREC_CALL:
		n = snprintf(line, sizeof(line), "call %s (0x%" PRIx64 ") from %s\n", drec_s2(r),
			     r->to, drec_s1(r));
		break;
	case DREC_RET:
		n = snprintf(line, sizeof(line), "ret  to %s (0x%" PRIx64 ") from %s\n",
			     drec_s2(r), r->to, drec_s1(r));
		break;
	case DREC_MARK:
		n = snprintf(line, sizeof(line), "%s\n", drec_s1(r));
		break;
	default:
		return;
	}
	indent(o, st->depth);
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	dout_write(o, line, (size_t)(n > 0 ? n : 0));
}

static void json_line(struct dout *o, struct calls_state *st, const struct drec *r)
{
	json_t *j = json_object();
	char hex[24], *s;

	switch (r->kind) {
	case DREC_STREAM:
		json_object_set_new(j, "stream", json_string(drec_s1(r)));
		break;
	case DREC_CALL:
	case DREC_RET:
		json_object_set_new(j, "type", json_string(r->kind == DREC_CALL ? "call" :
							   "return"));
		json_object_set_new(j, "depth", json_integer((json_int_t)st->depth));
		snprintf(hex, sizeof(hex), "0x%" PRIx64, r->from);
		json_object_set_new(j, "from", json_string(hex));
		json_object_set_new(j, "from_sym", json_string(drec_s1(r)));
		snprintf(hex, sizeof(hex), "0x%" PRIx64, r->to);
		json_object_set_new(j, "to", json_string(hex));
		json_object_set_new(j, "to_sym", json_string(drec_s2(r)));
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

void drec_each(struct dout *o, const uint8_t *data, size_t len, drec_fn *fn)
{
	size_t off = 0;

	while (off + sizeof(struct drec) <= len) {
		const struct drec *r = (const struct drec *)(data + off);

		if (r->len < sizeof(*r) || r->len > len - off)
			break;
		fn(o, r);
		off += r->len;
	}
}

static void calls_one(struct dout *o, const struct drec *r)
{
	struct calls_state *st = o->state;

	if (r->kind == DREC_STREAM)
		st->depth = 0;
	/* A return lines up with its call: the depth drops before it is shown. */
	if (r->kind == DREC_RET && st->depth)
		st->depth--;
	if (st->json)
		json_line(o, st, r);
	else
		text_line(o, st, r);
	if (r->kind == DREC_CALL)
		st->depth++;
}

void decode_calls_filter(struct dout *o, const uint8_t *data, size_t len)
{
	drec_each(o, data, len, calls_one);
}
