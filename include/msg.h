/* SPDX-License-Identifier: MIT */
/*
 * Messages to the user. Everything a command says about a problem goes through
 * here, as "ptcollect: <what>: <why>" on stderr; stdout is left for results, so
 * nothing reaches stdout on error.
 */
#ifndef PTC_MSG_H
#define PTC_MSG_H

#include <stdbool.h>

#define PTC_PROG "ptcollect"

/* Exit codes, one table (man/ptcollect.1 documents it). */
enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,	/* no PMU, permission, kernel refusal, I/O */
	EXIT_USAGE = 2,		/* bad usage or bad input; nothing was opened */
};

/* Quiet mode silences warnings and notes, never errors. */
extern bool msg_quiet;

__attribute__((format(printf, 1, 2))) void msg_err(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void msg_warn(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void msg_hint(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void msg_note(const char *fmt, ...);

#endif
