// SPDX-License-Identifier: MIT
/* What every command shares: how bad usage, errors and warnings are said. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "msg.h"
#include "out.h"

int cmd_bad_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	msg_err("%s%s%s", cmd ? cmd : "", cmd ? ": " : "", buf);
	if (cmd)
		msg_hint("see '%s help %s'", PTC_PROG, cmd);
	else
		msg_hint("see '%s --help'", PTC_PROG);
	return EXIT_USAGE;
}

/*
 * getopt_long leaves the offending argument at argv[optind - 1], except for
 * an unknown short option inside a cluster ("-zq"), which optopt names. A
 * long option's optopt is its value (a letter or an enum), so the argument
 * names it: "--duration", without any "=VALUE".
 */
int cmd_bad_option(const char *cmd, int c, char **argv)
{
	const char *arg = argv[optind - 1];
	bool lng = !strncmp(arg, "--", 2) && (c == ':' || !optopt || optopt > 255 ||
					      strchr(arg, '='));
	char opt[64];

	if (lng)
		snprintf(opt, sizeof(opt), "%.*s", (int)strcspn(arg, "="), arg);
	else
		snprintf(opt, sizeof(opt), "-%c", optopt);
	if (c == ':')
		return cmd_bad_usage(cmd, "option '%s' needs a value", opt);
	if (lng && optopt && strchr(arg, '='))
		return cmd_bad_usage(cmd, "option '%s' takes no value", opt);
	return cmd_bad_usage(cmd, "unknown option '%s'", opt);
}

int cmd_error(const char *cmd, const struct error *e)
{
	msg_err("%s%s%s%s%s", cmd ? cmd : "", cmd ? ": " : "", e->what, e->what[0] ? ": " : "",
		e->why[0] ? e->why : strerror(-e->code));
	if (e->hint[0])
		msg_hint("%s", e->hint);
	return e->usage ? EXIT_USAGE : EXIT_RUNTIME;
}

void cmd_warnings(const char *cmd, const struct warnings *w)
{
	for (int i = 0; w && i < w->nr; i++)
		msg_warn("%s: %s", cmd, w->msg[i]);
	if (w && w->dropped)
		msg_warn("%s: ... and %d more warning(s), not shown", cmd, w->dropped);
}

/*
 * The first error writing stdout, kept where it happened: stdio drops a buffer
 * it could not write, so a later fflush() succeeds with errno whatever came
 * since (a stale ENOENT said "No such file or directory" for a full disk).
 */
static int stdout_errno;

