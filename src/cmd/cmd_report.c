// SPDX-License-Identifier: MIT
/*
 * ptcollect report: per function, calls, instructions, time and the
 * distribution of one call's duration (render_report.h); the slowest calls; flame
 * graph input. The trace is named as decode names it (cmd_decode.h); the
 * decode layer's report renderer makes the output, this command parses.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cmd_decode.h"
#include "msg.h"
#include "out.h"
#include "render_report.h"

enum {
	R_SORT = 512, R_TOP, R_FUNCTION, R_OUTLIERS, R_FOLDED, R_WEIGHT, R_PER_THREAD,
	R_PER_STREAM, R_CLOCK,
};

static const struct cmd_option report_options[] = {
	CMD_OPT_TEXT("What it shows (default: the functions, sorted by total time):"),
	CMD_OPT(0, "sort", REQUIRED, "KEY", R_SORT, "calls, self, total, p99, max or insns"),
	CMD_OPT(0, "top", REQUIRED, "N", R_TOP, "the first N functions (of each group)"),
	CMD_OPT(0, "function", REQUIRED, "GLOB", R_FUNCTION, "only the functions whose name "
		"matches"),
	CMD_OPT(0, "outliers", REQUIRED, "N", R_OUTLIERS, "the N longest calls of each function "
		"shown"),
	CMD_OPT(0, "folded", NONE, NULL, R_FOLDED, "'thread;outer;...;inner WEIGHT' lines "
		"(flame graphs)"),
	CMD_OPT(0, "weight", REQUIRED, "time|insns", R_WEIGHT, "--folded's weight (default "
		"time)"),
	CMD_OPT(0, "clock", REQUIRED, "time|insns", R_CLOCK, "durations in perf time (default, "
		"where the trace\nhas timing) or in instructions"),
	CMD_OPT(0, "per-thread", NONE, NULL, R_PER_THREAD, "a table per thread (default: "
		"merged)"),
	CMD_OPT(0, "per-stream", NONE, NULL, R_PER_STREAM, "a table per stream or snapshot "
		"window"),
	CMD_OPT_JSON("one JSON document (man ptcollect-report gives its shape)"),
	DECODE_INPUT_OPTIONS,
	CMD_OPT_HELP,
	CMD_OPT_END,
};

void usage_report(FILE *f)
{
	fprintf(f,
		"usage: %s report DIR [STREAM...] [OPTIONS]\n"
		"       %s report --pt FILE[:FROM[-TO]] [OPTIONS]\n\n"
		"Where the time went, per function: calls, instructions (self, total),\n"
		"time (self, total) and one call's duration (min, p50, p90, p99, max),\n"
		"exact from every call and return of the trace.\n\n", PTC_PROG, PTC_PROG);
	cmd_print_options(f, report_options);
	fprintf(f,
		"\nDurations are in ns of perf time, or in instructions where the trace has\n"
		"no timing (the header says which). Calls cut by a trace gap are counted\n"
		"as incomplete and enter no duration. Exit status as decode's.\n");
}

const struct cmd_spec report_spec = { "report", report_options, usage_report, true };

struct ropts {
	struct report_config rc;
	bool weight_given;
	uint64_t again, again_bad;	/* rc.again's, rc.again_bad's */
	uint64_t matched, active;	/* rc.matched's, rc.active's */
};

static int bad_value(const char *opt, const char *arg, const char *what)
{
	return cmd_bad_usage("report", "%s '%s': %s", opt, arg, what);
}

/* One message for every bad value (a sign, a word, 0, too large): what to give. */
static int count(const char *opt, const char *arg, uint64_t max, uint64_t *v)
{
	char *end, what[96];

	errno = 0;
	if (*arg && *arg != '-' && *arg != '+' && *arg != ' ') {
		*v = strtoull(arg, &end, 10);
		if (!errno && !*end && *v <= max && *v)
			return 0;
	}
	snprintf(what, sizeof(what), "give a whole number from 1 to %" PRIu64, max);
	return bad_value(opt, arg, what);
}

