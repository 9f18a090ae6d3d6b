// SPDX-License-Identifier: MIT
/* ptcollect: the command table and the global options. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "msg.h"
#include "out.h"

static int do_help(int argc, char **argv);
static void usage_help(FILE *f);

static const struct cmd cmds[] = {
	{ "record",  do_record,  usage_record,  "record Intel PT trace and sideband into a bundle" },
	{ "caps",    do_caps,    usage_caps,    "show whether Intel PT is usable here, and its capabilities" },
	{ "info",    do_info,    usage_info,    "show what a bundle holds, what is missing, how to decode it" },
	{ "dump",    do_dump,    usage_dump,    "print the records of a sideband file or the packets of a trace" },
	{ "symbols", do_symbols, usage_symbols, "list the functions of an ELF file that --filter can name" },
	{ "help",    do_help,    usage_help,    "show help for a command" },
};

#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--help|--version|--json] COMMAND [ARGS]\n\n"
		"Commands:\n", PTC_PROG);
	for (size_t i = 0; i < NR_CMDS; i++)
		fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f,
		"\nOptions:\n"
		"  -h, --help     this text ('%s help COMMAND' for a command)\n"
		"  -V, --version  print the version\n"
		"  -j, --json     print results as JSON (also accepted after COMMAND)\n"
		"\nExit status: 0 success, 1 runtime failure, 2 bad usage or input;\n"
		"'record -- COMMAND' passes the workload's status through.\n", PTC_PROG);
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

	if (argc < 2) {
		usage(stdout);
		return EXIT_OK;
	}
	if (argc > 2)
		return cmd_bad_usage("help", "too many arguments: expected one COMMAND");
	c = cmd_find(argv[1], &amb);
	if (!c)
		return cmd_bad_usage(NULL, "help: %s command '%s'",
				     amb ? "ambiguous" : "unknown", argv[1]);
	c->usage(stdout);
	return EXIT_OK;
}

/* Take --json/-j out of argv (up to a "--"), so that it works on either side of COMMAND. */
static int strip_json(int argc, char **argv, bool *json)
{
	int n = 0, i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j")) {
			*json = true;
			continue;
		}
		argv[n++] = argv[i];
	}
	for (; i < argc; i++)
		argv[n++] = argv[i];
	argv[n] = NULL;
	return n;
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	bool json = false, amb;
	int ret;

	argc = strip_json(argc, argv, &json);
	out_init(stdout, json);
	if (argc < 2)
		return cmd_bad_usage(NULL, "no command given");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("%s %s\n", PTC_PROG, PTC_VERSION);
		return EXIT_OK;
	}
	if (argv[1][0] == '-')
		return cmd_bad_usage(NULL, "unknown option '%s'", argv[1]);
	c = cmd_find(argv[1], &amb);
	if (!c)
		return cmd_bad_usage(NULL, "%s command '%s'", amb ? "ambiguous" : "unknown", argv[1]);
	ret = c->run(argc - 1, argv + 1);
	fflush(stdout);
	return ret;
}
