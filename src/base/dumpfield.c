// SPDX-License-Identifier: MIT
/* Typed fields of a dumped item, and line building for the dump modules. */
#include <stdarg.h>
#include <stdio.h>

#include "dumpfield.h"

void dump_field_put(struct dump_fields *f, const char *key, enum dump_field_kind kind,
		    uint64_t u, const char *s)
{
	if (f->n < DUMP_FIELDS_MAX)
		f->f[f->n++] = (struct dump_field){ .key = key, .kind = kind, .u = u, .s = s };
}

void dump_appendf(char *line, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*n >= len)
		return;
	va_start(ap, fmt);
	w = vsnprintf(line + *n, len - *n, fmt, ap);
	va_end(ap);
	if (w > 0)
		*n += (size_t)w;
}
