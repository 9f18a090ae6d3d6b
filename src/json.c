// SPDX-License-Identifier: MIT
/* A strict recursive-descent JSON reader (depth-limited), for manifests. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define JSON_MAX_DEPTH 64

struct parser {
	const char *s;
	size_t len, pos;
	char *err;
	size_t errlen;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
static void fail(struct parser *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (p->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "at byte %zu: %s", p->pos, msg);
	p->failed = true;
}

static void ws(struct parser *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]) && p->s[p->pos])
		p->pos++;
}

static bool lit(struct parser *p, const char *word)
{
	size_t n = strlen(word);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n))
		return false;
	p->pos += n;
	return true;
}

static void put_utf8(char *out, size_t *o, unsigned int cp)
{
	if (cp < 0x80) {
		out[(*o)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*o)++] = (char)(0xc0 | (cp >> 6));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*o)++] = (char)(0xe0 | (cp >> 12));
		out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*o)++] = (char)(0x80 | (cp & 0x3f));
	}
}

static char *string(struct parser *p)
{
	size_t start = ++p->pos, o = 0;
	char *out;

	/* Decoded text is never longer than its source. */
	while (p->pos < p->len && p->s[p->pos] != '"')
		p->pos += p->s[p->pos] == '\\' ? 2 : 1;
	if (p->pos >= p->len) {
		fail(p, "a string is not closed");
		return NULL;
	}
	out = malloc(p->pos - start + 1);
	if (!out) {
		fail(p, "out of memory");
		return NULL;
	}
	for (size_t i = start; i < p->pos; i++) {
		unsigned char c = (unsigned char)p->s[i];

		if (c < 0x20) {
			p->pos = i;
			fail(p, "a control character inside a string");
			free(out);
			return NULL;
		}
		if (c != '\\') {
			out[o++] = (char)c;
			continue;
		}
		c = (unsigned char)p->s[++i];
		switch (c) {
		case '"': case '\\': case '/': out[o++] = (char)c; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u': {
			unsigned int cp = 0;

			for (int k = 1; k <= 4; k++) {
				char h = i + k < p->pos ? p->s[i + k] : 0;

				cp <<= 4;
				if (h >= '0' && h <= '9')
					cp |= (unsigned int)(h - '0');
				else if ((h | 0x20) >= 'a' && (h | 0x20) <= 'f')
					cp |= (unsigned int)((h | 0x20) - 'a' + 10);
				else {
					p->pos = i;
					fail(p, "a \\u escape needs four hex digits");
					free(out);
					return NULL;
				}
			}
			/* \u0000 would end the C string early: refuse it. */
			if (!cp || cp > 0xffff) {
				p->pos = i;
				fail(p, "\\u0000 is not allowed");
				free(out);
				return NULL;
			}
			put_utf8(out, &o, cp);
			i += 4;
			break;
		}
		default:
			p->pos = i;
			fail(p, "an unknown escape \\%c", c ? c : '0');
			free(out);
			return NULL;
		}
	}
	out[o] = '\0';
	p->pos++;
	return out;
}

static struct json *value(struct parser *p, int depth);

static struct json *node(struct parser *p, enum json_type t)
{
	struct json *j = calloc(1, sizeof(*j));

	if (!j)
		fail(p, "out of memory");
	else
		j->type = t;
	return j;
}

static struct json *container(struct parser *p, int depth, bool object)
{
	struct json *j = node(p, object ? JSON_OBJECT : JSON_ARRAY), **tail;
	char close = object ? '}' : ']';

	if (!j)
		return NULL;
	tail = &j->child;
	p->pos++;
	ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return j;
	}
	for (;;) {
		char *key = NULL;
		struct json *v;

		ws(p);
		if (object) {
			if (p->pos >= p->len || p->s[p->pos] != '"') {
				fail(p, "an object member must start with a string key");
				break;
			}
			key = string(p);
			if (!key)
				break;
			ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':') {
				free(key);
				fail(p, "':' expected after a key");
				break;
			}
			p->pos++;
		}
		v = value(p, depth + 1);
		if (!v) {
			free(key);
			break;
		}
		v->key = key;
		*tail = v;
		tail = &v->next;
		ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			return j;
		}
		fail(p, "',' or '%c' expected", close);
		break;
	}
	json_free(j);
	return NULL;
}

