/* SPDX-License-Identifier: MIT */
/*
 * Subcommands. Each is `int do_X(int argc, char **argv)` with argv[0] the
 * command name, returning an exit code (msg.h), and `void usage_X(FILE *)`.
 */
#ifndef PTC_CMD_H
#define PTC_CMD_H

#include <stdio.h>

struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *f);
	const char *summary;
};

int do_caps(int argc, char **argv);
void usage_caps(FILE *f);
int do_record(int argc, char **argv);
void usage_record(FILE *f);
int do_info(int argc, char **argv);
void usage_info(FILE *f);
int do_dump(int argc, char **argv);
void usage_dump(FILE *f);
int do_symbols(int argc, char **argv);
void usage_symbols(FILE *f);

/* "ptcollect CMD: unknown option ..." + "try 'ptcollect help CMD'"; returns EXIT_USAGE. */
int cmd_bad_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
