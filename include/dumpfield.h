/* SPDX-License-Identifier: MIT */
/*
 * The typed fields of one dumped item (a trace packet, a sideband record), so
 * that a printer can give them as JSON values without knowing the item: a
 * number, a hex string for 64-bit quantities (addresses, TSC), a string, a
 * boolean. And the one way the dump modules build a line piece by piece.
 */
#ifndef PTC_DUMPFIELD_H
#define PTC_DUMPFIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dump_field_kind {
	DF_U64,		/* a number */
	DF_HEX,		/* a 64-bit value, as "0x..." */
	DF_STR,		/* a string (s) */
	DF_BOOL,	/* true or false (u) */
};

struct dump_field {
	const char *key;
	enum dump_field_kind kind;
	uint64_t u;
	const char *s;
};

#define DUMP_FIELDS_MAX 16

struct dump_fields {
	int n;
	struct dump_field f[DUMP_FIELDS_MAX];
	char buf[160];		/* storage for strings the item does not hold itself */
};

/* Add a field (dropped past DUMP_FIELDS_MAX). @s is kept as a pointer, not copied. */
void dump_field_put(struct dump_fields *f, const char *key, enum dump_field_kind kind,
		    uint64_t u, const char *s);

/* printf at *@n of @line (@len bytes); *@n moves on; a full line is cut, never overrun. */
void dump_appendf(char *line, size_t len, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
