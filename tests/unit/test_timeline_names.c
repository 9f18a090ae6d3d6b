// SPDX-License-Identifier: MIT
/*
 * --timeline's call names (timeline_name_json()): a plain name is quoted by hand, any
 * other goes through jansson; both must give what jansson gives for the name cut at
 * 1024 bytes, invalid UTF-8 made U+FFFD (utf8_json_string()).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"
#include "utf8.h"
#include "xorshift.h"

static void same_as_jansson(const char *name)
{
	static char buf[TIMELINE_NAME_JSON_MAX];
	char cut[1025];
	size_t n = strnlen(name, 1024);
	const char *got;
	json_t *j;
	char *want;

	memcpy(cut, name, n);
	cut[n] = '\0';
	j = utf8_json_string(cut);
	cr_assert(j);
	want = json_dumps(j, JSON_ENCODE_ANY);
	json_decref(j);
	cr_assert(want);
	got = timeline_name_json(name, buf);
	cr_assert_str_eq(got, want, "name of %zu bytes", n);
	free(want);
}

Test(timeline_names, plain_and_escaped_names_are_spelled_as_jansson_spells_them)
{
	static const char *const names[] = {
		"", "main", "[unknown] (prog.bin+0x1302e)", "f+0x0", "a/b", "with space",
		"quote\"d", "back\\slash", "tab\there", "nl\n", "\x01", "del\x7f",
		"caf\xc3\xa9", "bad\xff utf8", "\xe2\x80\xa8 line sep", "~}|{`_^]",
	};
	char big[1500];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		same_as_jansson(names[i]);
	/* Cut at 1024 bytes, plain or not. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	same_as_jansson(big);
	big[1023] = '"';
	same_as_jansson(big);
	big[1023] = 'x';
	big[1024] = '"';
	same_as_jansson(big);
}

Test(timeline_names, random_bytes_are_spelled_as_jansson_spells_them)
{
	uint32_t x = 2026;
	char name[40];

	for (int i = 0; i < 20000; i++) {
		size_t n = xorshift32(&x) % (sizeof(name) - 1);

		for (size_t k = 0; k < n; k++) {
			uint32_t r = xorshift32(&x);

			/* Mostly printable, as names are; now and then any byte. */
			name[k] = (char)(r % 16 ? 0x20 + (r >> 8) % 0x5f : 1 + (r >> 8) % 255);
		}
		name[n] = '\0';
		same_as_jansson(name);
	}
}
