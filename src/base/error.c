// SPDX-License-Identifier: MIT
/* struct error: filled by library code, printed by commands. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

int err_vset(struct error *e, int code, bool usage, const char *fmt, va_list ap)
{
	if (!e)
		return code;
	e->code = code;
	e->usage = usage;
	vsnprintf(e->why, sizeof(e->why), fmt, ap);
	return code;
}

int err_usage(struct error *e, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = err_vset(e, -EINVAL, true, fmt, ap);
	va_end(ap);
	return ret;
}

int err_usage_code(struct error *e, int code, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = err_vset(e, code, true, fmt, ap);
	va_end(ap);
	return ret;
}

int err_runtime(struct error *e, int code, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = err_vset(e, code, false, fmt, ap);
	va_end(ap);
	return ret;
}

void err_what(struct error *e, const char *fmt, ...)
{
	char now[sizeof(e->what)], add[sizeof(e->what)];
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	vsnprintf(add, sizeof(add), fmt, ap);
	va_end(ap);
	memcpy(now, e->what, sizeof(now));
	/* A long one is cut at the end: the newest part, in front, matters most. */
	if (now[0]) {
		if (snprintf(e->what, sizeof(e->what), "%s: %s", add, now) < 0)
			e->what[0] = '\0';
	} else {
		memcpy(e->what, add, sizeof(add));
	}
}

void err_hint(struct error *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	vsnprintf(e->hint, sizeof(e->hint), fmt, ap);
	va_end(ap);
}

void err_clear(struct error *e)
{
	if (!e)
		return;
	e->code = 0;
	e->usage = false;
	e->what[0] = e->why[0] = e->hint[0] = '\0';
}

void warn_add(struct warnings *w, const char *fmt, ...)
{
	va_list ap;

	if (!w)
		return;
	if (w->nr == WARN_MAX) {
		w->dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(w->msg[w->nr++], sizeof(w->msg[0]), fmt, ap);
	va_end(ap);
}
