// SPDX-License-Identifier: MIT
/* The escaping of names and quoted text for a terminal (printable.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printable.h"
#include "utf8.h"

/*
 * How a terminal gets the text at @s: written to @o (when not NULL) and its
 * length returned; *@used gets the bytes of @s it stands for.
 */
static size_t one(const char *s, bool msg, char *o, size_t *used)
{
	unsigned char c = (unsigned char)*s;
	size_t n = utf8_seq(s);
	char tmp[16];
	int len;

	*used = n ? n : 1;
	if (c == '\n' && msg && s[1] == ' ' && s[2] == ' ')
		len = 0;
	else if (c == '\n')
		len = snprintf(tmp, sizeof(tmp), "\\n");
	else if (c == '\t')
		len = snprintf(tmp, sizeof(tmp), "\\t");
	else if (c < 0x20 || c == 0x7f || !n)
		len = snprintf(tmp, sizeof(tmp), "\\x%02x", c);
	else if (n == 2 && c == 0xc2 && (unsigned char)s[1] < 0xa0)
		len = snprintf(tmp, sizeof(tmp), "\\u%04x", (unsigned char)s[1]);
	else
		len = 0;
	if (!len) {
		if (o)
			memcpy(o, s, n);
		return n;
	}
	if (o)
		memcpy(o, tmp, (size_t)len);
	return (size_t)len;
}

static char *escape(const char *s, bool msg)
{
	size_t n = 0, used;
	char *o;

	for (const char *c = s; *c; c += used)
		n += one(c, msg, NULL, &used);
	o = malloc(n + 1);
	if (!o)
		return NULL;
	n = 0;
	for (const char *c = s; *c; c += used)
		n += one(c, msg, o + n, &used);
	o[n] = '\0';
	return o;
}

char *printable(const char *s)
{
	return escape(s, false);
}

char *printable_msg(const char *s)
{
	return escape(s, true);
}

size_t printable_to(char *buf, size_t size, const char *s)
{
	size_t n = 0, used, len;

	for (const char *c = s; *c; c += used) {
		/* Printable ASCII stands for itself (what one() says of it, faster). */
		if ((unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f) {
			if (n + 1 >= size)
				break;
			buf[n++] = *c;
			used = 1;
			continue;
		}
		len = one(c, false, NULL, &used);
		if (n + len >= size)
			break;
		one(c, false, buf + n, &used);
		n += len;
	}
	buf[n] = '\0';
	return n;
}
