/* SPDX-License-Identifier: MIT */
/*
 * Subcommands. Each is `int do_X(int argc, char **argv)` with argv[0] the
 * command name, returning an exit code (msg.h), and `void usage_X(FILE *)`.
 * Commands are the only code that prints: results through out.h, problems
 * through the helpers below.
 */
#ifndef PTC_CMD_H
#define PTC_CMD_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "error.h"

enum cmd_arg { CMD_ARG_NONE, CMD_ARG_REQUIRED, CMD_ARG_OPTIONAL };

/*
 * One option of a command, as perf's OPT_* tables: getopt_long's table, the
 * short-option string, the option list of --help and 'ptcollect __options'
 * (what tests/integration/test_options.c checks the man page and the
 * completions against) are all made from one array of these, ended by
 * CMD_OPT_END. An entry without a name is a line of the help text as it is
 * (a heading, a note, "" for an empty line).
 */
struct cmd_option {
	const char *name;	/* the long name, without "--" */
	char letter;		/* the short option, or 0 */
	enum cmd_arg arg;
	const char *metavar;	/* the value's name in --help ("DIR") */
	int val;		/* what the parser hands on: the letter, or an id >= 256 */
	const char *help;	/* --help's text; each '\n' starts an indented line */
};

#define CMD_OPT(l, n, a, m, v, h) \
	{ .name = (n), .letter = (l), .arg = CMD_ARG_##a, .metavar = (m), .val = (v), .help = (h) }
#define CMD_OPT_TEXT(t)		{ .help = (t) }
#define CMD_OPT_HELP		CMD_OPT('h', "help", NONE, NULL, 'h', "this text")
#define CMD_OPT_JSON(h)		CMD_OPT('j', "json", NONE, NULL, 'j', (h))
#define CMD_OPT_END		{ .name = NULL, .help = NULL }

/* A command's syntax: its name, option table, and the text --help prints. */
struct cmd_spec {
	const char *name;
	const struct cmd_option *options;
	void (*usage)(FILE *f);
	bool permute;		/* options may follow operands (decode DIR --calls) */
};

struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const struct cmd_spec *spec;
	const char *summary;
};

/* getopt_long's arguments, made from a table. */
#define CMD_MAX_OPTIONS 64
struct cmd_getopt {
	struct option longopts[CMD_MAX_OPTIONS + 1];
	char shortopts[3 * CMD_MAX_OPTIONS + 3];
};

/* Fill @g from @opts: "+:" (":" with @permute) and each letter with its ':'s. */
void cmd_getopt_init(struct cmd_getopt *g, const struct cmd_option *opts, bool permute);
/* The option list of --help, one option a line (two columns), from @opts. */
void cmd_print_options(FILE *f, const struct cmd_option *opts);
/* The table as 'ptcollect __options' prints it: "CMD --name -x none|required|optional". */
void cmd_print_table(FILE *f, const char *cmd, const struct cmd_option *opts);

#define CMD_GO_ON (-1)
/*
 * What every command does first: read the options of @argv (argv[0] the
 * command) by @spec. --help prints the usage and returns EXIT_OK; --json sets
 * out_json; every other option goes to @fn(ctx, val, optarg), which returns 0
 * to go on or the exit status; a bad option is said (cmd_bad_option). Returns
 * CMD_GO_ON with optind at the first operand, else the exit status.
 */
int cmd_parse_options(const struct cmd_spec *spec, int argc, char **argv,
		      int (*fn)(void *ctx, int val, char *arg), void *ctx);

int do_caps(int argc, char **argv);
void usage_caps(FILE *f);
extern const struct cmd_spec caps_spec;
int do_record(int argc, char **argv);
void usage_record(FILE *f);
extern const struct cmd_spec record_spec;
int do_info(int argc, char **argv);
void usage_info(FILE *f);
extern const struct cmd_spec info_spec;
int do_archive(int argc, char **argv);
void usage_archive(FILE *f);
extern const struct cmd_spec archive_spec;
/* record --archive: archive the bundle @dir just recorded; the exit code archive would give. */
int cmd_archive_bundle(const char *dir);
int do_dump(int argc, char **argv);
void usage_dump(FILE *f);
extern const struct cmd_spec dump_spec;
int do_symbols(int argc, char **argv);
void usage_symbols(FILE *f);
extern const struct cmd_spec symbols_spec;
int do_import(int argc, char **argv);
void usage_import(FILE *f);
extern const struct cmd_spec import_spec;
int do_decode(int argc, char **argv);
void usage_decode(FILE *f);
extern const struct cmd_spec decode_spec;
int do_report(int argc, char **argv);
void usage_report(FILE *f);
extern const struct cmd_spec report_spec;

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
/*
 * stdout made a stream that keeps the first write error (errno) where it
 * happened; main calls it before anything is written. Its descriptor is
 * STDOUT_FILENO (fileno(stdout) is -1).
 */
void cmd_stdout_init(void);
/* That first error writing stdout, 0: none (or stdout is stdio's own). */
int cmd_stdout_errno(void);
/* The results reached stdout: EXIT_OK, else say so (the write's own error) and EXIT_RUNTIME. */
int cmd_flush_stdout(void);

#endif