static ssize_t stdout_write(void *cookie, const char *buf, size_t len)
{
	size_t done = 0;

	(void)cookie;
	while (done < len) {
		ssize_t n = write(STDOUT_FILENO, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!stdout_errno)
				stdout_errno = n < 0 ? errno : EIO;
			errno = stdout_errno;
			break;	/* fewer bytes than asked: stdio sets the stream's error */
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

void cmd_stdout_init(void)
{
	static const cookie_io_functions_t io = { .write = stdout_write };
	FILE *f = fopencookie(NULL, "w", io);

	/* Without it (no memory), stdio's own stdout: errno is then read at once. */
	if (!f)
		return;
	/* As stdio buffers a descriptor: by lines on a terminal, else by blocks. */
	if (setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ)) {
		fclose(f);
		return;
	}
	fflush(stdout);
	stdout = f;
}

int cmd_stdout_errno(void)
{
	return stdout_errno;
}

int cmd_flush_stdout(void)
{
	static bool said;
	int err;

	/* The error flag stays set once any write to stdout failed. */
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return EXIT_OK;
	/* The write's own error; else the flush's, read before anything can change it. */
	err = stdout_errno ? stdout_errno : errno ? errno : EIO;
	/* Once: a command that checked, then main, ask again. */
	if (!said)
		msg_err("cannot write the results to standard output: %s", strerror(err));
	said = true;
	return EXIT_RUNTIME;
}

void cmd_getopt_init(struct cmd_getopt *g, const struct cmd_option *o, bool permute)
{
	static const int has_arg[] = {
		[CMD_ARG_NONE] = no_argument,
		[CMD_ARG_REQUIRED] = required_argument,
		[CMD_ARG_OPTIONAL] = optional_argument,
	};
	char *s = g->shortopts;
	int n = 0;

	if (!permute)
		*s++ = '+';
	*s++ = ':';	/* a missing value is ':', not '?' */
	for (; o->name || o->help; o++) {
		if (!o->name)
			continue;
		if (n == CMD_MAX_OPTIONS)
			abort();	/* a table longer than CMD_MAX_OPTIONS: raise it */
		g->longopts[n++] = (struct option){ o->name, has_arg[o->arg], NULL, o->val };
		if (!o->letter)
			continue;
		*s++ = o->letter;
		if (o->arg != CMD_ARG_NONE)
			*s++ = ':';
		if (o->arg == CMD_ARG_OPTIONAL)
			*s++ = ':';
	}
	*s = '\0';
	g->longopts[n] = (struct option){ NULL, 0, NULL, 0 };
}

#define HELP_COLUMN 24

void cmd_print_options(FILE *f, const struct cmd_option *o)
{
	for (; o->name || o->help; o++) {
		const char *h = o->help, *m = o->metavar ? o->metavar : "";
		char shrt[64] = "    ", left[160];
		int n;

		if (!o->name) {
			fprintf(f, "%s\n", o->help);
			continue;
		}
		/* "-S[SIZE], --snapshot[=SIZE]", "-o, --output DIR", "    --kcore" */
		if (o->letter)
			snprintf(shrt, sizeof(shrt), "-%c%s%s%s, ", o->letter,
				 o->arg == CMD_ARG_OPTIONAL ? "[" : "",
				 o->arg == CMD_ARG_OPTIONAL ? m : "",
				 o->arg == CMD_ARG_OPTIONAL ? "]" : "");
		n = snprintf(left, sizeof(left), "  %s--%s%s%s%s", shrt, o->name,
			     o->arg == CMD_ARG_REQUIRED ? " " : o->arg == CMD_ARG_OPTIONAL ? "[=" : "",
			     o->arg == CMD_ARG_NONE ? "" : m,
			     o->arg == CMD_ARG_OPTIONAL ? "]" : "");
		fputs(left, f);
		if (n >= HELP_COLUMN - 1)
			fprintf(f, "\n%*s", HELP_COLUMN, "");
		else
			fprintf(f, "%*s", HELP_COLUMN - n, "");
		/* Each further line of the help text is indented to its column. */
		for (const char *nl; (nl = strchr(h, '\n')); h = nl + 1)
			fprintf(f, "%.*s\n%*s", (int)(nl - h), h, HELP_COLUMN, "");
		fprintf(f, "%s\n", h);
	}
}

void cmd_print_table(FILE *f, const char *cmd, const struct cmd_option *o)
{
	static const char *const arg[] = { "none", "required", "optional" };

	for (; o->name || o->help; o++)
		if (o->name)
			fprintf(f, "%s --%s %s%c %s\n", cmd, o->name, o->letter ? "-" : "",
				o->letter ? o->letter : '-', arg[o->arg]);
}

int cmd_parse_options(const struct cmd_spec *spec, int argc, char **argv,
		      int (*fn)(void *ctx, int val, char *arg), void *ctx)
{
	struct cmd_getopt g;
	int c, ret;

	cmd_getopt_init(&g, spec->options, spec->permute);
	/* 0, not 1: glibc starts over and reads the ordering ('+') again. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, g.shortopts, g.longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			spec->usage(stdout);
			return EXIT_OK;
		case 'j':
			out_json = true;
			break;
		case '?':
		case ':':
			return cmd_bad_option(spec->name, c, argv);
		default:
			ret = fn ? fn(ctx, c, optarg) : 0;
			if (ret)
				return ret;
		}
	}
	return CMD_GO_ON;
}
