// SPDX-License-Identifier: MIT
/* UTF-8 as RFC 3629 has it (no overlong forms, no surrogates, nothing past U+10FFFF). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

static bool cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t utf8_seq(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	/* The second byte's range shuts out overlong forms, surrogates, and past U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (!cont(s[i]))
			return 0;
	return n;
}

json_t *utf8_json_string(const char *s)
{
	static const char fffd[] = "\xef\xbf\xbd";
	size_t len = strlen(s), o = 0;
	json_t *j;
	char *buf;

	j = json_string(s);
	if (j)
		return j;
	/* At most three bytes out for every byte in. */
	buf = malloc(3 * len + 1);
	if (!buf)
		return NULL;
	while (*s) {
		size_t n = utf8_seq(s);

		if (n) {
			memcpy(buf + o, s, n);
			o += n;
			s += n;
		} else {
			memcpy(buf + o, fffd, 3);
			o += 3;
			s++;
		}
	}
	buf[o] = '\0';
	j = json_string(buf);
	free(buf);
	return j;
}