static struct json *number(struct parser *p)
{
	const char *start = p->s + p->pos;
	size_t i = p->pos;
	char buf[64];
	struct json *j;

	if (i < p->len && p->s[i] == '-')
		i++;
	if (i >= p->len || p->s[i] < '0' || p->s[i] > '9') {
		fail(p, "unexpected '%c'", p->pos < p->len ? p->s[p->pos] : '?');
		return NULL;
	}
	if (p->s[i] == '0' && i + 1 < p->len && p->s[i + 1] >= '0' && p->s[i + 1] <= '9') {
		fail(p, "a number cannot start with 0");
		return NULL;
	}
	while (i < p->len && strchr("0123456789.eE+-", p->s[i]) && p->s[i])
		i++;
	if (i - p->pos >= sizeof(buf)) {
		fail(p, "a number is too long");
		return NULL;
	}
	memcpy(buf, start, i - p->pos);
	buf[i - p->pos] = '\0';
	j = node(p, JSON_NUMBER);
	if (!j)
		return NULL;
	{
		char *end;

		j->number = strtod(buf, &end);
		if (*end) {
			fail(p, "'%s' is not a number", buf);
			free(j);
			return NULL;
		}
	}
	p->pos = i;
	return j;
}

static struct json *value(struct parser *p, int depth)
{
	struct json *j;

	if (depth > JSON_MAX_DEPTH) {
		fail(p, "nested deeper than %d", JSON_MAX_DEPTH);
		return NULL;
	}
	ws(p);
	if (p->pos >= p->len) {
		fail(p, "a value is missing");
		return NULL;
	}
	switch (p->s[p->pos]) {
	case '{':
		return container(p, depth, true);
	case '[':
		return container(p, depth, false);
	case '"':
		j = node(p, JSON_STRING);
		if (j && !(j->string = string(p))) {
			free(j);
			j = NULL;
		}
		return j;
	default:
		break;
	}
	if (lit(p, "true")) {
		j = node(p, JSON_BOOL);
		if (j)
			j->boolean = true;
		return j;
	}
	if (lit(p, "false"))
		return node(p, JSON_BOOL);
	if (lit(p, "null"))
		return node(p, JSON_NULL);
	return number(p);
}

struct json *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct parser p = { .s = text, .len = len, .err = err, .errlen = errlen };
	struct json *j;

	err[0] = '\0';
	j = value(&p, 0);
	if (j) {
		ws(&p);
		if (p.pos != p.len) {
			fail(&p, "text after the end of the document");
			json_free(j);
			j = NULL;
		}
	}
	return j;
}

void json_free(struct json *j)
{
	while (j) {
		struct json *next = j->next;

		json_free(j->child);
		free(j->string);
		free(j->key);
		free(j);
		j = next;
	}
}

const struct json *json_get(const struct json *obj, const char *key)
{
	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (const struct json *c = obj->child; c; c = c->next)
		if (c->key && !strcmp(c->key, key))
			return c;
	return NULL;
}

const char *json_str(const struct json *obj, const char *key)
{
	const struct json *j = json_get(obj, key);

	return j && j->type == JSON_STRING ? j->string : NULL;
}

uint64_t json_u64(const struct json *obj, const char *key, uint64_t def)
{
	const struct json *j = json_get(obj, key);

	if (j && j->type == JSON_NUMBER && j->number >= 0 && j->number < 18446744073709551616.0)
		return (uint64_t)j->number;
	if (j && j->type == JSON_STRING && j->string[0]) {
		char *end;
		uint64_t v;

		errno = 0;
		v = strtoull(j->string, &end, 0);
		if (!*end && !errno)
			return v;
	}
	return def;
}

bool json_bool(const struct json *obj, const char *key, bool def)
{
	const struct json *j = json_get(obj, key);

	return j && j->type == JSON_BOOL ? j->boolean : def;
}
