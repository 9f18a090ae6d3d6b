// SPDX-License-Identifier: MIT
/* --calls: the call/return tree, indented by depth at the merge (decode_rec.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode_rec.h"
#include "printable.h"
#include "render.h"

#define NAME_MAX_LEN 1024
/* Deeper than this is shown as a number: a runaway depth must not print megabytes of blanks. */
#define INDENT_MAX 64

/* Names escaped for the text (printable.h): at most 4 bytes a byte of a 1024-byte name. */
#define ESC_MAX (4 * NAME_MAX_LEN + 1)

static void escaped(char *buf, const char *s)
{
	char raw[NAME_MAX_LEN + 1];
	size_t n = s ? strnlen(s, NAME_MAX_LEN) : 0;

	memcpy(raw, s ? s : "", n);
	raw[n] = '\0';
	printable_to(buf, ESC_MAX, raw);
}

/*
 * A record for the merge. The text's names are escaped here, in the chunk's thread, not
 * at the merge (one thread for every line): the same bytes, as the merge escaped a name
 * cut at 1024 bytes; names the decoder found plain (@plain: shorter, and printable ASCII
 * only) are their own escape. JSON's are kept as they are.
 */
static void put_rec(struct render *r, const struct rrec *rec, int kind, const char *s1,
		    const char *s2, bool plain)
{
	char a[ESC_MAX], b[ESC_MAX];
	struct drec d;

	if (r->ops->json) {
		render_drec(r->sink, rec, kind, s1, s2);
		return;
	}
	if (!plain) {
		escaped(a, s1);
		escaped(b, s2);
		s1 = a;
		s2 = b;
	}
	render_drec_init(&d, rec, kind);
	drec_put_max(r->sink, &d, s1, s2, ESC_MAX);
}

/* In the chunk: records for the merge; events and errors as the lines --insn has. */
void render_calls_put(struct render *r, const struct rrec *rec)
{
	char text[320], line[400];

	switch (rec->kind) {
	case RREC_STREAM: {
		struct rrec h = { .kind = RREC_STREAM, .pid = rec->stream };

		put_rec(r, &h, DREC_STREAM, rec->stream_name, NULL, false);
		return;
	}
	case RREC_CALL:
	case RREC_RETURN:
		/* Out of traced code and back: the [disabled] and [resumed] lines say so. */
		if (rec->how == DREC_HOW_OFF || rec->how == DREC_HOW_ON)
			return;
		put_rec(r, rec, rec->kind == RREC_CALL ? DREC_CALL : DREC_RET, rec->from_name,
			rec->to_name, rec->names_plain);
		return;
	case RREC_EVENT:
		render_event_text(rec->event, r->cfg->event_ip ? RENDER_EV_IP : 0, text,
				  sizeof(text));
		if (!text[0])
			return;
		snprintf(line, sizeof(line), "[%s]", text);
		break;
	case RREC_EOT:
		snprintf(line, sizeof(line), "[end of trace]");
		break;
	case RREC_ERROR:
		snprintf(line, sizeof(line), "[%" PRIx64 ", %" PRIx64 ": %s]", rec->offset, rec->to,
			 rec->name);
		break;
	default:
		return;
	}
	put_rec(r, &(struct rrec){ .pid = rec->pid, .tid = rec->tid, .has_time = rec->has_time,
				   .time = rec->time }, DREC_MARK, line, NULL, false);
}

