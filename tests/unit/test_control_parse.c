// SPDX-License-Identifier: MIT
/* The control channel's words and its --control spec, as text. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <string.h>

#include "control.h"

struct line_case {
	char line[64];
	int ret;
	enum control_word word;
	char text[32];		/* mark's text, or what the refusal says */
};

static struct line_case lines[] = {
	{ "enable", 1, CONTROL_ENABLE, "" },
	{ "disable", 1, CONTROL_DISABLE, "" },
	{ "snapshot", 1, CONTROL_SNAPSHOT, "" },
	{ "stop", 1, CONTROL_STOP, "" },
	{ "ping", 1, CONTROL_PING, "" },
	{ "status", 1, CONTROL_STATUS, "" },
	{ "  ping \r", 1, CONTROL_PING, "" },
	{ "mark request 42 slow", 1, CONTROL_MARK, "request 42 slow" },
	{ "mark \t tabbed\tin  ", 1, CONTROL_MARK, "tabbed\tin" },
	{ "", 0, 0, "" },
	{ " \t\r", 0, 0, "" },
	{ "PING", -EINVAL, 0, "unknown command 'PING'" },
	{ "pingpong", -EINVAL, 0, "unknown command 'pingpong'" },
	{ "bogus words here", -EINVAL, 0, "unknown command 'bogus'" },
	{ "enable cycles", -EINVAL, 0, "'enable' takes no argument" },
	{ "stop now", -EINVAL, 0, "takes no argument (got 'now')" },
	{ "evlist", -EINVAL, 0, "'evlist' is perf's" },
	{ "mark", -EINVAL, 0, "'mark' needs a text" },
	{ "mark   ", -EINVAL, 0, "'mark' needs a text" },
	{ "mark a\x01z", -EINVAL, 0, "control character at byte 2" },
	{ "\x7f\x80\x1b[2J", -EINVAL, 0, "unknown command '???[2J'" },
};

ParameterizedTestParameters(control_parse, each_line_is_a_command_blank_or_refused)
{
	return cr_make_param_array(struct line_case, lines, sizeof(lines) / sizeof(lines[0]));
}

ParameterizedTest(struct line_case *c, control_parse, each_line_is_a_command_blank_or_refused)
{
	struct control_cmd cmd;
	char why[256] = "";
	int ret = control_parse_line(c->line, strlen(c->line), &cmd, why, sizeof(why));

	cr_assert_eq(ret, c->ret, "'%s': %d (%s)", c->line, ret, why);
	if (ret == 1) {
		cr_expect_eq(cmd.word, c->word);
		cr_expect_str_eq(cmd.text, c->text);
	} else if (ret < 0) {
		cr_expect(strstr(why, c->text), "'%s' not in '%s'", c->text, why);
		for (const char *p = why; *p; p++)
			cr_assert(*p >= 0x20 && *p < 0x7f, "a refusal is one printable line");
	}
}

Test(control_parse, a_line_too_long_is_refused_whole)
{
	static char big[CONTROL_LINE_MAX + 10];
	struct control_cmd cmd;
	char why[256];

	memset(big, 'x', sizeof(big));
	memcpy(big, "mark ", 5);
	cr_assert_eq(control_parse_line(big, sizeof(big), &cmd, why, sizeof(why)), -EINVAL);
	cr_expect(strstr(why, "longer than 4095 bytes"), "%s", why);
	/* The longest line that fits is a command. */
	cr_assert_eq(control_parse_line(big, CONTROL_LINE_MAX - 1, &cmd, why, sizeof(why)), 1);
	cr_expect_eq(strlen(cmd.text), CONTROL_LINE_MAX - 1 - 5);
}

struct spec_case {
	char spec[48];
	int ret;
	bool fifo;
	char ctl[16], ack[16];
	int ctl_fd, ack_fd;
	char says[48];
};

static struct spec_case specs[] = {
	{ "fifo:ctl", 0, true, "ctl", "", -1, -1, "" },
	{ "fifo:/tmp/c,/tmp/a", 0, true, "/tmp/c", "/tmp/a", -1, -1, "" },
	{ "fd:3", 0, false, "", "", 3, -1, "" },
	{ "fd:10,11", 0, false, "", "", 10, 11, "" },
	{ "pipe:x", -EINVAL, 0, "", "", 0, 0, "'pipe:x': unknown kind" },
	{ "fifo:", -EINVAL, 0, "", "", 0, 0, "no CTL path" },
	{ "fifo:,ack", -EINVAL, 0, "", "", 0, 0, "no CTL path" },
	{ "fifo:ctl,", -EINVAL, 0, "", "", 0, 0, "nothing after ','" },
	{ "fifo:a,b,c", -EINVAL, 0, "", "", 0, 0, "more than two parts" },
	{ "fd:", -EINVAL, 0, "", "", 0, 0, "no CTL descriptor" },
	{ "fd:x", -EINVAL, 0, "", "", 0, 0, "CTL is not a descriptor number" },
	{ "fd:-1", -EINVAL, 0, "", "", 0, 0, "CTL is not a descriptor number" },
	{ "fd:3,y", -EINVAL, 0, "", "", 0, 0, "ACK is not a descriptor number" },
	{ "fd:3x", -EINVAL, 0, "", "", 0, 0, "CTL is not a descriptor number" },
	{ "fd:99999999999", -EINVAL, 0, "", "", 0, 0, "CTL is not a descriptor number" },
	{ "", -EINVAL, 0, "", "", 0, 0, "unknown kind" },
};

ParameterizedTestParameters(control_parse, control_spec_is_fifo_or_fd_with_an_optional_ack)
{
	return cr_make_param_array(struct spec_case, specs, sizeof(specs) / sizeof(specs[0]));
}

ParameterizedTest(struct spec_case *c, control_parse,
		  control_spec_is_fifo_or_fd_with_an_optional_ack)
{
	struct control_spec s;
	struct error e = { 0 };

	cr_assert_eq(control_spec_parse(c->spec, &s, &e), c->ret, "'%s': %s", c->spec, e.why);
	if (c->ret) {
		cr_expect(e.usage);
		cr_expect(strstr(e.why, c->says), "'%s' not in '%s'", c->says, e.why);
		cr_expect(strstr(e.hint, "fifo:CTL[,ACK]"), "%s", e.hint);
		return;
	}
	cr_expect_eq(s.fifo, c->fifo);
	cr_expect_str_eq(s.ctl_path, c->ctl);
	cr_expect_str_eq(s.ack_path, c->ack);
	cr_expect_eq(s.ctl_fd, c->ctl_fd);
	cr_expect_eq(s.ack_fd, c->ack_fd);
}
