// SPDX-License-Identifier: MIT
/* User-facing messages: one format, one stream (stderr), nothing raw for the terminal. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "msg.h"
#include "printable.h"

bool msg_quiet;

static void vsay(const char *tag, const char *fmt, va_list ap)
{
	char *s = NULL, *p;

	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	/*
	 * Inputs quoted in messages may hold control characters and newlines: show them
	 * escaped, so that no name can start a line (a forged "ptcollect: hint: ...").
	 */
	p = s ? printable_msg(s) : NULL;
	fprintf(stderr, "%s: %s%s\n", PTC_PROG, tag, p ? p : "(out of memory)");
	free(p);
	free(s);
}

void msg_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

void msg_warn(const char *fmt, ...)
{
	va_list ap;

	if (msg_quiet)
		return;
	va_start(ap, fmt);
	vsay("warning: ", fmt, ap);
	va_end(ap);
}

void msg_hint(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("hint: ", fmt, ap);
	va_end(ap);
}

void msg_note(const char *fmt, ...)
{
	va_list ap;

	if (msg_quiet)
		return;
	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}
