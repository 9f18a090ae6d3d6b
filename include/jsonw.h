/* SPDX-License-Identifier: MIT */
/*
 * A JSON writer for large documents, element by element into a buffer, with the bytes
 * jansson's json_dumps(JSON_INDENT(n)) makes of the same document (report --json's 20,000
 * rows: building jansson's objects and dumping them took 16 times the text's time).
 * Strings are spelt as utf8_json_string() and jansson would: invalid UTF-8 as U+FFFD.
 */
#ifndef PTC_JSONW_H
#define PTC_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSONW_DEPTH 63

struct jsonw {
	char *buf;
	size_t len, cap;
	unsigned indent, depth;
	uint64_t empty;		/* bit d: the container at depth d has no element yet */
	bool after_key;		/* the next value is a key's (no separator before it) */
	bool oom;
};

void jsonw_init(struct jsonw *w, unsigned indent);
void jsonw_free(struct jsonw *w);
/* '{' or '[' (a value), and its end */
void jsonw_open(struct jsonw *w, char c);
void jsonw_close(struct jsonw *w, char c);
void jsonw_key(struct jsonw *w, const char *k);
void jsonw_str(struct jsonw *w, const char *s);
/* a value spelt already: a number, true, false, null */
void jsonw_raw(struct jsonw *w, const char *t);
void jsonw_u64(struct jsonw *w, uint64_t v);
void jsonw_i64(struct jsonw *w, int64_t v);
/* the value as a decimal string ("42"), as report prints 64-bit counts */
void jsonw_u64s(struct jsonw *w, uint64_t v);

#endif
