// SPDX-License-Identifier: MIT
/* ptcollect symbols: the function names a --filter can use, with offset and size. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "cmd.h"
#include "msg.h"
#include "out.h"
#include "symbols.h"

void usage_symbols(FILE *f)
{
	fprintf(f,
		"usage: %s symbols [--names] [--json] FILE [GLOB]\n\n"
		"List the function symbols of the ELF file FILE that a --filter can name\n"
		"(those matching GLOB, e.g. 'parse_*'): file offset, size, binding and\n"
		"the name as a filter writes it ('f #2' when several functions are named f).\n\n"
		"  -n, --names   names only, one per line, each once (for shell completion)\n"
		"  -j, --json    JSON output\n", PTC_PROG);
}

/* Selector for sym @i: "#N" among the functions of its name, "" when it is alone. */
static int nth_of_name(const struct symbols *s, int i, int *total)
{
	int n = 0, nth = 0;

	for (int j = 0; j < s->nr; j++) {
		if (strcmp(s->syms[j].name, s->syms[i].name))
			continue;
		n++;
		if (j == i)
			nth = n;
	}
	*total = n;
	return nth;
}

static bool printed_before(const struct symbols *s, int i, const char *glob)
{
	for (int j = 0; j < i; j++)
		if (!strcmp(s->syms[j].name, s->syms[i].name) &&
		    (!glob || !fnmatch(glob, s->syms[j].name, 0)))
			return true;
	return false;
}

static void print_syms(const struct symbols *s, const char *glob, bool names)
{
	if (names && !out_json) {
		for (int i = 0; i < s->nr; i++)
			if ((!glob || !fnmatch(glob, s->syms[i].name, 0)) &&
			    !printed_before(s, i, glob))
				printf("%s\n", s->syms[i].name);
		return;
	}
	out_obj_begin(NULL, NULL);
	out_str("file", NULL, s->path);
	out_str("symbol_file", NULL, s->symfile);
	out_str("table", NULL, s->table);
	if (out_json)
		out_arr_begin("symbols", NULL);
	else
		out_text("%-18s %-10s %-4s %s", "OFFSET", "SIZE", "BIND", "FILTER NAME");
	for (int i = 0; i < s->nr; i++) {
		const struct symbols_sym *y = &s->syms[i];
		char sel[32] = "";
		int total, nth = nth_of_name(s, i, &total);

		if (glob && fnmatch(glob, y->name, 0))
			continue;
		if (total > 1)
			snprintf(sel, sizeof(sel), " #%d", nth);
		if (!out_json) {
			out_text("0x%-16" PRIx64 " 0x%-8" PRIx64 " %-4c %s%s", y->offset,
				 symbols_size(s, i), symbols_bind_char(y->bind), y->name, sel);
			continue;
		}
		out_obj_begin(NULL, NULL);
		out_str("name", NULL, y->name);
		out_fmt("filter_name", NULL, "%s%s", y->name, sel);
		out_hex("offset", NULL, y->offset);
		out_hex("address", NULL, y->addr);
		out_hex("size", NULL, symbols_size(s, i));
		out_fmt("bind", NULL, "%s", y->bind == SYMBOLS_GLOBAL ? "global" :
			y->bind == SYMBOLS_LOCAL ? "local" : "weak");
		out_obj_end();
	}
	if (out_json)
		out_arr_end();
	out_obj_end();
	out_finish();
}

int do_symbols(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "names", no_argument, NULL, 'n' },
		{ 0 },
	};
	struct symbols s;
	char err[4200];
	bool names = false;
	const char *file, *glob;
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hn", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage_symbols(stdout);
			return EXIT_OK;
		case 'n':
			names = true;
			break;
		default:
			return cmd_bad_usage("symbols", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cmd_bad_usage("symbols", "missing FILE (an executable or shared library)");
	if (argc - optind > 2)
		return cmd_bad_usage("symbols", "unexpected argument '%s'", argv[optind + 2]);
	file = argv[optind];
	glob = optind + 1 < argc ? argv[optind + 1] : NULL;
	ret = symbols_load(file, &s, err, sizeof(err));
	if (ret == -ENOMEM) {
		msg_err("symbols: out of memory");
		return EXIT_RUNTIME;
	}
	if (ret) {
		msg_err("symbols: %s", err);
		return EXIT_USAGE;
	}
	print_syms(&s, glob, names);
	symbols_free(&s);
	return EXIT_OK;
}
