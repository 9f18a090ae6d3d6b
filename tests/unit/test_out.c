// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "out.h"
#include "printable.h"

static char *render(bool json, void (*fn)(void))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	out_init(f, json);
	fn();
	out_finish();
	fclose(f);
	return buf;
}

static void sample(void)
{
	out_obj_begin(NULL, NULL);
	out_str("name", "Name", "a\"b\n");
	out_hex("config", NULL, 0x300e601);
	out_bool("ok", NULL, true);
	out_str("filter", NULL, NULL);
	out_obj_begin("pmu", "PMU");
	out_u64("type", NULL, 8);
	out_obj_end();
	out_arr_begin("list", NULL);
	out_u64(NULL, NULL, 1);
	out_u64(NULL, NULL, 2);
	out_arr_end();
	out_obj_end();
}

Test(out, json_object_is_valid_and_escaped)
{
	char *s = render(true, sample);

	cr_assert_str_eq(s, "{\n  \"name\": \"a\\\"b\\n\",\n  \"config\": \"0x300e601\",\n"
			 "  \"ok\": true,\n  \"filter\": null,\n  \"pmu\": {\n    \"type\": 8\n  },\n"
			 "  \"list\": [\n    1,\n    2\n  ]\n}\n");
	free(s);
}

Test(out, text_uses_labels_and_indents_objects)
{
	char *s = render(false, sample);

	/* A newline in a value is shown, not sent: it cannot fake a line. */
	cr_assert_str_eq(s, "Name: a\"b\\n\nconfig: 0x300e601\nok: yes\nfilter: (none)\n"
			 "PMU:\n  type: 8\nlist:\n  - 1\n  - 2\n");
	free(s);
}

static void hostile(void)
{
	out_obj_begin(NULL, NULL);
	out_str("comm", NULL, "\x1b]0;owned\a\x7f");
	out_obj_end();
}

Test(out, text_never_sends_control_characters_to_the_terminal)
{
	char *s = render(false, hostile);

	cr_assert_str_eq(s, "comm: \\x1b]0;owned\\x07\\x7f\n");
	free(s);
}

static void deep(void)
{
	out_obj_begin(NULL, NULL);
	for (int i = 0; i < 40; i++)
		out_arr_begin("a", NULL);
	out_u64(NULL, NULL, 7);
	for (int i = 0; i < 40; i++)
		out_arr_end();
	out_bool("after", NULL, true);
	out_obj_end();
}

Test(out, json_nesting_deeper_than_32_levels_closes_where_it_opened)
{
	char *s = render(true, deep);
	json_error_t je;
	json_t *j = json_loads(s, 0, &je), *a;

	cr_assert(j, "not JSON: %s\n%s", je.text, s);
	a = json_object_get(j, "a");
	for (int i = 1; i < 40; i++)
		a = json_array_get(a, 0);
	cr_expect_eq(json_integer_value(json_array_get(a, 0)), 7);
	cr_expect(json_is_true(json_object_get(j, "after")), "%s", s);
	json_decref(j);
	free(s);
}

/*
 * Bytes that are not UTF-8 (a Latin-1 terminal reads 0x9b as CSI) and C1
 * controls in UTF-8 are escaped too; other UTF-8 goes through as it is.
 */
Test(out, text_escapes_bytes_that_are_not_utf8_and_c1_controls)
{
	char *p = printable("a\x9b" "2J \xc2\x9b" "2J \xff\xfe \xe2\x82\xac \xed\xa0\x80 \xc3");

	cr_assert_str_eq(p, "a\\x9b2J \\u009b2J \\xff\\xfe \xe2\x82\xac \\xed\\xa0\\x80 \\xc3");
	free(p);
}

/* A buffer gets whole escapes or none; what is escaped once does not change again. */
Test(out, printable_to_never_cuts_an_escape_and_is_its_own_escape)
{
	char buf[8], *once, *twice;

	cr_expect_eq(printable_to(buf, sizeof(buf), "ab\x1b[2J"), 7);
	cr_expect_str_eq(buf, "ab\\x1b[");
	cr_expect_eq(printable_to(buf, 4, "a\nb"), 3);
	cr_expect_str_eq(buf, "a\\n");
	cr_expect_eq(printable_to(buf, 3, "a\nb"), 1);
	cr_expect_str_eq(buf, "a");
	once = printable("x\\n\x1b\xc2\x9b\xff\n");
	twice = printable(once);
	cr_expect_str_eq(once, twice);
	free(once);
	free(twice);
}

/* Messages keep their own indented continuation lines; a name's newline starts none. */
Test(out, printable_msg_keeps_only_indented_continuation_lines)
{
	char *p = printable_msg("bad /x\nptcollect: hint: all fine\n  spec\n   ^");

	cr_expect_str_eq(p, "bad /x\\nptcollect: hint: all fine\n  spec\n   ^");
	free(p);
}

static void not_utf8(void)
{
	out_obj_begin(NULL, NULL);
	out_str("comm", NULL, "ab\xff\xc3(");
	out_obj_end();
}

/* jansson refuses a string that is not UTF-8; the bytes that are not become U+FFFD. */
Test(out, json_takes_strings_that_are_not_utf8)
{
	char *s = render(true, not_utf8);

	cr_assert_str_eq(s, "{\n  \"comm\": \"ab\xef\xbf\xbd\xef\xbf\xbd(\"\n}\n");
	free(s);
}