static char *put_mem(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

static char *put_str(char *p, const char *s)
{
	return put_mem(p, s, strlen(s));
}

static char *put_hex(char *p, uint64_t v)
{
	char t[16];
	int n = 0;

	do {
		t[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = t[--n];
	return p;
}

/* The indentation of @depth: two blanks a level, past INDENT_MAX "[depth N] " by hand. */
static char *put_indent(char *p, uint64_t depth)
{
	static const char blanks[2 * INDENT_MAX + 1] =
		"                                                                "
		"                                                                ";
	char num[24], *q = num + sizeof(num);

	if (depth <= INDENT_MAX)
		return put_mem(p, blanks, (size_t)(2 * depth));
	do {
		*--q = (char)('0' + depth % 10);
		depth /= 10;
	} while (depth);
	p = put_mem(p, blanks, 2 * INDENT_MAX);
	p = put_str(p, "[depth ");
	p = put_mem(p, q, (size_t)(num + sizeof(num) - q));
	return put_str(p, "] ");
}

/* The longest line but its names: the indentation, the words, an address. */
#define LINE_FIXED (2 * INDENT_MAX + 32 + 64)

/*
 * A line of the tree, built by hand in the output's buffer: the merge writes every line
 * in order, one thread alone, and snprintf() and copies cost it more than the decoders'
 * work. The names come escaped (put_rec()), their lengths in the record.
 */
static void text_line(struct dout *o, struct calls_state *st, const struct drec *r)
{
	size_t need = LINE_FIXED + r->len1 + r->len2;
	char *line, *p;

	if (r->kind != DREC_STREAM && r->kind != DREC_CALL && r->kind != DREC_RET &&
	    r->kind != DREC_MARK)
		return;
	if (r->kind == DREC_STREAM && !st->headers)
		return;
	if (o->err)
		return;
	if (o->len + need > o->cap && dout_flush(o))
		return;
	if (need > o->cap) {
		/* Longer than the buffer (names of kilobytes): built apart. */
		line = malloc(need);
		if (!line) {
			o->err = -ENOMEM;
			return;
		}
	} else {
		line = (char *)o->buf + o->len;
	}
	p = line;
	switch (r->kind) {
	case DREC_STREAM:
		p = put_str(p, "[stream: ");
		p = put_mem(p, drec_s1(r), r->len1);
		p = put_str(p, "]\n");
		break;
	case DREC_CALL:
		p = put_indent(p, st->depth);
		p = put_str(p, decode_how_word(r->how));
		*p++ = ' ';
		p = put_mem(p, drec_s2(r), r->len2);
		p = put_str(p, " (0x");
		p = put_hex(p, r->to);
		p = put_str(p, ") from ");
		p = put_mem(p, drec_s1(r), r->len1);
		*p++ = '\n';
		break;
	case DREC_RET:
		p = put_indent(p, st->depth);
		p = put_str(p, r->how < DREC_HOW_IRET ? "ret " : decode_how_word(r->how));
		p = put_str(p, " to ");
		p = put_mem(p, drec_s2(r), r->len2);
		p = put_str(p, " (0x");
		p = put_hex(p, r->to);
		p = put_str(p, ") from ");
		p = put_mem(p, drec_s1(r), r->len1);
		*p++ = '\n';
		break;
	default:	/* DREC_MARK */
		p = put_indent(p, st->depth);
		p = put_mem(p, drec_s1(r), r->len1);
		*p++ = '\n';
		break;
	}
	if (line == (char *)o->buf + o->len) {
		o->len += (size_t)(p - line);
	} else {
		dout_write(o, line, (size_t)(p - line));
		free(line);
	}
}

/*
 * -J 2 and more: a chunk's worker prints its lines itself (calls_convert(), as its sink
 * lets go of records) once it knows the depth they are at, and the merge only writes
 * them (calls_unframe()); the records before go through decode_calls_filter() at the
 * merge, as they did. The depth is known after a stream's start, or from the chunk's
 * turn on (dsink_turn() seeds the depth x0 it started at): the worker keeps, over the
 * records it let go of, s the calls less the returns since the chunk started and m the
 * least s was, and the depth then is x0 + s, or s - m where that is more (a return at
 * depth 0 stays there).
 */
struct cframe {
	uint32_t len;		/* the text's bytes, after this header */
	uint32_t pad;
	uint64_t end;		/* the depth after it */
};

struct calls_conv {
	uint8_t exact;		/* depth is known (else s, m) */
	uint64_t depth;
	int64_t s, m;
};
_Static_assert(sizeof(struct calls_conv) <= sizeof(((struct dsink *)0)->conv),
	       "calls_conv in dsink.conv");

/* The depth after each of @len bytes of records, as decode_calls_filter() keeps it. */
static void calls_count(struct calls_conv *c, const uint8_t *data, size_t len)
{
	size_t off = 0;

	while (off + sizeof(struct drec) <= len) {
		const struct drec *r = (const struct drec *)(data + off);

		if (r->len < sizeof(*r) || r->len > len - off)
			break;
		off += r->len;
		if (r->kind == DREC_STREAM) {
			c->exact = 1;
			c->depth = 0;
		} else if (r->kind == DREC_CALL) {
			if (c->exact)
				c->depth++;
			else
				c->s++;
		} else if (r->kind == DREC_RET) {
			if (c->exact)
				c->depth -= c->depth > 0;
			else if (--c->s < c->m)
				c->m = c->s;
		}
	}
}

/* Records turned at once at most: their text is far less than 4 GiB. */
#define CONV_MAX (64u << 20)

static int calls_convert(struct dsink *s, const uint8_t *data, size_t len)
{
	const struct calls_state *ost = s->out->state;
	struct calls_state st = { .line = text_line, .headers = ost->headers };
	struct calls_conv c;
	struct cframe h = { 0 };
	size_t off = 0, at;
	uint64_t x0;

	memcpy(&c, s->conv, sizeof(c));
	if (!c.exact && dsink_seeded(s, &x0)) {
		int64_t a = (int64_t)x0 + c.s, b = c.s - c.m;

		c.exact = 1;
		c.depth = (uint64_t)(a > b ? a : b);
	}
	/* (A frame's length is 32 bits: records of a huge flush go as they are.) */
	if (!c.exact || len > CONV_MAX) {
		/* Records, for the merge; what they do to the depth kept. */
		calls_count(&c, data, len);
		memcpy(s->conv, &c, sizeof(c));
		return 1;
	}
	if (!dsink_conv_room(s, sizeof(h)))
		return -ENOMEM;
	at = s->clen;
	s->clen += sizeof(h);
	while (off + sizeof(struct drec) <= len) {
		const struct drec *r = (const struct drec *)(data + off);
		struct dout o;

		if (r->len < sizeof(*r) || r->len > len - off)
			break;
		off += r->len;
		if (r->kind == DREC_STREAM)
			c.depth = 0;
		else if (r->kind == DREC_RET && c.depth)
			c.depth--;
		if (!dsink_conv_room(s, LINE_FIXED + r->len1 + r->len2))
			return -ENOMEM;
		/* Room for the line: text_line() writes it without a flush. */
		memset(&o, 0, sizeof(o));
		o.fd = -1;
		o.buf = s->cbuf;
		o.len = s->clen;
		o.cap = s->ccap;
		st.depth = c.depth;
		text_line(&o, &st, r);
		s->clen = o.len;
		if (r->kind == DREC_CALL)
			c.depth++;
	}
	h.len = (uint32_t)(s->clen - at - sizeof(h));
	h.end = c.depth;
	memcpy(s->cbuf + at, &h, sizeof(h));
	memcpy(s->conv, &c, sizeof(c));
	return 0;
}

static void calls_unframe(struct dout *o, const uint8_t *data, size_t len)
{
	struct calls_state *st = o->state;
	size_t off = 0;

	while (off + sizeof(struct cframe) <= len) {
		struct cframe h;

		memcpy(&h, data + off, sizeof(h));
		off += sizeof(h);
		if (h.len > len - off)
			break;
		dout_write(o, data + off, h.len);
		off += h.len;
		st->depth = h.end;
	}
}

/* A chunk's start depth, at its turn: the depth the output is at. */
static uint64_t calls_seed(struct dout *o)
{
	const struct calls_state *st = o->state;

	return st->depth;
}

static void begin(struct dout *o, const struct decode_config *cfg)
{
	struct calls_state *st = o->state;

	st->line = text_line;
	st->headers = cfg->nr_streams > 1;
}

const struct renderer render_calls = {
	.name = "calls",
	.output = RENDER_OUT,
	.mode = DECODE_CALLS,
	.wants = RENDER_CALLS_WANTS,
	.flags = RENDER_NAMES,
	.put = render_calls_put,
	.filter = decode_calls_filter,
	.state_size = sizeof(struct calls_state),
	.begin = begin,
	.convert = calls_convert,
	.unframe = calls_unframe,
	.seed = calls_seed,
};