static int report_option(void *ctx, int c, char *arg)
{
	static const char *const sorts[] = { "total", "calls", "self", "p99", "max", "insns" };
	struct ropts *r = ctx;

	switch (c) {
	case R_SORT:
		for (size_t i = 0; i < sizeof(sorts) / sizeof(sorts[0]); i++)
			if (!strcmp(arg, sorts[i])) {
				r->rc.sort = (enum report_sort)i;
				return 0;
			}
		return bad_value("--sort", arg, "give calls, self, total, p99, max or insns");
	case R_TOP:
		return count("--top", arg, UINT32_MAX, &r->rc.top);
	case R_FUNCTION:
		if (!*arg)
			return bad_value("--function", arg, "an empty pattern matches no function");
		r->rc.function = arg;
		return 0;
	case R_OUTLIERS:
		return count("--outliers", arg, REPORT_OUTLIERS_MAX, &r->rc.outliers);
	case R_FOLDED:
		r->rc.view = REPORT_FOLDED;
		return 0;
	case R_WEIGHT:
		r->weight_given = true;
		if (!strcmp(arg, "insns") || !strcmp(arg, "time")) {
			r->rc.weight_insns = !strcmp(arg, "insns");
			return 0;
		}
		return bad_value("--weight", arg, "give time or insns");
	case R_CLOCK:
		if (!strcmp(arg, "insns") || !strcmp(arg, "time")) {
			r->rc.clock_insns = !strcmp(arg, "insns");
			return 0;
		}
		return bad_value("--clock", arg, "give time or insns");
	case R_PER_THREAD:
		r->rc.per_thread = true;
		return 0;
	case R_PER_STREAM:
		r->rc.per_stream = true;
		return 0;
	default:
		return 1;
	}
}

static int report_configure(void *ctx, struct decode_config *cfg)
{
	struct ropts *r = ctx;

	if (r->weight_given && r->rc.view != REPORT_FOLDED)
		return cmd_bad_usage("report", "--weight applies to --folded: give --folded too");
	if (r->rc.view == REPORT_FOLDED && (out_json || r->rc.outliers || r->rc.top ||
					    r->rc.function))
		return cmd_bad_usage("report", "--folded prints every stack: --json, --outliers, "
				     "--top and --function go with the functions view");
	r->rc.json = out_json;
	/* A debug count, for the tests and docs/benchmarks.md: not a documented output. */
	r->rc.sum_count = getenv("PTCOLLECT_REPORT_SUM_COUNT") &&
			  *getenv("PTCOLLECT_REPORT_SUM_COUNT");
	r->rc.again = r->rc.sum_count ? &r->again : NULL;
	r->rc.again_bad = r->rc.sum_count ? &r->again_bad : NULL;
	/* And each batch written again is also summed, the two compared. */
	r->rc.again_check = getenv("PTCOLLECT_REPORT_AGAIN_CHECK") &&
			    *getenv("PTCOLLECT_REPORT_AGAIN_CHECK");
	/* And the merge plays the workers' sums as records where it could fold them in. */
	r->rc.sum_play = getenv("PTCOLLECT_REPORT_SUM_PLAY") &&
			 *getenv("PTCOLLECT_REPORT_SUM_PLAY");
	r->rc.matched = &r->matched;
	r->rc.active = &r->active;
	cfg->mode = DECODE_REPORT;
	cfg->json = out_json;
	cfg->report = &r->rc;
	return 0;
}

int do_report(int argc, char **argv)
{
	struct ropts r;
	struct decode_variant v = { &report_spec, report_option, report_configure, &r };
	int ret;

	memset(&r, 0, sizeof(r));
	ret = cmd_decode_run(argc, argv, &v);
	/* An empty table is an answer, but a mistyped pattern should not pass for one. */
	if (!ret && r.rc.function && r.rc.view == REPORT_FUNCTIONS && !r.matched)
		msg_note("report: --function '%s' matches none of the trace's %" PRIu64
			 " functions; it is matched against the names the table prints, "
			 "e.g. '[unknown] (OBJECT+0xOFF)' where there is no symbol", r.rc.function,
			 r.active);
	return ret;
}
