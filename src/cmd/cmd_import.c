// SPDX-License-Identifier: MIT
/* ptcollect import PERF.DATA DIR: a perf.data recorded with intel_pt becomes a bundle. */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "cmd.h"
#include "fileio.h"
#include "import.h"
#include "msg.h"
#include "out.h"

void usage_import(FILE *f)
{
	fprintf(f,
		"usage: %s import [--json] [--vdso FILE] PERF.DATA DIR\n\n"
		"Make the bundle DIR from a perf.data recorded with intel_pt (perf record\n"
		"-e intel_pt//, file or pipe mode; '-' reads standard input, as from\n"
		"'perf record -o - ... |'): the trace of each CPU (or thread) in cpuN.pt\n"
		"(tidN.pt), its sideband in cpuN.pevent with the bundle's sample_type,\n"
		"perf's records from /proc in proc.pevent, and the recording's CPU, time\n"
		"conversion and config in manifest.json. 'ptcollect info DIR' then prints\n"
		"the decoder lines. DIR must not exist; on failure nothing of it is left.\n\n",
		PTC_PROG);
	cmd_print_options(f, import_spec.options);
}

static const struct cmd_option import_options[] = {
	CMD_OPT(0, "vdso", REQUIRED, "FILE", 'v', "the traced machine's vdso image (by default "
		"perf's\nbuild-id cache, ~/.debug/[vdso]/ID/vdso, when the\nperf.data names it)"),
	CMD_OPT_JSON("the result as JSON"),
	CMD_OPT_HELP,
	CMD_OPT_END,
};

const struct cmd_spec import_spec = { "import", import_options, usage_import, false };

static int import_option(void *opts, int c, char *arg)
{
	if (c == 'v')
		((struct import_opts *)opts)->vdso = arg;
	return 0;
}

static int print_result(const char *dir, const struct import_opts *o,
			const struct import_stats *st)
{
	out_obj_begin(NULL, NULL);
	out_str("bundle", NULL, dir);
	out_str("input", NULL, o->input);
	out_str("format", NULL, st->pipe ? "pipe" : "file");
	out_i64("streams", NULL, st->streams);
	out_u64s("trace_bytes", "trace bytes", st->trace_bytes);
	out_u64s("auxtrace_records", "AUXTRACE records", st->auxtrace);
	out_u64s("sideband_records", "sideband records", st->sideband);
	out_u64s("synthesized_records", "perf's /proc records", st->synthesized);
	out_u64s("samples_left_out", "samples left out", st->samples);
	out_u64s("streams_reordered", "streams put in buffer order", st->reordered);
	out_str("vdso", NULL, st->vdso[0] ? st->vdso : NULL);
	out_obj_end();
	if (!out_json)
		out_text("next: %s info %s", PTC_PROG, dir);
	return out_finish() ? EXIT_RUNTIME : EXIT_OK;
}

/* A signal ends import as it would, and takes the bundle being made with it (import(1)). */
static void on_signal(int sig)
{
	bundle_staged_remove();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void remove_on_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;

		/* One the caller ignores (nohup, a background job's SIGINT) stays ignored. */
		if (!sigaction(sigs[i], NULL, &old) && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

int do_import(int argc, char **argv)
{
	struct import_opts o = { 0 };
	struct import_stats st;
	struct warnings w = { 0 };
	struct error e = { 0 };
	char **self;
	int ret;

	ret = cmd_parse_options(&import_spec, argc, argv, import_option, &o);
	if (ret != CMD_GO_ON)
		return ret;
	if (argc - optind != 2)
		return cmd_bad_usage("import", "expected PERF.DATA and the bundle DIR to make");
	o.input = argv[optind];
	o.dir = argv[optind + 1];
	o.fd = strcmp(o.input, "-") ? file_open_input(AT_FDCWD, o.input, &e) : STDIN_FILENO;
	if (o.fd < 0)
		return cmd_error("import", &e);
	/* The manifest's command: "ptcollect", then import's arguments. */
	self = calloc((size_t)argc + 1, sizeof(*self));
	if (!self) {
		msg_err("import: out of memory");
		return EXIT_RUNTIME;
	}
	self[0] = PTC_PROG;
	memcpy(self + 1, argv, (size_t)argc * sizeof(*self));
	o.argv = self;
	o.argc = argc + 1;
	remove_on_signals();
	ret = import_perfdata(&o, &st, &w, &e);
	free(self);
	if (o.fd != STDIN_FILENO)
		close(o.fd);
	cmd_warnings("import", &w);
	if (ret)
		return cmd_error("import", &e);
	return print_result(o.dir, &o, &st);
}
