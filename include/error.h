/* SPDX-License-Identifier: MIT */
/*
 * The one way a problem travels up: a library module fills a struct error
 * and returns its negative code; it never prints. The command that called it
 * prints the error once (cmd_error()), and the error decides the exit status:
 * bad input (usage, exit 2) or a runtime failure (exit 1).
 *
 *	what	the input or object at fault: "-m 3,4M", "/tmp/x/manifest.json"
 *	why	what is wrong with it
 *	hint	what to do about it, or "" where nothing useful can be said
 *
 * A layer that knows more about the input adds it in front of what the layer
 * below said (err_what()), so "-m: data size '3' is ..." is built from the
 * value parser's "data size '3' is ..." and record's "-m".
 */
#ifndef PTC_ERROR_H
#define PTC_ERROR_H

#include <stdarg.h>
#include <stdbool.h>

struct error {
	int code;		/* negative errno; 0 while there is no error */
	bool usage;		/* bad input or usage: exit 2, nothing was opened */
	char what[512];
	char why[2048];
	char hint[768];
};

/* Bad input: code -EINVAL, usage set. Returns -EINVAL. */
int err_usage(struct error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Bad input with another code (-ENOENT for a missing file, ...). Returns @code. */
int err_usage_code(struct error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A runtime failure with @code (a negative errno). Returns @code. */
int err_runtime(struct error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The va_list form of the three above: @usage picks the kind. Returns @code. */
int err_vset(struct error *e, int code, bool usage, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
/* Put @fmt in front of what the error is about ("NEW: OLD"). */
void err_what(struct error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Set the hint (replacing one a lower layer gave). */
void err_hint(struct error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void err_clear(struct error *e);

/*
 * Warnings: problems that do not stop the work (a debug file that does not
 * match its binary, a filter on a segment's edge). Collected, printed by the
 * command.
 */
#define WARN_MAX 8

struct warnings {
	int nr;
	int dropped;		/* warnings past WARN_MAX: counted, not kept */
	char msg[WARN_MAX][1024];
};

/* Add a warning; one past WARN_MAX is counted in dropped, to be said as "... and N more". */
void warn_add(struct warnings *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
