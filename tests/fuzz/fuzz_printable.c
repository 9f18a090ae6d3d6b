// SPDX-License-Identifier: MIT
/*
 * Any bytes through the escaper (printable.h): no byte a terminal obeys comes out (C0, DEL,
 * C1 in UTF-8, bytes that are not UTF-8), the result is its own escape, printable_to() into
 * any size writes a prefix of it made of whole escapes, and printable_msg() differs only in
 * the indented continuation lines it keeps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "printable.h"
#include "utf8.h"

static void check_clean(const char *p, bool msg)
{
	for (const char *c = p; *c; ) {
		unsigned char b = (unsigned char)*c;
		size_t n = utf8_seq(c);

		if (!n)
			abort();	/* not UTF-8 */
		if (b == '\n' && msg && c[1] == ' ' && c[2] == ' ') {
			c++;
			continue;
		}
		if (b < 0x20 || b == 0x7f || (b == 0xc2 && (unsigned char)c[1] < 0xa0))
			abort();
		c += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = strndup((const char *)data, size), *p, *again, *m, buf[64];
	size_t cap = size ? data[0] % sizeof(buf) + 1 : sizeof(buf), n;

	if (!s)
		return 0;
	p = printable(s);
	m = printable_msg(s);
	if (!p || !m)
		abort();
	check_clean(p, false);
	check_clean(m, true);
	again = printable(p);
	if (!again || strcmp(again, p))
		abort();
	n = printable_to(buf, cap, s);
	if (n >= cap || buf[n] || strncmp(buf, p, n))
		abort();
	/* Whole escapes: what follows the prefix in @p is where an escape (or a character) starts. */
	if (p[n] && n + 1 < cap && p[n] != '\\' && utf8_seq(p + n) && n + utf8_seq(p + n) < cap)
		abort();
	free(again);
	free(m);
	free(p);
	free(s);
	return 0;
}
