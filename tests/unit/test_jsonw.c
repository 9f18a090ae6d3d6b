// SPDX-License-Identifier: MIT
/* jsonw.h: the bytes jansson's json_dumps(JSON_INDENT(n)) makes of the same document. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "utf8.h"
#include "xorshift.h"

/* Both writers at once: a value written to @w and made for jansson. */
static uint32_t rnd_state = 12345;

static uint32_t rnd(void)
{
	return xorshift32(&rnd_state);
}

/*
 * A string of @n bytes at most (no NUL) of mostly the kinds that need care; @valid: UTF-8
 * only (a key: jansson takes no other).
 */
static void rnd_text(char *b, size_t n, bool valid)
{
	static const char *const bits[] = { "a", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t",
					    "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac",
					    "\xf0\x9f\x98\x80", " ", "z;",
					    /* not UTF-8 */
					    "\xff", "\xc3", "\xed\xa0\x80", "\xc0\xaf",
					    "\xf4\x90\x80\x80", "\xe2\x82" };
	size_t len = 0;

	while (len < n) {
		const char *p = bits[rnd() % (valid ? 17 : sizeof(bits) / sizeof(bits[0]))];
		size_t l = strlen(p);

		if (len + l > n)
			break;
		memcpy(b + len, p, l);
		len += l;
	}
	b[len] = '\0';
}

static json_t *value(struct jsonw *w, int depth)
{
	char text[64];
	unsigned kind = depth >= 5 ? rnd() % 5 : rnd() % 7;

	switch (kind) {
	case 0:
		rnd_text(text, rnd() % 40, false);
		jsonw_str(w, text);
		return utf8_json_string(text);
	case 1: {
		uint64_t v = (uint64_t)rnd() << 32 | rnd();

		jsonw_u64s(w, v);
		snprintf(text, sizeof(text), "%" PRIu64, v);
		return json_string(text);
	}
	case 2: {
		int64_t v = (int32_t)rnd();

		jsonw_i64(w, v);
		return json_integer(v);
	}
	case 3: {
		bool b = rnd() & 1;

		jsonw_raw(w, b ? "true" : "false");
		return json_boolean(b);
	}
	case 4:
		jsonw_raw(w, "null");
		return json_null();
	case 5: {
		json_t *a = json_array();
		unsigned n = rnd() % 4;

		jsonw_open(w, '[');
		for (unsigned i = 0; i < n; i++)
			json_array_append_new(a, value(w, depth + 1));
		jsonw_close(w, ']');
		return a;
	}
	default: {
		json_t *o = json_object();
		unsigned n = rnd() % 4;

		jsonw_open(w, '{');
		for (unsigned i = 0; i < n; i++) {
			char key[40];

			/* distinct keys: jansson keeps one value a key */
			rnd_text(key, rnd() % 12, true);
			snprintf(key + strlen(key), 8, "#%u", i);
			if (json_object_get(o, key))
				continue;
			jsonw_key(w, key);
			json_object_set_new(o, key, value(w, depth + 1));
		}
		jsonw_close(w, '}');
		return o;
	}
	}
}

static void same_as_jansson(unsigned indent, unsigned docs)
{
	for (unsigned d = 0; d < docs; d++) {
		struct jsonw w;
		json_t *j;
		char *t;

		jsonw_init(&w, indent);
		jsonw_open(&w, d & 1 ? '[' : '{');
		j = d & 1 ? json_array() : json_object();
		for (unsigned i = 0, n = rnd() % 6; i < n; i++) {
			if (d & 1) {
				json_array_append_new(j, value(&w, 1));
			} else {
				char key[16];

				snprintf(key, sizeof(key), "k%u", i);
				jsonw_key(&w, key);
				json_object_set_new(j, key, value(&w, 1));
			}
		}
		jsonw_close(&w, d & 1 ? ']' : '}');
		t = json_dumps(j, JSON_INDENT(indent));
		cr_assert_not_null(t);
		cr_assert(!w.oom);
		cr_assert_eq(w.len, strlen(t), "document %u: %zu bytes, jansson %zu:\n%.*s\n--\n%s",
			     d, w.len, strlen(t), (int)w.len, w.buf, t);
		cr_assert(!memcmp(w.buf, t, w.len), "document %u:\n%.*s\n--\n%s", d, (int)w.len,
			  w.buf, t);
		free(t);
		json_decref(j);
		jsonw_free(&w);
	}
}

Test(jsonw, random_documents_are_spelt_as_json_dumps_spells_them)
{
	same_as_jansson(1, 3000);
	same_as_jansson(2, 1000);
}

Test(jsonw, every_byte_in_a_string_is_escaped_as_jansson_escapes_it)
{
	for (unsigned c = 1; c < 256; c++) {
		char s[4] = { 'x', (char)c, 'y', 0 };
		json_t *j = json_array();
		struct jsonw w;
		char *t;

		jsonw_init(&w, 1);
		jsonw_open(&w, '[');
		jsonw_str(&w, s);
		jsonw_close(&w, ']');
		json_array_append_new(j, utf8_json_string(s));
		t = json_dumps(j, JSON_INDENT(1));
		cr_assert_not_null(t);
		cr_assert(w.len == strlen(t) && !memcmp(w.buf, t, w.len),
			  "byte 0x%02x: %.*s against %s", c, (int)w.len, w.buf, t);
		free(t);
		json_decref(j);
		jsonw_free(&w);
	}
}
