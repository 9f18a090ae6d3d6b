// SPDX-License-Identifier: MIT
/* A JSON writer with json_dumps()'s layout (jsonw.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "utf8.h"

void jsonw_init(struct jsonw *w, unsigned indent)
{
	memset(w, 0, sizeof(*w));
	w->indent = indent;
}

void jsonw_free(struct jsonw *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

/* Room for @n more bytes; NULL (and oom) when there is none. */
static char *room(struct jsonw *w, size_t n)
{
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 65536;
		char *b;

		while (cap < w->len + n)
			cap *= 2;
		b = realloc(w->buf, cap);
		if (!b) {
			w->oom = true;
			return NULL;
		}
		w->buf = b;
		w->cap = cap;
	}
	return w->buf + w->len;
}

static void put(struct jsonw *w, const char *p, size_t n)
{
	char *d = room(w, n);

	if (d) {
		memcpy(d, p, n);
		w->len += n;
	}
}

/* A newline and @depth levels of indent (json_dumps()' dump_indent()). */
static void newline(struct jsonw *w, unsigned depth)
{
	size_t n = 1 + (size_t)w->indent * depth;
	char *d = room(w, n);

	if (d) {
		d[0] = '\n';
		memset(d + 1, ' ', n - 1);
		w->len += n;
	}
}

/* Before a value or a key: the separator from the element before, and the indent. */
static void element(struct jsonw *w)
{
	if (w->after_key) {
		w->after_key = false;
		return;
	}
	if (!w->depth)
		return;
	if (!(w->empty & (1ull << w->depth)))
		put(w, ",", 1);
	w->empty &= ~(1ull << w->depth);
	newline(w, w->depth);
}

void jsonw_open(struct jsonw *w, char c)
{
	element(w);
	put(w, &c, 1);
	if (w->depth < JSONW_DEPTH)
		w->depth++;
	w->empty |= 1ull << w->depth;
}

void jsonw_close(struct jsonw *w, char c)
{
	if (!(w->empty & (1ull << w->depth)))
		newline(w, w->depth - 1);
	if (w->depth)
		w->depth--;
	put(w, &c, 1);
}

/* @s quoted: json_dumps()' dump_string() of what utf8_json_string() made of it. */
static void quoted(struct jsonw *w, const char *s)
{
	static const char fffd[] = "\xef\xbf\xbd";
	size_t len = strlen(s);
	/* at most six bytes out for a byte in (\u001F), and the quotes */
	char *d = room(w, 6 * len + 2), *e;

	if (!d)
		return;
	e = d;
	*e++ = '"';
	while (*s) {
		unsigned char c = (unsigned char)*s;
		size_t n;

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			*e++ = (char)c;
			s++;
			continue;
		}
		if (c >= 0x80) {
			n = utf8_seq(s);
			if (n) {
				memcpy(e, s, n);
				e += n;
				s += n;
			} else {
				memcpy(e, fffd, 3);
				e += 3;
				s++;
			}
			continue;
		}
		*e++ = '\\';
		switch (c) {
		case '"': *e++ = '"'; break;
		case '\\': *e++ = '\\'; break;
		case '\b': *e++ = 'b'; break;
		case '\f': *e++ = 'f'; break;
		case '\n': *e++ = 'n'; break;
		case '\r': *e++ = 'r'; break;
		case '\t': *e++ = 't'; break;
		default:
			*e++ = 'u';
			*e++ = '0';
			*e++ = '0';
			*e++ = "0123456789ABCDEF"[c >> 4];
			*e++ = "0123456789ABCDEF"[c & 15];
		}
		s++;
	}
	*e++ = '"';
	w->len += (size_t)(e - d);
}

void jsonw_key(struct jsonw *w, const char *k)
{
	element(w);
	quoted(w, k);
	put(w, ": ", 2);
	w->after_key = true;
}

void jsonw_str(struct jsonw *w, const char *s)
{
	element(w);
	quoted(w, s);
}

void jsonw_raw(struct jsonw *w, const char *t)
{
	element(w);
	put(w, t, strlen(t));
}

void jsonw_u64(struct jsonw *w, uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	jsonw_raw(w, b);
}

void jsonw_i64(struct jsonw *w, int64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRId64, v);
	jsonw_raw(w, b);
}

void jsonw_u64s(struct jsonw *w, uint64_t v)
{
	char b[24];
	int n = snprintf(b + 1, sizeof(b) - 1, "%" PRIu64, v);

	b[0] = '"';
	b[n + 1] = '"';
	b[n + 2] = '\0';
	jsonw_raw(w, b);
}
