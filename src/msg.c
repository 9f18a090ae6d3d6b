// SPDX-License-Identifier: MIT
/* User-facing messages: one format, one stream (stderr). */
#include <stdio.h>

#include "msg.h"

bool msg_quiet;

static void vsay(const char *tag, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", PTC_PROG, tag);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void msg_verr(const char *fmt, va_list ap)
{
	vsay("", fmt, ap);
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
