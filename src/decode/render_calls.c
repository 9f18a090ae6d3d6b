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
 * memcpy() of a name: most are 8 to 32 bytes, copied in two overlapping moves each side,
 * not through libc's call (the copies of names were a twelfth of --calls' time).
 */
static inline void copy_name(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (n >= 16 && n <= 32) {
		memcpy(d, s, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8 && n < 16) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else {
		memcpy(d, s, n);
	}
}

/*
 * A call's or return's record for the text, its names plain (as printable.h prints them)
 * and their lengths known (rrec.from_len, to_len): drec_put_max()'s record, written in
 * place, the names copied once (it cost more than the line the merge makes of it).
 */
static void put_flow(struct dsink *s, const struct rrec *rec, int kind)
{
	size_t l1 = rec->from_len, l2 = rec->to_len;
	size_t len = (sizeof(struct drec) + l1 + 1 + l2 + 1 + 7) & ~(size_t)7;
	uint8_t *p = dsink_room(s, len);
	struct drec *d = (struct drec *)p;

	if (!p)
		return;
	/*
	 * The buffer's lines a few records on, asked for to be written: at -J 2 a sink's
	 * buffer is often a new one (the last went to the merge), cold.
	 */
	__builtin_prefetch(p + 512, 1);
	/*
	 * In place: a header made on the stack and copied was read back in 16 bytes before
	 * its narrower stores had landed.
	 */
	render_drec_init(d, rec, kind);
	d->len = (uint16_t)len;
	d->len1 = (uint16_t)l1;
	d->len2 = (uint16_t)l2;
	/* The padding and s2's NUL: the last 8 bytes, before the names (s2 may reach them). */
	memset(p + len - 8, 0, 8);
	copy_name(p + sizeof(*d), rec->from_name, l1);
	p[sizeof(*d) + l1] = '\0';
	copy_name(p + sizeof(*d) + l1 + 1, rec->to_name, l2);
	dsink_commit(s, len);
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
		if (rec->names_plain)
			put_flow(r->sink, rec, rec->kind == RREC_CALL ? DREC_CALL : DREC_RET);
		else
			put_rec(r, rec, rec->kind == RREC_CALL ? DREC_CALL : DREC_RET,
				rec->from_name, rec->to_name, rec->names_plain);
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


/*
 * What opens a CALL line ("call ", "interrupt ", ...: decode_how_word() and a blank) and
 * a RET line ("ret  to ", "iret to ", ...), by drec_how, and their lengths.
 */
struct how_text {
	const char *s;
	size_t n;
};

#define HOW_TEXT(s) { s, sizeof(s) - 1 }

static const struct how_text how_call[] = {
	[DREC_HOW_CALL] = HOW_TEXT("call "),
	[DREC_HOW_INTR] = HOW_TEXT("interrupt "),
	[DREC_HOW_INT] = HOW_TEXT("int "),
	[DREC_HOW_VMEXIT] = HOW_TEXT("vmexit "),
	[DREC_HOW_OFF] = HOW_TEXT("trace off "),
	[DREC_HOW_RET] = HOW_TEXT("ret "),
	[DREC_HOW_IRET] = HOW_TEXT("iret "),
	[DREC_HOW_VMENTRY] = HOW_TEXT("vmentry "),
	[DREC_HOW_ON] = HOW_TEXT("trace on "),
};

static const struct how_text how_ret[] = {
	[DREC_HOW_CALL] = HOW_TEXT("ret  to "),
	[DREC_HOW_INTR] = HOW_TEXT("ret  to "),
	[DREC_HOW_INT] = HOW_TEXT("ret  to "),
	[DREC_HOW_VMEXIT] = HOW_TEXT("ret  to "),
	[DREC_HOW_OFF] = HOW_TEXT("ret  to "),
	[DREC_HOW_RET] = HOW_TEXT("ret  to "),
	[DREC_HOW_IRET] = HOW_TEXT("iret to "),
	[DREC_HOW_VMENTRY] = HOW_TEXT("vmentry to "),
	[DREC_HOW_ON] = HOW_TEXT("trace on to "),
};

#define HOW_KNOWN (sizeof(how_call) / sizeof(how_call[0]))
_Static_assert(HOW_KNOWN == DREC_HOW_ON + 1, "a text for each drec_how");
_Static_assert(HOW_KNOWN == sizeof(how_ret) / sizeof(how_ret[0]), "both tables");


/*
 * The indentation of @depth: two blanks a level, past INDENT_MAX "[depth N] " by hand.
 * Blanks go 32 at a time, up to 31 past the indentation (the line's room, LINE_FIXED,
 * has them: what follows writes over them). Past INDENT_MAX the number comes from @t, the
 * text of the line before's depth moved by one (depth_text.h), copied 32 bytes at once:
 * through a copy of variable length (a call of memcpy()) it cost a line past INDENT_MAX
 * (the walk's, nearly all) as much as the rest of its indent, and its digits made anew
 * each line two thirds of this function's samples.
 */
static char *put_indent(char *p, uint64_t depth, struct depth_text *t)
{
	static const char blanks[2 * INDENT_MAX + 1] =
		"                                                                "
		"                                                                ";

	if (depth <= INDENT_MAX) {
		for (size_t i = 0; i < 2 * depth; i += 32)
			memcpy(p + i, blanks, 32);
		return p + 2 * depth;
	}
	memcpy(p, blanks, 2 * INDENT_MAX);
	p += 2 * INDENT_MAX;
	depth_text_at(t, depth);
	memcpy(p, t->s, sizeof(t->s));
	return p + t->len;
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
		if (!line)
			return;
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
		p = put_indent(p, st->depth, &st->dtext);
		if (r->how < HOW_KNOWN) {
			p = put_mem(p, how_call[r->how].s, how_call[r->how].n);
		} else {
			p = put_str(p, decode_how_word(r->how));
			*p++ = ' ';
		}
		copy_name(p, drec_s2(r), r->len2);
		p += r->len2;
		p = put_str(p, " (0x");
		p = render_put_hex(p, r->to);
		p = put_str(p, ") from ");
		copy_name(p, drec_s1(r), r->len1);
		p += r->len1;
		*p++ = '\n';
		break;
	case DREC_RET:
		p = put_indent(p, st->depth, &st->dtext);
		if (r->how < HOW_KNOWN) {
			p = put_mem(p, how_ret[r->how].s, how_ret[r->how].n);
		} else {
			p = put_str(p, decode_how_word(r->how));
			p = put_str(p, " to ");
		}
		copy_name(p, drec_s2(r), r->len2);
		p += r->len2;
		p = put_str(p, " (0x");
		p = render_put_hex(p, r->to);
		p = put_str(p, ") from ");
		copy_name(p, drec_s1(r), r->len1);
		p += r->len1;
		*p++ = '\n';
		break;
	default:	/* DREC_MARK */
		p = put_indent(p, st->depth, &st->dtext);
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
 * lets go of records), and the merge only writes them (calls_unframe()). The worker keeps
 * s, the calls less the returns since its chunk started, and m, the least s was: with x0
 * the depth the chunk started at, a line's depth is s + max(x0, -m) (a return at depth 0
 * stays there). From the chunk's turn on x0 is known (dsink_turn() seeds it), as it is
 * after a stream's start; before, the worker guesses x0 = 0 (the chunk has been back at
 * the trace's outermost depth: the depth is s - m) and cuts its lines into frames where
 * -m stays the same, each made at a base depth: in such a frame the depth of each line is
 * the base plus the same offset whatever x0 is, the base being max(the depth before the
 * frame, low), low 1 for a frame that opens with a return below every one before (a new
 * m) and 0 else. The merge knows the depth before each frame: where the base it finds is
 * the guessed one (ptgen's loop: always) it writes the frame whole, else it indents each
 * line again (each line's length and kind follow the frame's text). Where the guesses
 * keep failing (ptwalk: the depth grows over the trace) the workers stop guessing and
 * hand over records until their turn, which the merge makes into lines, as before.
 */
struct cframe {
	uint32_t len;		/* the text's bytes, after this header */
	uint32_t lines;		/* guessed: its lines, a uint32 each after the text (CLINE) */
	uint64_t end;		/* the depth after it; guessed: the base it was made at */
	int64_t s;		/* guessed: the calls less the returns in it */
	uint32_t low;		/* guessed: the base is max(the depth before, low) */
	uint32_t guessed;
};

/* A guessed frame's line: its length and what it does to the depth. */
#define CLINE(len, kind) ((uint32_t)(len) << 2 | (kind))
enum { CLINE_MARK, CLINE_CALL, CLINE_RET };

struct calls_conv {
	uint8_t exact;		/* depth is known (else s, m) */
	uint8_t lost;		/* s, m not kept: records until the sink writes itself */
	uint64_t depth;
	int64_t s, m;
};
_Static_assert(sizeof(struct calls_conv) <= sizeof(((struct dsink *)0)->conv),
	       "calls_conv in dsink.conv");

/*
 * How far ahead calls_count() and calls_convert() ask for records: a dozen records of
 * --calls. They were written a flush ago (hundreds of KiB), out of the first level cache.
 */
#define CONV_AHEAD 4096

/* The depth after each of @len bytes of records, as decode_calls_filter() keeps it. */
static void calls_count(struct calls_conv *c, const uint8_t *data, size_t len)
{
	const struct drec *r;
	size_t off = 0;

	while ((r = drec_next(data, len, &off))) {
		/* Each record's length says where the next starts: asked for ahead. */
		__builtin_prefetch((const uint8_t *)r + CONV_AHEAD);
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

/*
 * Guessed lines the merge indented again that the workers still guess past: a few
 * chunks' worth, and a quarter of those it found right.
 */
#define GUESS_SLACK (1u << 20)

static bool guessing(const struct calls_state *ost)
{
	uint64_t hit = __atomic_load_n(&ost->guess_hit, __ATOMIC_RELAXED);
	uint64_t miss = __atomic_load_n(&ost->guess_miss, __ATOMIC_RELAXED);

	return miss <= GUESS_SLACK + hit / 4;
}

/*
 * calls_convert()'s lines are made straight in cbuf, the waiting output (tens of MiB a
 * worker, taken by the merge later), its lines asked for DSINK_AHEAD bytes ahead
 * (prefetchw), as dsink_room() does: cbuf is cold, and each new line was read from memory
 * as a store reached it. Before (the lines made in a small buffer of the thread's and
 * copied into cbuf past the cache) the copy was 730 of the loop's 12,700 profile samples
 * (-J 2); made here, the loop's -J 2 --calls took 0.959x that CPU (7 pairs), and with
 * the hint 0.920x the CPU of without it. CONV_WINDOW: the room made at a time, more than
 * a line can be (LINE_FIXED and two escaped names).
 */
#define CONV_WINDOW (16u << 10)
_Static_assert(CONV_WINDOW >= LINE_FIXED + 2 * ESC_MAX, "a line fits the window");

/* A guessed frame's CLINE()s until it is closed (grown as needed, freed by calls_convert()). */
static __thread uint32_t *cline;
static __thread size_t cline_cap;

/* The frame calls_convert() writes: its header's place in cbuf, and what it holds. */
struct cwrite {
	struct dout o;		/* its lines, in cbuf past clen */
	size_t at;
	struct cframe h;
	int64_t s0;		/* guessed: the chunk's s where it opened */
};

/* The lines so far taken into cbuf (clen), and room made after them for the next. */
static bool out_flush(struct dsink *s, struct cwrite *w)
{
	uint8_t *p;

	s->clen += w->o.len;
	w->o.len = 0;
	p = dsink_conv_room(s, CONV_WINDOW);
	if (!p)
		return false;
	w->o.buf = p;
	return true;
}

static int frame_open(struct dsink *s, struct cwrite *w, const struct calls_conv *c,
		      uint32_t low)
{
	if (!dsink_conv_room(s, sizeof(w->h)))
		return -ENOMEM;
	w->at = s->clen;
	s->clen += sizeof(w->h);
	memset(&w->h, 0, sizeof(w->h));
	if (!c->exact) {
		uint64_t base = (uint64_t)(c->s - c->m);

		w->h.guessed = 1;
		w->h.low = low;
		w->h.end = base > low ? base : low;
		w->s0 = c->s;
	}
	return out_flush(s, w) ? 0 : -ENOMEM;
}

static int frame_close(struct dsink *s, struct cwrite *w, const struct calls_conv *c)
{
	size_t text;

	if (!out_flush(s, w))
		return -ENOMEM;
	text = s->clen - w->at - sizeof(w->h);
	if (w->h.guessed) {
		size_t n = (size_t)w->h.lines * sizeof(*cline);

		if (n) {	/* a frame without lines has no line table (cline may be NULL) */
			uint8_t *p = dsink_conv_room(s, n);

			if (!p)
				return -ENOMEM;
			memcpy(p, cline, n);
			s->clen += n;
		}
		w->h.s = c->s - w->s0;
	} else {
		w->h.end = c->depth;
	}
	w->h.len = (uint32_t)text;
	memcpy(s->cbuf + w->at, &w->h, sizeof(w->h));
	return 0;
}

/* A guessed frame's line of @n bytes (none for records without a line). */
static bool cline_add(struct cwrite *w, size_t n, unsigned kind)
{
	if (!n)
		return true;
	if (w->h.lines == cline_cap) {
		size_t cap = cline_cap ? 2 * cline_cap : 4096;
		uint32_t *p = realloc(cline, cap * sizeof(*p));

		if (!p)
			return false;
		cline = p;
		cline_cap = cap;
	}
	cline[w->h.lines++] = CLINE(n, kind);
	return true;
}

static int convert(struct dsink *s, const uint8_t *data, size_t len)
{
	const struct calls_state *ost = s->out->state;
	struct calls_state st = { .line = text_line, .headers = ost->headers };
	struct calls_conv c;
	struct cwrite w;
	const struct drec *r;
	size_t off = 0;
	uint64_t x0;
	int ret;

	memcpy(&c, s->conv, sizeof(c));
	/*
	 * Not guessing: records until the chunk's turn makes its sink write itself
	 * (merge_turn() promotes an output with a seed at once), so what they do to the
	 * depth is not counted: reading them again for it (walk, -J 2: half the records)
	 * cost more than the merge's lines of them.
	 */
	if (c.lost)
		return 1;
	if (!c.exact && dsink_seeded(s, &x0)) {
		c.exact = 1;
		c.depth = drec_depth_after(x0, c.s, c.m);
	}
	if (!c.exact && !guessing(ost)) {
		c.lost = 1;
		memcpy(s->conv, &c, sizeof(c));
		return 1;
	}
	/* (A frame's length is 32 bits: records of a huge flush go as they are.) */
	if (len > CONV_MAX) {
		/* Records, for the merge; what they do to the depth kept. */
		calls_count(&c, data, len);
		memcpy(s->conv, &c, sizeof(c));
		return 1;
	}
	/*
	 * The lines go into cbuf through one dout set up here, its room made before each:
	 * set up for each record (a memset, rep stos), it cost more than the line (-J 2
	 * --calls on the walk of bench/decode: calls_convert() 3.4 % of the run's samples,
	 * more than text_line()). frame_open() gives it its room.
	 */
	memset(&w.o, 0, sizeof(w.o));
	w.o.fd = -1;
	w.o.cap = CONV_WINDOW;
	ret = frame_open(s, &w, &c, 0);
	if (ret)
		return ret;
	while ((r = drec_next(data, len, &off))) {
		size_t need = LINE_FIXED + r->len1 + r->len2, at;
		unsigned kind = CLINE_MARK;

		/* Each record's length says where the next starts: asked for ahead. */
		__builtin_prefetch((const uint8_t *)r + CONV_AHEAD);

		if (!c.exact && (r->kind == DREC_STREAM ||
				 (r->kind == DREC_RET && c.s - 1 < c.m))) {
			/*
			 * A stream's start makes the depth known; a return below every one
			 * before opens a frame whose base is at least 1.
			 */
			ret = frame_close(s, &w, &c);
			if (ret)
				return ret;
			if (r->kind == DREC_STREAM)
				c.exact = 1;
			ret = frame_open(s, &w, &c, 1);
			if (ret)
				return ret;
		}
		/* Room for the line: text_line() writes it without a flush. */
		if (w.o.len + need > w.o.cap) {
			if (!out_flush(s, &w))
				return -ENOMEM;
		}
		at = w.o.len;
		dsink_ahead(w.o.buf + w.o.len);
		if (c.exact) {
			if (r->kind == DREC_STREAM)
				c.depth = 0;
			else if (r->kind == DREC_RET && c.depth)
				c.depth--;
			st.depth = c.depth;
			text_line(&w.o, &st, r);
			if (r->kind == DREC_CALL)
				c.depth++;
			continue;
		}
		if (r->kind == DREC_RET) {
			kind = CLINE_RET;
			if (--c.s < c.m)
				c.m = c.s;
		}
		st.depth = (uint64_t)(c.s - c.m);
		text_line(&w.o, &st, r);
		if (r->kind == DREC_CALL) {
			kind = CLINE_CALL;
			c.s++;
		}
		if (!cline_add(&w, w.o.len - at, kind))
			return -ENOMEM;
	}
	ret = frame_close(s, &w, &c);
	if (ret)
		return ret;
	memcpy(s->conv, &c, sizeof(c));
	return 0;
}

static int calls_convert(struct dsink *s, const uint8_t *data, size_t len)
{
	int ret = convert(s, data, len);

	/* A worker's thread ends with no hook of ours: its line table goes with each convert. */
	free(cline);
	cline = NULL;
	cline_cap = 0;
	return ret;
}

/*
 * A guessed frame whose base was not the one found: each line indented again, at @base
 * and the line's offset (its own indentation was @guess's and the offset).
 */
static void unframe_again(struct dout *o, const uint8_t *text, const uint8_t *lines,
			  uint32_t n, uint64_t base, uint64_t guess)
{
	char ind[LINE_FIXED];
	struct depth_text tw = { 0 }, tn = { 0 };
	int64_t off = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t l;
		size_t was, now;

		memcpy(&l, lines + (size_t)i * sizeof(l), sizeof(l));
		if ((l & 3) == CLINE_RET)
			off--;
		was = (size_t)(put_indent(ind, guess + off, &tw) - ind);
		now = (size_t)(put_indent(ind, base + off, &tn) - ind);
		if (was > l >> 2)
			was = l >> 2;
		dout_write(o, ind, now);
		dout_write(o, text + was, (l >> 2) - was);
		text += l >> 2;
		if ((l & 3) == CLINE_CALL)
			off++;
	}
}

static void calls_unframe(struct dout *o, const uint8_t *data, size_t len)
{
	struct calls_state *st = o->state;
	size_t off = 0;

	while (off + sizeof(struct cframe) <= len) {
		struct cframe h;
		uint64_t base;
		size_t nl;

		memcpy(&h, data + off, sizeof(h));
		off += sizeof(h);
		if (h.len > len - off)
			break;
		if (!h.guessed) {
			dout_write(o, data + off, h.len);
			off += h.len;
			st->depth = h.end;
			continue;
		}
		nl = (size_t)h.lines * sizeof(uint32_t);
		if (nl > len - off - h.len)
			break;
		base = st->depth > h.low ? st->depth : h.low;
		if (base == h.end) {
			dout_write(o, data + off, h.len);
			__atomic_store_n(&st->guess_hit, st->guess_hit + h.len, __ATOMIC_RELAXED);
		} else {
			unframe_again(o, data + off, data + off + h.len, h.lines, base, h.end);
			__atomic_store_n(&st->guess_miss, st->guess_miss + h.len,
					 __ATOMIC_RELAXED);
		}
		st->depth = (uint64_t)((int64_t)base + h.s);
		off += h.len + nl;
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
