// SPDX-License-Identifier: MIT
/* --calls: the call/return tree, indented by depth at the merge (decode_rec.h). */
#include <inttypes.h>
#include <stdio.h>
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
	memset(&d, 0, sizeof(d));
	d.kind = (uint8_t)kind;
	d.how = rec->how;
	d.from = rec->from;
	d.to = rec->to;
	d.pid = rec->pid;
	d.tid = rec->tid;
	d.has_time = rec->has_time;
	d.time = rec->has_time ? rec->time : 0;
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

static void indent(struct dout *o, uint64_t depth)
{
	static const char blanks[2 * INDENT_MAX + 1] =
		"                                                                "
		"                                                                ";
	/* "[depth N] " by hand: a deep tree has it on every line. */
	char num[40], *p = num + sizeof(num);

	if (depth > INDENT_MAX) {
		*--p = ' ';
		*--p = ']';
		do {
			*--p = (char)('0' + depth % 10);
			depth /= 10;
		} while (depth);
		p -= 7;
		memcpy(p, "[depth ", 7);
		dout_write(o, blanks, 2 * INDENT_MAX);
		dout_write(o, p, (size_t)(num + sizeof(num) - p));
		return;
	}
	dout_write(o, blanks, (size_t)(2 * depth));
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
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

/*
 * A line of the tree, built by hand: the merge writes every line in order, one thread
 * alone, and snprintf() cost it more than the decoders' work.
 */
static void text_line(struct dout *o, struct calls_state *st, const struct drec *r)
{
	/* The names come escaped (put_rec()). */
	char line[2 * ESC_MAX + 128], *p = line;

	switch (r->kind) {
	case DREC_STREAM:
		if (st->headers) {
			p = put_str(p, "[stream: ");
			p = put_str(p, drec_s1(r));
			p = put_str(p, "]\n");
		}
		dout_write(o, line, (size_t)(p - line));
		return;
	case DREC_CALL:
		p = put_str(p, decode_how_word(r->how));
		*p++ = ' ';
		p = put_str(p, drec_s2(r));
		p = put_str(p, " (0x");
		p = put_hex(p, r->to);
		p = put_str(p, ") from ");
		p = put_str(p, drec_s1(r));
		*p++ = '\n';
		break;
	case DREC_RET:
		p = put_str(p, r->how < DREC_HOW_IRET ? "ret " : decode_how_word(r->how));
		p = put_str(p, " to ");
		p = put_str(p, drec_s2(r));
		p = put_str(p, " (0x");
		p = put_hex(p, r->to);
		p = put_str(p, ") from ");
		p = put_str(p, drec_s1(r));
		*p++ = '\n';
		break;
	case DREC_MARK:
		p = put_str(p, drec_s1(r));
		*p++ = '\n';
		break;
	default:
		return;
	}
	indent(o, st->depth);
	dout_write(o, line, (size_t)(p - line));
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
};
