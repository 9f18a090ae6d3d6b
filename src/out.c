// SPDX-License-Identifier: MIT
/* One printing path for text and JSON results. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"

#define OUT_MAX_DEPTH 32

bool out_json;

static FILE *out_f;
static int depth;
static bool first[OUT_MAX_DEPTH];	/* no element printed yet at this depth */
static bool in_array[OUT_MAX_DEPTH];
static bool text_array_item[OUT_MAX_DEPTH];	/* text: array of objects, "-" marker due */

void out_init(FILE *f, bool json)
{
	out_f = f;
	out_json = json;
	depth = 0;
	first[0] = true;
	in_array[0] = false;
}

void out_json_escape(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (c < 0x20)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

static void indent(void)
{
	for (int i = 0; i < depth; i++)
		fputs("  ", out_f);
}

/* JSON: separator, newline, indentation and key. */
static void json_key(const char *key)
{
	if (!first[depth])
		fputc(',', out_f);
	first[depth] = false;
	if (depth > 0) {
		fputc('\n', out_f);
		indent();
	}
	if (key && !in_array[depth]) {
		out_json_escape(out_f, key);
		fputs(": ", out_f);
	}
}

/* Text: indentation and label (or "-" for the items of a list). */
static void text_label(const char *key, const char *label)
{
	const char *l = label ? label : key;

	indent();
	if (in_array[depth] && !l)
		fputs("- ", out_f);
	else if (l)
		fprintf(out_f, "%s: ", l);
}

static void push(bool array)
{
	if (depth + 1 < OUT_MAX_DEPTH)
		depth++;
	first[depth] = true;
	in_array[depth] = array;
	text_array_item[depth] = false;
}

void out_obj_begin(const char *key, const char *label)
{
	if (out_json) {
		if (out_f && (depth > 0 || !first[0]))
			json_key(key);
		else
			first[depth] = false;
		fputc('{', out_f);
	} else if (key || label) {
		indent();
		fprintf(out_f, "%s:\n", label ? label : key);
	} else if (in_array[depth] && !first[depth]) {
		fputc('\n', out_f);
	} else if (in_array[depth]) {
		first[depth] = false;
	}
	push(false);
	if (!out_json && !key && !label && depth == 1)
		depth--;	/* the top-level object is not indented in text */
}

static void pop(char close)
{
	bool empty = first[depth];

	if (depth > 0)
		depth--;
	if (out_json) {
		if (!empty) {
			fputc('\n', out_f);
			indent();
		}
		fputc(close, out_f);
	}
}

void out_obj_end(void)
{
	if (!out_json && depth == 0)
		return;
	pop('}');
}

void out_arr_begin(const char *key, const char *label)
{
	if (out_json) {
		json_key(key);
		fputc('[', out_f);
	} else {
		indent();
		fprintf(out_f, "%s:\n", label ? label : key);
	}
	push(true);
}

void out_arr_end(void)
{
	pop(']');
}

static void scalar(const char *key, const char *label, const char *json_val, const char *text_val)
{
	if (out_json) {
		json_key(key);
		fputs(json_val, out_f);
	} else {
		text_label(in_array[depth] ? NULL : key, in_array[depth] ? NULL : label);
		fprintf(out_f, "%s\n", text_val);
	}
}

void out_str(const char *key, const char *label, const char *val)
{
	if (!out_json) {
		scalar(key, label, NULL, val ? val : "(none)");
		return;
	}
	json_key(key);
	if (val)
		out_json_escape(out_f, val);
	else
		fputs("null", out_f);
}

void out_u64(const char *key, const char *label, uint64_t val)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRIu64, val);
	scalar(key, label, b, b);
}

void out_i64(const char *key, const char *label, int64_t val)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRId64, val);
	scalar(key, label, b, b);
}

void out_hex(const char *key, const char *label, uint64_t val)
{
	char b[32], q[40];

	snprintf(b, sizeof(b), "0x%" PRIx64, val);
	snprintf(q, sizeof(q), "\"%s\"", b);
	scalar(key, label, q, b);
}

void out_u64s(const char *key, const char *label, uint64_t val)
{
	char b[32], q[40];

	snprintf(b, sizeof(b), "%" PRIu64, val);
	snprintf(q, sizeof(q), "\"%s\"", b);
	scalar(key, label, q, b);
}

void out_bool(const char *key, const char *label, bool val)
{
	scalar(key, label, val ? "true" : "false", val ? "yes" : "no");
}

void out_fmt(const char *key, const char *label, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	out_str(key, label, s ? s : "");
	free(s);
}

void out_text(const char *fmt, ...)
{
	va_list ap;

	if (out_json)
		return;
	indent();
	va_start(ap, fmt);
	vfprintf(out_f, fmt, ap);
	va_end(ap);
	fputc('\n', out_f);
}

void out_finish(void)
{
	if (out_json)
		fputc('\n', out_f);
	fflush(out_f);
}
