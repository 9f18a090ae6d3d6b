// SPDX-License-Identifier: MIT
/* What every command shares: the bad-usage message. */
#include <stdarg.h>
#include <stdio.h>

#include "cmd.h"
#include "msg.h"

int cmd_bad_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	char buf[512];

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
