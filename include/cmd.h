/* SPDX-License-Identifier: MIT */
/*
 * Subcommands. Each is `int do_X(int argc, char **argv)` with argv[0] the
 * command name, returning an exit code (msg.h), and `void usage_X(FILE *)`.
 * Commands are the only code that prints: results through out.h, problems
 * through the helpers below.
 */
#ifndef PTC_CMD_H
#define PTC_CMD_H

#include <stdio.h>

#include "error.h"

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
int do_archive(int argc, char **argv);
void usage_archive(FILE *f);
/* record --archive: archive the bundle @dir just recorded; the exit code archive would give. */
int cmd_archive_bundle(const char *dir);
int do_dump(int argc, char **argv);
void usage_dump(FILE *f);
int do_symbols(int argc, char **argv);
void usage_symbols(FILE *f);
int do_import(int argc, char **argv);
void usage_import(FILE *f);
int do_decode(int argc, char **argv);
void usage_decode(FILE *f);

/* "ptcollect CMD: ..." + "see 'ptcollect help CMD'"; returns EXIT_USAGE. */
int cmd_bad_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * What getopt_long (with a leading ':' in its short options) returned for a
 * bad option: an unknown option, or one missing its value. EXIT_USAGE.
 */
int cmd_bad_option(const char *cmd, int c, char **argv);
/* Print @e once ("ptcollect: CMD: what: why", then its hint); the exit status it implies. */
int cmd_error(const char *cmd, const struct error *e);
/* Print each warning as "ptcollect: warning: CMD: ...". */
void cmd_warnings(const char *cmd, const struct warnings *w);
/* The results reached stdout: EXIT_OK, else say so and EXIT_RUNTIME. */
int cmd_flush_stdout(void);

#endif
