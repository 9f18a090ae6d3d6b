// SPDX-License-Identifier: MIT
/* ptcollect: the command table and the global options. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "iptcaps.h"
#include "msg.h"
#include "out.h"
#include "workload.h"

static int do_help(int argc, char **argv);
static void usage_help(FILE *f);
static void usage(FILE *f);

static const struct cmd_option no_options[] = { CMD_OPT_END };
static const struct cmd_spec help_spec = { "help", no_options, usage_help, false };

static const struct cmd cmds[] = {
	{ "record",  do_record,  &record_spec,  "record Intel PT trace and sideband into a bundle" },
	{ "caps",    do_caps,    &caps_spec,    "show whether Intel PT is usable here, and its capabilities" },
	{ "info",    do_info,    &info_spec,    "show what a bundle holds, what is missing, how to decode it" },
	{ "archive", do_archive, &archive_spec, "copy the files a bundle maps into it, to decode it elsewhere" },
	{ "dump",    do_dump,    &dump_spec,    "print the records of a sideband file or the packets of a trace" },
	{ "symbols", do_symbols, &symbols_spec, "list the functions of an ELF file that --filter can name" },
	{ "import",  do_import,  &import_spec,  "make a bundle from a perf.data recorded with intel_pt" },
	{ "decode",  do_decode,  &decode_spec,  "decode a trace: instructions, branches, calls, timeline" },
	{ "report",  do_report,  &report_spec,  "where the time went, per function: calls, instructions, latency" },
	{ "help",    do_help,    &help_spec,    "show help for a command" },
};

/* The options before COMMAND. */
static const struct cmd_option global_options[] = {
	CMD_OPT('h', "help", NONE, NULL, 'h', "this text ('" PTC_PROG " help COMMAND' for a "
		"command)"),
	CMD_OPT('V', "version", NONE, NULL, 'V', "print the version"),
	CMD_OPT_JSON("print results as JSON (also after COMMAND)"),
	CMD_OPT_END,
};

#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--help|--version|--json] COMMAND [ARGS]\n\n"
		"Commands:\n", PTC_PROG);
	for (size_t i = 0; i < NR_CMDS; i++)
		fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\nOptions:\n");
	cmd_print_options(f, global_options);
	fprintf(f,
		"\nExit status: 0 success, 1 runtime failure, 2 bad usage or input;\n"
		"'record -- COMMAND' passes the workload's status through.\n");
}

/*
 * ptcollect __options: every option table, "" for the options before COMMAND,
 * for the tests that check the man pages and completions against them. Not in
 * the command table: no help, no completion, no prefix.
 */
static int do_options(void)
{
	cmd_print_table(stdout, "ptcollect", global_options);
	for (size_t i = 0; i < NR_CMDS; i++)
		cmd_print_table(stdout, cmds[i].name, cmds[i].spec->options);
	return cmd_flush_stdout();
}

/* Exact name, else an unambiguous prefix (bpftool's rule). */
static const struct cmd *cmd_find(const char *name, bool *ambiguous)
{
	const struct cmd *found = NULL;
	size_t len = strlen(name);

	*ambiguous = false;
	for (size_t i = 0; i < NR_CMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	for (size_t i = 0; i < NR_CMDS && len; i++) {
		if (strncmp(cmds[i].name, name, len))
			continue;
		if (found) {
			*ambiguous = true;
			return NULL;
		}
		found = &cmds[i];
	}
	return found;
}

static void usage_help(FILE *f)
{
	fprintf(f, "usage: %s help [COMMAND]\n", PTC_PROG);
}

static int do_help(int argc, char **argv)
{
	const struct cmd *c;
	bool amb;

	/* "help -h" asks for help on help, as "help help" does. */
	if (argc < 2 || (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")))) {
		if (argc < 2)
			usage(stdout);
		else
			usage_help(stdout);
		return EXIT_OK;
	}
	if (argc > 2)
		return cmd_bad_usage("help", "too many arguments: expected one COMMAND");
	c = cmd_find(argv[1], &amb);
	if (!c)
		return cmd_bad_usage(NULL, "help: %s command '%s'",
				     amb ? "ambiguous" : "unknown", argv[1]);
	c->spec->usage(stdout);
	return EXIT_OK;
}

/* Global options come before COMMAND; the first argument that is not one is the command. */
static int global_opts(int argc, char **argv, bool *json)
{
	struct cmd_getopt g;
	int c;

	cmd_getopt_init(&g, global_options, false);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return -1;
		case 'V': {
			struct iptcaps ipt;
			char line[256];

			iptcaps_get(&ipt);
			iptcaps_summary(&ipt, line, sizeof(line));
			printf("%s %s\n%s\n", PTC_PROG, PTC_VERSION, line);
			return -1;
		}
		case 'j':
			*json = true;
			break;
		default:
			return cmd_bad_usage(NULL, "unknown option '%s'", argv[optind - 1]);
		}
	}
	return 0;
}

/*
 * A descriptor 0, 1 or 2 the caller left closed would be the next file we
 * open (a trace file), and messages would go into it. /dev/null, read only,
 * fills the gap: writing to it fails as writing to a closed one does.
 */
static void fill_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && open("/dev/null", O_RDONLY) < 0)
			break;	/* no /dev/null: nothing better to put there */
}

/*
 * What the caller's process state would do to ptcollect, undone (the
 * workload gets it back, workload_note_caller()):
 *  - a umask with owner bits would take them from the bundle's 0700 and
 *    0600 (bundle(5)), so they go; its group and other bits stay.
 *  - SIGPIPE would end any command whose stdout's reader has gone, with
 *    status 141 and no word; ignored, the write fails with EPIPE and the
 *    command says so and exits 1, as for a full or closed stdout.
 */
static void own_process_state(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	mode_t mask = umask(0);

	umask(mask & 077);
	sigemptyset(&ign.sa_mask);
	if (sigaction(SIGPIPE, &ign, &old))
		old = (struct sigaction){ .sa_handler = SIG_DFL };
	workload_note_caller(mask, &old);
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	bool json = false, amb;
	int ret, out;

	fill_std_fds();
	own_process_state();
	cmd_stdout_init();
	ret = global_opts(argc, argv, &json);
	if (ret)
		return ret < 0 ? cmd_flush_stdout() : ret;
	out_init(stdout, json);
	if (optind >= argc)
		return cmd_bad_usage(NULL, "no command given");
	if (!strcmp(argv[optind], "__options"))
		return do_options();
	c = cmd_find(argv[optind], &amb);
	if (!c)
		return cmd_bad_usage(NULL, "%s command '%s'", amb ? "ambiguous" : "unknown",
				     argv[optind]);
	ret = c->run(argc - optind, argv + optind);
	/*
	 * A result that did not reach stdout is a failure, whatever the command
	 * did (decode errors, 2, included): exit 1, said once.
	 */
	out = cmd_flush_stdout();
	return out == EXIT_OK ? ret : out;
}
