// SPDX-License-Identifier: MIT
/* ptcollect symbols FILE [GLOB]: the functions a filter can name, with file offsets. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>

#include "cmd.h"
#include "msg.h"
#include "out.h"
#include "symbols.h"

void usage_symbols(FILE *f)
{
	fprintf(f,
		"usage: %s symbols [--json] FILE [GLOB]\n\n"
		"List the function symbols of an ELF file that --filter can name: address,\n"
		"file offset (what the kernel filter uses), size and binding; with GLOB only\n"
		"the names that match it (e.g. 'parse*'). Symbols come from .symtab, from a\n"
		"debug file under /usr/lib/debug, or from .dynsym, as perf loads them.\n\n",
		PTC_PROG);
	cmd_print_options(f, symbols_spec.options);
}

static const struct cmd_option symbols_options[] = {
	CMD_OPT_JSON("the symbols as JSON"),
	CMD_OPT_HELP,
	CMD_OPT_END,
};

const struct cmd_spec symbols_spec = { "symbols", symbols_options, usage_symbols, false };

int do_symbols(int argc, char **argv)
{
	struct warnings w = { 0 };
	struct error e = { 0 };
	const char *glob;
	struct symtab t;
	int ret;

	ret = cmd_parse_options(&symbols_spec, argc, argv, NULL, NULL);
	if (ret != CMD_GO_ON)
		return ret;
	if (optind >= argc)
		return cmd_bad_usage("symbols", "no FILE given");
	if (argc - optind > 2)
		return cmd_bad_usage("symbols", "too many arguments: expected FILE [GLOB]");
	glob = argc - optind == 2 ? argv[optind + 1] : NULL;
	ret = symbols_load(&t, argv[optind], &e, &w);
	cmd_warnings("symbols", &w);
	if (ret) {
		msg_err("symbols: %s", e.why);
		if (e.hint[0])
			msg_hint("%s", e.hint);
		return e.usage ? EXIT_USAGE : EXIT_RUNTIME;
	}
	out_obj_begin(NULL, NULL);
	out_str("file", NULL, t.path);
	out_str("table", NULL, t.table);
	if (t.debug_file[0])
		out_str("debug_file", NULL, t.debug_file);
	if (out_json) {
		out_arr_begin("symbols", NULL);
	} else {
		out_text("%s", "");	/* text lines are escaped: a newline would show as \n */
		out_text("%-18s %-10s %-8s %s %s", "address", "offset", "size", "b", "name");
	}
	for (size_t i = 0; i < t.nr; i++) {
		const struct symbol *s = &t.syms[i];

		if (glob && fnmatch(glob, s->name, 0))
			continue;
		if (!out_json) {
			out_text("0x%016" PRIx64 " 0x%08" PRIx64 " %-8" PRIu64 " %c %s", s->addr,
				 s->offset, s->size, s->bind, s->name);
			continue;
		}
		out_obj_begin(NULL, NULL);
		out_str("name", NULL, s->name);
		out_hex("address", NULL, s->addr);
		out_hex("offset", NULL, s->offset);
		out_u64("size", NULL, s->size);
		out_str("binding", NULL, s->bind == 'g' ? "global" : s->bind == 'w' ? "weak" : "local");
		out_obj_end();
	}
	if (out_json)
		out_arr_end();
	out_obj_end();
	out_finish();
	symbols_free(&t);
	return EXIT_OK;
}
