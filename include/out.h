/* SPDX-License-Identifier: MIT */
/*
 * Results on stdout, as text or JSON from the same calls: a command says what
 * it prints once, and out_* decides how (bpftool's rule: one code path that
 * asks "json?" at the point of printing).
 *
 * JSON: the calls build a document with jansson, printed whole by
 * out_finish(); a key given twice in one object is a bug and aborts.
 * Text: objects become indented "label: value" lines, arrays "- item" lines;
 * control characters from names and files are shown escaped (printable.h),
 * never sent to the terminal. A NULL label means "same as the key".
 */
#ifndef PTC_OUT_H
#define PTC_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

extern bool out_json;
/*
 * Text as it is, control characters included, when stdout is not a terminal
 * (a file or a pipe that another tool compares, e.g. dump against ptdump).
 */
void out_raw_unless_tty(void);

void out_init(FILE *f, bool json);
/* Print the JSON document (or finish the text) and flush: 0, or -errno when stdout failed. */
int out_finish(void);

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
/* A JSON value as it is (steals the reference); text: its members as lines. */
void out_value(const char *key, const char *label, json_t *val);
/* Text-only line (explanations a human needs and JSON carries elsewhere). */
__attribute__((format(printf, 1, 2))) void out_text(const char *fmt, ...);

#endif
