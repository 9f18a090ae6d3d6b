// SPDX-License-Identifier: MIT
/* What every command shares: how bad usage, errors and warnings are said. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "msg.h"

int cmd_bad_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	msg_err("%s%s%s", cmd ? cmd : "", cmd ? ": " : "", buf);
	if (cmd)
		msg_hint("see '%s help %s'", PTC_PROG, cmd);
	else
		msg_hint("see '%s --help'", PTC_PROG);
	return EXIT_USAGE;
}

/*
 * getopt_long leaves the offending argument at argv[optind - 1], except for
 * an unknown short option inside a cluster ("-zq"), which optopt names. A
 * long option's optopt is its value (a letter or an enum), so the argument
 * names it: "--duration", without any "=VALUE".
 */
int cmd_bad_option(const char *cmd, int c, char **argv)
{
	const char *arg = argv[optind - 1];
	bool lng = !strncmp(arg, "--", 2) && (c == ':' || !optopt || optopt > 255 ||
					      strchr(arg, '='));
	char opt[64];

	if (lng)
		snprintf(opt, sizeof(opt), "%.*s", (int)strcspn(arg, "="), arg);
	else
		snprintf(opt, sizeof(opt), "-%c", optopt);
	if (c == ':')
		return cmd_bad_usage(cmd, "option '%s' needs a value", opt);
	if (lng && optopt && strchr(arg, '='))
		return cmd_bad_usage(cmd, "option '%s' takes no value", opt);
	return cmd_bad_usage(cmd, "unknown option '%s'", opt);
}

int cmd_error(const char *cmd, const struct error *e)
{
	msg_err("%s%s%s%s%s", cmd ? cmd : "", cmd ? ": " : "", e->what, e->what[0] ? ": " : "",
		e->why[0] ? e->why : strerror(-e->code));
	if (e->hint[0])
		msg_hint("%s", e->hint);
	return e->usage ? EXIT_USAGE : EXIT_RUNTIME;
}

void cmd_warnings(const char *cmd, const struct warnings *w)
{
	for (int i = 0; w && i < w->nr; i++)
		msg_warn("%s: %s", cmd, w->msg[i]);
}

int cmd_flush_stdout(void)
{
	static bool said;

	/* The error flag stays set once any write to stdout failed. */
	if (fflush(stdout) == 0 && !ferror(stdout))
		return EXIT_OK;
	/* Once: a command that checked, then main, ask again. */
	if (!said)
		msg_err("cannot write the results to standard output: %s",
			strerror(errno ? errno : EIO));
	said = true;
	return EXIT_RUNTIME;
}
