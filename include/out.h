/* SPDX-License-Identifier: MIT */
/*
 * Results on stdout, as text or JSON from the same calls: a command says what
 * it prints once, and out_* decides how (bpftool's rule: one code path that
 * asks "json?" at the point of printing).
 *
 * Text: objects become indented "label: value" lines, arrays of scalars a
 * comma-separated line. JSON: keys and values, commas and escaping handled.
 * A NULL label means "same as the key".
 */
#ifndef PTC_OUT_H
#define PTC_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

extern bool out_json;

void out_init(FILE *f, bool json);
void out_finish(void);		/* closes JSON, prints the final newline */

void out_obj_begin(const char *key, const char *label);	/* key NULL at top or in arrays */
void out_obj_end(void);
void out_arr_begin(const char *key, const char *label);
void out_arr_end(void);

void out_str(const char *key, const char *label, const char *val);	/* val NULL -> null */
void out_u64(const char *key, const char *label, uint64_t val);
void out_i64(const char *key, const char *label, int64_t val);
void out_hex(const char *key, const char *label, uint64_t val);		/* "0x..." string */
void out_u64s(const char *key, const char *label, uint64_t val);	/* decimal string */
void out_bool(const char *key, const char *label, bool val);
__attribute__((format(printf, 3, 4)))
void out_fmt(const char *key, const char *label, const char *fmt, ...);
/* Text-only line (explanations a human needs and JSON carries elsewhere). */
__attribute__((format(printf, 1, 2))) void out_text(const char *fmt, ...);

/* JSON string escaping for other writers (manifest). */
void out_json_escape(FILE *f, const char *s);

#endif
