// SPDX-License-Identifier: MIT
/* One printing path for text and JSON results; JSON through jansson. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out.h"
#include "printable.h"
#include "utf8.h"

bool out_json;
static bool raw;	/* text goes out unescaped */

struct level {
	json_t *node;		/* JSON: the container being filled */
	bool array;
	bool first;		/* text: nothing printed in this array yet */
	bool indented;		/* text: this level indents what it holds */
};

static FILE *out_f;
static struct level *stack;
static int depth, cap;		/* stack[0 .. depth-1] are open */
static json_t *root;
static int text_indent;

void out_raw_unless_tty(void)
{
	/* stdout is a stream of its own (cmd_stdout_init()): no fileno. */
	raw = out_f && !isatty(out_f == stdout ? STDOUT_FILENO : fileno(out_f));
}

void out_init(FILE *f, bool json)
{
	out_f = f;
	out_json = json;
	raw = false;
	depth = 0;
	text_indent = 0;
	json_decref(root);
	root = NULL;
}

static struct level *top(void)
{
	return depth ? &stack[depth - 1] : NULL;
}

static void push(json_t *node, bool array, bool indented)
{
	if (depth == cap) {
		struct level *n = realloc(stack, (size_t)(cap ? cap * 2 : 16) * sizeof(*n));

		if (!n)
			abort();	/* a few bytes per level: nothing sensible is left to do */
		stack = n;
		cap = cap ? cap * 2 : 16;
	}
	stack[depth++] = (struct level){ .node = node, .array = array, .first = true,
					 .indented = indented };
	text_indent += indented;
}

/* JSON: put @v into the open container, under @key in an object. */
static void put(const char *key, json_t *v)
{
	struct level *t = top();

	if (!v)
		abort();
	if (!t) {
		json_decref(root);
		root = v;
		return;
	}
	if (t->array) {
		json_array_append_new(t->node, v);
		return;
	}
	if (!key || json_object_get(t->node, key))
		abort();	/* a missing or repeated key is a bug in the command */
	json_object_set_new(t->node, key, v);
}

static void indent(void)
{
	fprintf(out_f, "%*s", 2 * text_indent, "");
}

/* Text: indentation and label (or "- " for the items of a list). */
static void text_label(const char *key, const char *label)
{
	const struct level *t = top();
	const char *l = label ? label : key;

	indent();
	if (t && t->array)
		fputs("- ", out_f);
	else if (l)
		fprintf(out_f, "%s: ", l);
}

void out_obj_begin(const char *key, const char *label)
{
	struct level *t = top();

	if (out_json) {
		json_t *o = json_object();

		put(key, o);
		push(o, false, false);
		return;
	}
	if (t && !t->array) {
		indent();
		fprintf(out_f, "%s:\n", label ? label : key ? key : "?");
	} else if (t && !t->first) {
		fputc('\n', out_f);	/* a blank line between the objects of a list */
	}
	if (t)
		t->first = false;
	/* The top-level object is not indented. */
	push(NULL, false, t != NULL);
}

static void pop(void)
{
	if (!depth)
		return;
	depth--;
	text_indent -= stack[depth].indented;
}

void out_obj_end(void)
{
	pop();
}

void out_arr_begin(const char *key, const char *label)
{
	if (out_json) {
		json_t *a = json_array();

		put(key, a);
		push(a, true, false);
		return;
	}
	indent();
	fprintf(out_f, "%s:\n", label ? label : key ? key : "?");
	push(NULL, true, true);
}

void out_arr_end(void)
{
	pop();
}

static void text_scalar(const char *key, const char *label, const char *val)
{
	const struct level *t = top();
	char *p = printable(val);

	text_label(t && t->array ? NULL : key, t && t->array ? NULL : label);
	fprintf(out_f, "%s\n", p ? p : "?");
	free(p);
}

/* A scalar: @j in a JSON document (stolen), @text in text. */
static void scalar(const char *key, const char *label, json_t *j, const char *text)
{
	if (out_json)
		put(key, j);
	else
		text_scalar(key, label, text);
	if (!out_json)
		json_decref(j);
}

void out_str(const char *key, const char *label, const char *val)
{
	scalar(key, label, val ? utf8_json_string(val) : json_null(), val ? val : "(none)");
}

void out_u64(const char *key, const char *label, uint64_t val)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRIu64, val);
	/* jansson's integers are signed: larger values as strings. */
	scalar(key, label, val <= INT64_MAX ? json_integer((json_int_t)val) : json_string(b), b);
}

void out_i64(const char *key, const char *label, int64_t val)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRId64, val);
	scalar(key, label, json_integer(val), b);
}

void out_hex(const char *key, const char *label, uint64_t val)
{
	char b[32];

	snprintf(b, sizeof(b), "0x%" PRIx64, val);
	scalar(key, label, json_string(b), b);
}

void out_u64s(const char *key, const char *label, uint64_t val)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRIu64, val);
	scalar(key, label, json_string(b), b);
}

void out_bool(const char *key, const char *label, bool val)
{
	scalar(key, label, json_boolean(val), val ? "yes" : "no");
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

/* Text: a JSON value through the calls above, so it reads like the rest. */
static void text_value(const char *key, const char *label, const json_t *v)
{
	const char *k;
	json_t *m;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		out_obj_begin(key, label);
		json_object_foreach((json_t *)v, k, m)
			text_value(k, NULL, m);
		out_obj_end();
		break;
	case JSON_ARRAY:
		out_arr_begin(key, label);
		json_array_foreach(v, i, m)
			text_value(NULL, NULL, m);
		out_arr_end();
		break;
	case JSON_STRING:
		out_str(key, label, json_string_value(v));
		break;
	case JSON_INTEGER:
		out_i64(key, label, json_integer_value(v));
		break;
	case JSON_REAL:
		out_fmt(key, label, "%g", json_real_value(v));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		out_bool(key, label, json_is_true(v));
		break;
	default:
		out_str(key, label, NULL);
	}
}

void out_value(const char *key, const char *label, json_t *val)
{
	if (out_json) {
		put(key, val);
		return;
	}
	text_value(key, label, val);
	json_decref(val);
}

void out_text(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL, *p;

	if (out_json)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	p = s && !raw ? printable(s) : NULL;
	indent();
	if (raw && s) {
		fprintf(out_f, "%s\n", s);
		free(s);
		return;
	}
	fprintf(out_f, "%s\n", p ? p : "?");
	free(p);
	free(s);
}

int out_finish(void)
{
	int ret = 0;

	if (out_json && root) {
		if (json_dumpf(root, out_f, JSON_INDENT(2)) || fputc('\n', out_f) == EOF)
			ret = -EIO;
		json_decref(root);
		root = NULL;
	}
	if (fflush(out_f) || ferror(out_f))
		ret = -(errno ? errno : EIO);
	free(stack);
	stack = NULL;
	depth = cap = 0;
	return ret;
}
