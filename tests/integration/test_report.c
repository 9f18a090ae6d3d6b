// SPDX-License-Identifier: MIT
/*
 * ptcollect report against what libipt's ptxed lists on the same input: each
 * function's calls and instructions are counted from ptxed's instruction list,
 * the slowest calls found there are report's --outliers, --folded weights add
 * up to decode --stats' instructions and each stack is a path of decode --calls.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manifest.h"
#include "run.h"
#include "suitewatch.h"
#include "testbundle.h"

SUITEWATCH(watchdog, 300)

TestSuite(report, .init = watchdog, .fini = free_owned);

/* @tool ("ptxed", or ptcollect's command "report", "decode") with @in, then @extra. */
static void run_tool(const char *tool, const struct args *in, const char *const *extra,
		     struct run_result *r)
{
	struct args full = { .n = 0 };

	if (!strcmp(tool, "ptxed")) {
		args_add(&full, own(run_shared("oracle/ptxed")));
	} else {
		args_add(&full, run_bin());
		args_add(&full, tool);
	}
	for (int i = 0; i < in->n; i++)
		args_add(&full, in->v[i]);
	for (; extra && *extra; extra++)
		args_add(&full, *extra);
	cr_assert_eq(run_argv(full.v, NULL, r), 0);
}

/* Make the directory @dir (a mkdtemp() template, @argv's output) and run the generator @argv. */
static void gen_into(char *dir, char *const *argv)
{
	struct run_result r;

	cr_assert(mkdtemp(dir));
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
}

/* ptgen's slow program: f called @iters times, every @every-th call @work turns longer. */
static char *generate(const char *iters, const char *every, const char *work)
{
	char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
	char *argv[] = { own(run_testprog("ptgen")), "-n", (char *)iters, "-p", "4", "-z",
			 "-s", (char *)every, "-w", (char *)work, dir, NULL };

	gen_into(dir, argv);
	return dir;
}

static void cleanup(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

static char *path_in(const char *dir, const char *name)
{
	char *p;

	cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
	return own(p);
}

/* The parts of the program and trace ptgen or ptwalk wrote into @dir. */
static void args_gen(struct args *a, const char *dir)
{
	args_add(a, "--elf");
	args_add(a, path_in(dir, "prog.elf"));
	args_add(a, "--pt");
	args_add(a, path_in(dir, "trace.pt"));
}

/* ---- ptxed's instruction list ---- */

struct insn_line {
	uint64_t ip;
	bool call;
};

static size_t ptxed_list(const char *text, struct insn_line *out, size_t max)
{
	size_t n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strspn(l, "0123456789abcdef") != 16 || l[16] != ' ')
			continue;
		cr_assert_lt(n, max);
		out[n].ip = strtoull(l, NULL, 16);
		out[n].call = !strncmp(l + 16 + strspn(l + 16, " "), "call", 4);
		n++;
	}
	return n;
}

/* Entries into [from, to): instructions there right after a call. */
static uint64_t entries(const struct insn_line *l, size_t n, uint64_t at)
{
	uint64_t c = 0;

	for (size_t i = 1; i < n; i++)
		c += l[i].ip == at && l[i - 1].call;
	return c;
}

static uint64_t inside(const struct insn_line *l, size_t n, uint64_t from, uint64_t to)
{
	uint64_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += l[i].ip >= from && l[i].ip < to;
	return c;
}

/* ---- report's JSON ---- */

static uint64_t num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	cr_assert(json_is_string(v), "%s is not a decimal string", key);
	return strtoull(json_string_value(v), NULL, 10);
}

static json_t *function(json_t *doc, const char *name)
{
	json_t *groups = json_object_get(doc, "groups"), *g, *f;
	size_t i, j;

	json_array_foreach(groups, i, g) {
		json_array_foreach(json_object_get(g, "functions"), j, f) {
			if (!strcmp(json_string_value(json_object_get(f, "function")), name))
				return f;
		}
	}
	return NULL;
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

#define F 0x401010ull
#define F_END 0x401019ull
#define F_RET 0x401018ull

Test(report, f_called_1000_times_counts_equal_ptxed_and_slow_calls_are_the_outliers)
{
	static const char *const json_opts[] = { "--json", "--outliers", "10", NULL };
	char *dir = generate("1000", "100", "500");
	struct args in = { .n = 0 };
	struct run_result rr, rx;
	struct insn_line *list = calloc(40000, sizeof(*list));
	uint64_t durs[1000];
	size_t n, nd = 0, i;
	json_error_t je;
	json_t *doc, *f, *out, *o;

	cr_assert(list);
	args_gen(&in, dir);
	run_tool("report", &in, json_opts, &rr);
	cr_assert_eq(rr.status, 0, "%s", rr.err);
	run_tool("ptxed", &in, NULL, &rx);
	cr_assert_eq(rx.status, 0, "%s", rx.err);
	n = ptxed_list(rx.out, list, 40000);
	doc = json_loads(rr.out, 0, &je);
	cr_assert(doc, "%s: %s", je.text, rr.out);
	cr_expect_str_eq(json_string_value(json_object_get(doc, "clock")), "instructions");
	cr_expect_eq(num(doc, "instructions"), n);
	f = function(doc, "f");
	cr_assert(f, "%s", rr.out);
	cr_expect_eq(entries(list, n, F), 1000);
	cr_expect_eq(num(f, "calls"), entries(list, n, F));
	cr_expect_eq(num(f, "incomplete"), 0);
	cr_expect_eq(num(f, "insns_self"), inside(list, n, F, F_END));
	cr_expect_eq(num(f, "insns_total"), inside(list, n, F, F_END));
	/* Each call's length in ptxed's list: from f's entry to its ret, inclusive. */
	for (i = 1; i < n; i++) {
		if (list[i].ip != F || !list[i - 1].call)
			continue;
		size_t k = i;

		while (k < n && list[k].ip != F_RET)
			k++;
		cr_assert_lt(k, n);
		cr_assert_lt(nd, 1000);
		durs[nd++] = k - i + 1;
	}
	qsort(durs, nd, sizeof(*durs), cmp_desc);
	cr_expect_eq(durs[9], 1003);
	cr_expect_eq(durs[10], 3);
	out = json_object_get(f, "outliers");
	cr_assert_eq(json_array_size(out), 10);
	json_array_foreach(out, i, o)
		cr_expect_eq(num(o, "duration"), durs[i], "outlier %zu: %" PRIu64 ", ptxed %" PRIu64,
			     i, num(o, "duration"), durs[i]);
	cr_expect_eq(num(f, "max"), durs[0]);
	cr_expect_eq(num(f, "min"), durs[nd - 1]);
	cr_expect_eq(num(f, "p50"), 3);
	json_decref(doc);
	free(list);
	run_free(&rr);
	run_free(&rx);
	cleanup(dir);
}

/* ---- folded stacks against --stats and the --calls tree ---- */

/* The --calls tree's paths: "a;b;c" for each call line, at its depth. */
static char *call_paths(const char *calls)
{
	size_t cap = strlen(calls) * 4 + 16, len = 0;
	char *paths = calloc(1, cap), *stack[256];
	int depth = 0;

	cr_assert(paths);
	paths[len++] = '\n';
	for (const char *l = calls; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t ind = strspn(l, " ");
		char name[1100];
		int d = (int)ind / 2;

		if (strncmp(l + ind, "call ", 5))
			continue;
		cr_assert_lt(d, 256);
		cr_assert_eq(sscanf(l + ind + 5, "%1099s", name), 1);
		if (strlen(name) > 4 && !strcmp(name + strlen(name) - 4, "+0x0"))
			name[strlen(name) - 4] = '\0';
		for (int k = d; k < depth; k++)
			free(stack[k]);
		if (d > depth)
			continue;	/* a deeper call whose caller the tree did not show */
		stack[d] = strdup(name);
		depth = d + 1;
		for (int k = 0; k < depth; k++) {
			size_t m = strlen(stack[k]);

			cr_assert_lt(len + m + 2, cap);
			memcpy(paths + len, stack[k], m);
			len += m;
			paths[len++] = k + 1 < depth ? ';' : '\n';
		}
	}
	for (int k = 0; k < depth; k++)
		free(stack[k]);
	return paths;
}

static void folded_matches(const struct args *in)
{
	static const char *const folded[] = { "--folded", "--weight", "insns", NULL };
	static const char *const stats[] = { "--stats", NULL };
	static const char *const calls[] = { "--calls", NULL };
	struct run_result rf, rs, rc;
	unsigned long long total = 0, insns = 0;
	char *paths;
	size_t lines = 0;

	run_tool("report", in, folded, &rf);
	run_tool("decode", in, stats, &rs);
	run_tool("decode", in, calls, &rc);
	cr_assert_eq(rf.status, rs.status, "%s", rf.err);
	cr_assert(sscanf(strstr(rs.out, "instructions: "), "instructions: %llu", &insns) == 1);
	paths = call_paths(rc.out);
	for (char *l = rf.out; *l; l = strchr(l, '\n') + 1) {
		char *nl = strchr(l, '\n'), *sp, *semi, want[4096];

		cr_assert(nl);
		*nl = '\0';
		sp = strrchr(l, ' ');
		cr_assert(sp, "%s", l);
		total += strtoull(sp + 1, NULL, 10);
		*sp = '\0';
		/* The thread, then the stack (object`function): a path of the call tree. */
		semi = strchr(l, ';');
		if (semi) {
			char stack[2048];
			size_t n = 0;

			/* Each frame without its object (the file, then a backtick). */
			for (const char *frame = semi + 1; *frame;) {
				const char *end = strchr(frame, ';'), *tick;

				end = end ? end : frame + strlen(frame);
				tick = memchr(frame, '`', (size_t)(end - frame));
				if (tick) {
					cr_expect_gt(tick, frame, "an empty object in '%s'", semi + 1);
					frame = tick + 1;
				}
				cr_assert_lt(n + (size_t)(end - frame) + 2, sizeof(stack));
				memcpy(stack + n, frame, (size_t)(end - frame));
				n += (size_t)(end - frame);
				stack[n++] = *end ? ';' : '\0';
				frame = *end ? end + 1 : end;
			}
			snprintf(want, sizeof(want), "\n%s\n", stack);
			cr_expect(strstr(paths, want), "stack '%s' is not a path of --calls", stack);
		}
		*sp = ' ';
		*nl = '\n';
		lines++;
	}
	cr_expect_gt(lines, 0);
	cr_expect_eq(total, insns, "folded weights add up to %llu, --stats %llu", total, insns);
	free(paths);
	run_free(&rf);
	run_free(&rs);
	run_free(&rc);
}

Test(report, folded_weights_add_up_to_stats_and_stacks_are_call_paths)
{
	char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
	char *argv[] = { own(run_testprog("ptgen")), "-n", "3000", "-p", "4", dir, NULL };
	struct args in = { .n = 0 };

	gen_into(dir, argv);
	args_gen(&in, dir);
	folded_matches(&in);
	cleanup(dir);
}

static const char *const dynamorio_cfg[] = {
	"--cpu", "6/85/4", "--mtc-freq", "3", "--nom-freq", "37", "--cpuid-0x15.eax", "2",
	"--cpuid-0x15.ebx", "308", "--pevent:sample-type", "0x10086", "--pevent:time-shift", "31",
	"--pevent:time-mult", "581029125", "--pevent:time-zero", "18444502336406842448", NULL,
};

static void shared_args(struct args *a, const char *set)
{
	if (!strcmp(set, "hase")) {
		args_add(a, "--cpu");
		args_add(a, "6/94/3");
		args_add(a, "--elf");
		args_add(a, own(run_shared("traces/hase-loopy-skylake/loopy")));
		args_add(a, "--pt");
		args_add(a, own(run_shared("traces/hase-loopy-skylake/aux.aux-idx2-cpu2-tid19233.pt")));
		return;
	}
	char *dir = own(run_shared(set));

	for (const char *const *o = dynamorio_cfg; *o; o++)
		args_add(a, *o);
	args_add(a, "--pevent:sysroot");
	args_add(a, dir);
	args_add(a, "--pevent:primary");
	args_add(a, path_in(dir, "primary.sideband.pevent"));
	args_add(a, "--pevent:secondary");
	args_add(a, path_in(dir, "secondary.sideband.pevent"));
	args_add(a, "--pt");
	args_add(a, path_in(dir, "pt.bin"));
}

/* Every shared trace: calls and instructions as ptxed lists them; folded as --stats. */
Test(report, shared_traces_count_what_ptxed_lists)
{
	static const char *const sets[] = { "hase", "traces/dynamorio-hello64-asm-2023/test_simple.raw",
					    "traces/dynamorio-hello32-asm-2022/test_simple.raw" };
	static const char *const json_opts[] = { "--json", NULL };

	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
		struct args in = { .n = 0 };
		struct run_result rr, rx;
		struct insn_line list[4096];
		uint64_t calls = 0, sum = 0;
		json_error_t je;
		json_t *doc, *g, *f;
		size_t n, i, j;

		shared_args(&in, sets[s]);
		run_tool("report", &in, json_opts, &rr);
		cr_assert_eq(rr.status, 0, "%s: %s", sets[s], rr.err);
		run_tool("ptxed", &in, NULL, &rx);
		n = ptxed_list(rx.out, list, 4096);
		for (i = 1; i < n; i++)
			calls += list[i - 1].call;
		doc = json_loads(rr.out, 0, &je);
		cr_assert(doc, "%s: %s", sets[s], je.text);
		cr_expect_eq(num(doc, "instructions"), n, "%s", sets[s]);
		cr_expect_eq(num(doc, "calls"), calls, "%s", sets[s]);
		json_array_foreach(json_object_get(doc, "groups"), i, g)
			json_array_foreach(json_object_get(g, "functions"), j, f)
				sum += num(f, "insns_self");
		cr_expect_eq(sum, n, "%s: self instructions add up to %" PRIu64 ", ptxed %zu",
			     sets[s], sum, n);
		json_decref(doc);
		run_free(&rr);
		run_free(&rx);
		folded_matches(&in);
	}
}

Test(report, bad_values_are_refused_by_name)
{
	static const struct {
		const char *opt, *val, *says;
	} bad[] = {
		{ "--sort", "speed", "--sort 'speed': give calls, self, total, p99, max or insns" },
		{ "--top", "0", "--top '0': give a whole number from 1 to" },
		{ "--top", "-3", "--top '-3': give a whole number from 1 to" },
		{ "--top", "ten", "--top 'ten': give a whole number" },
		{ "--outliers", "1001", "--outliers '1001': give a whole number from 1 to 1000" },
		{ "--outliers", "", "--outliers '': give a whole number from 1 to 1000" },
		{ "--function", "", "--function '': an empty pattern matches no function" },
		{ "--weight", "bytes", "--weight 'bytes': give time or insns" },
		{ "--clock", "tsc", "--clock 'tsc': give time or insns" },
		{ "--jobs", "0", "--jobs '0': not a number from 1 to 256" },
		{ "--jobs", "257", "--jobs '257': not a number from 1 to 256" },
		{ "--pt", "/nonexistent/t.pt", "/nonexistent/t.pt" },
	};
	char *file = own(run_srcpath("Makefile"));
	struct run_result r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(run_ptcollect(NULL, &r, "report", bad[i].opt, bad[i].val, NULL), 0);
		cr_expect_eq(r.status, 2, "%s %s: exit %d", bad[i].opt, bad[i].val, r.status);
		cr_expect(strstr(r.err, bad[i].says), "%s %s: %s", bad[i].opt, bad[i].val, r.err);
		cr_expect_str_eq(r.out, "");
		run_free(&r);
	}
	cr_assert_eq(run_ptcollect(NULL, &r, "report", "--pt", file, "--weight", "insns",
				   NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--weight applies to --folded"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "report", "--pt", file, "--folded", "--json",
				   NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--folded prints every stack"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "report", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "no trace"), "%s", r.err);
	run_free(&r);
}

/* Chunks decoded in parallel give the report one pass gives: the merge keeps the stacks. */
Test(report, jobs_two_with_small_chunks_reports_what_one_job_does)
{
	static const char *const one[] = { "--json", "--outliers", "3", "--per-thread", NULL };
	static const char *const two[] = { "--json", "--outliers", "3", "--per-thread", "-J", "2",
					   "--chunk-size", "8K", NULL };
	char *dir = generate("100000", "100", "50");
	struct args in = { .n = 0 };
	struct run_result r1, r2;

	args_gen(&in, dir);
	run_tool("report", &in, one, &r1);
	run_tool("report", &in, two, &r2);
	cr_assert_eq(r1.status, 0, "%s", r1.err);
	cr_assert_eq(r2.status, 0, "%s", r2.err);
	cr_expect(strstr(r1.out, "\"calls\": \"100000\""), "%s", r1.out);
	/* Without sideband the one thread is 0/0. */
	cr_expect(strstr(r1.out, "\"group\": \"0/0\""), "%s", r1.out);
	cr_expect_str_eq(r2.out, r1.out);
	run_free(&r1);
	run_free(&r2);
	cleanup(dir);
}

/*
 * @in reported in every view with -J 1, then three times with -J 4 in @chunk-byte chunks
 * (many seams; three runs, so that an order by which chunk or thread came first would
 * show): standard output, standard error and the exit status are the same, byte for byte.
 */
static void jobs_four_agree(const struct args *in, const char *chunk, const char *what)
{
	static const char *const views[][8] = {
		{ "--json", NULL },
		{ "--json", "--outliers", "5", NULL },
		{ "--json", "--outliers", "5", "--clock", "insns", NULL },
		{ "--folded", NULL },
		{ "--folded", "--weight", "insns", NULL },
		{ "--outliers", "5", NULL },
		{ "--per-thread", "--outliers", "5", NULL },
	};

	for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
		const char *four[16] = { "-J", "4", "--chunk-size", chunk };
		const char *one[16] = { "-J", "1" };
		struct run_result r1;
		size_t k;

		for (k = 0; views[v][k]; k++) {
			one[2 + k] = views[v][k];
			four[4 + k] = views[v][k];
		}
		run_tool("report", in, one, &r1);
		cr_assert_eq(r1.status, 0, "%s %s: %s", what, views[v][0], r1.err);
		/* (--folded by time may be empty: ptwalk's calls end in the PSB they start in) */
		cr_expect(strlen(r1.out) > 100 || !strcmp(views[v][0], "--folded"), "%s %s: %s",
			  what, views[v][0], r1.out);
		for (int i = 0; i < 3; i++) {
			struct run_result r4;

			run_tool("report", in, four, &r4);
			cr_expect_eq(r4.status, r1.status, "%s %s %s: exit %d at -J 4", what,
				     views[v][0], views[v][1] ? views[v][1] : "", r4.status);
			cr_expect(!strcmp(r4.out, r1.out), "%s view %zu (%s %s), run %d: -J 4 "
				  "prints other output than -J 1 (%zu and %zu bytes)", what, v,
				  views[v][0], views[v][1] ? views[v][1] : "", i, strlen(r4.out),
				  strlen(r1.out));
			cr_expect_str_eq(r4.err, r1.err, "%s view %zu", what, v);
			run_free(&r4);
		}
		run_free(&r1);
	}
}

/*
 * report -J 4 prints what -J 1 prints, in every view: on ptwalk's random walk (deep stacks
 * that make the merge's stack grow; its time moves once per PSB, so that most calls last 0
 * and tie), on ptgen's loop without timing and on its slow calls with timing.
 */
Test(report, jobs_four_prints_what_jobs_one_prints_in_every_view)
{
	char *walk = own(strdup("/tmp/ptc-report-XXXXXX")), *untimed, *timed;
	char *argv[] = { own(run_testprog("ptwalk")), "-b", "20000", "-s", "1", "-n", "100000",
			 walk, NULL };
	struct args a = { .n = 0 }, b = { .n = 0 }, c = { .n = 0 };
	struct run_result r;

	gen_into(walk, argv);
	args_add(&a, "--raw");
	args_add(&a, path_in(walk, "prog.bin:0x401000"));
	args_add(&a, "--pt");
	args_add(&a, path_in(walk, "trace.pt"));
	jobs_four_agree(&a, "4K", "ptwalk");

	untimed = generate("20000", "7", "50");
	args_add(&b, "--elf");
	args_add(&b, path_in(untimed, "prog.elf"));
	args_add(&b, "--pt");
	args_add(&b, path_in(untimed, "trace.pt"));
	jobs_four_agree(&b, "1K", "ptgen -z");

	timed = own(strdup("/tmp/ptc-report-XXXXXX"));
	cr_assert(mkdtemp(timed));
	{
		char *gen[] = { own(run_testprog("ptgen")), "-n", "3000", "-p", "2", "-s", "7",
				"-w", "50", "-t", "1000", timed, NULL };

		cr_assert_eq(run_argv(gen, NULL, &r), 0);
		cr_assert_eq(r.status, 0, "%s", r.err);
		run_free(&r);
	}
	args_add(&c, "--elf");
	args_add(&c, path_in(timed, "prog.elf"));
	args_add(&c, "--pt");
	args_add(&c, path_in(timed, "trace.pt"));
	jobs_four_agree(&c, "1K", "ptgen timed");
	cleanup(walk);
	cleanup(untimed);
	cleanup(timed);
}

/* The segments the fast path decoded: report's debug count on standard error, or -1. */
static long fast_note(const char *err)
{
	const char *p = strstr(err, " PSB segments decoded fast");

	while (p && p > err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p ? strtol(p, NULL, 10) : -1;
}

/*
 * report takes the fast flow path (fastflow.h) on every segment decode --stats takes it on,
 * where its time is no more than the PSB+'s TSC (ptwalk's, ptgen's; the debug count
 * PTCOLLECT_DECODE_FAST_COUNT), and prints what libipt's block decoder alone prints
 * (PTCOLLECT_DECODE_NO_FAST) in the table, --json, --folded and --outliers. Was: no
 * segment (report ran libipt's decoder, 15 times decode --stats' CPU time).
 */
Test(report, takes_the_fast_path_where_decode_stats_does_and_prints_the_same)
{
	static char *const count[] = { "PTCOLLECT_DECODE_FAST_COUNT=1", NULL };
	static const char *const views[][4] = {
		{ "--json", NULL }, { "--folded", "--weight", "insns", NULL },
		{ "--outliers", "5", NULL }, { "--clock", "insns", NULL },
	};
	char *walk = own(strdup("/tmp/ptc-report-XXXXXX")), *loop = generate("20000", "7", "50");
	char *argv[] = { own(run_testprog("ptwalk")), "-b", "20000", "-s", "3", "-n", "200000",
			 "-p", "24", walk, NULL };

	gen_into(walk, argv);
	for (int t = 0; t < 2; t++) {
		const char *code = t ? path_in(loop, "prog.elf") : path_in(walk, "prog.bin:0x401000");
		const char *pt = path_in(t ? loop : walk, "trace.pt");
		const char *how = t ? "--elf" : "--raw";
		struct run_result st, rep;
		json_t *doc;
		long n;

		cr_assert_eq(run_ptcollect(count, &st, "decode", how, code, "--pt", pt, "--stats",
					   "--json", NULL), 0);
		cr_assert_eq(st.status, 0, "%s", st.err);
		doc = json_loads(st.out, 0, NULL);
		cr_assert(doc, "%s", st.out);
		n = (long)json_integer_value(json_object_get(json_array_get(
			json_object_get(doc, "streams"), 0), "fast_segments"));
		json_decref(doc);
		cr_assert_eq(run_ptcollect(count, &rep, "report", how, code, "--pt", pt, NULL), 0);
		cr_assert_eq(rep.status, 0, "%s", rep.err);
		cr_expect_gt(n, 20, "%s: %s", pt, st.out);
		cr_expect_eq(fast_note(rep.err), n, "%s: report's fast segments, decode --stats' "
			     "%ld: %s", pt, n, rep.err);
		run_free(&st);
		run_free(&rep);
		for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
			struct args a = { .n = 0 };
			char what[256];

			args_addv(&a, (const char *[]){ "report", how, code, "--pt", pt, NULL });
			args_addv(&a, views[v]);
			snprintf(what, sizeof(what), "%s %s", pt, views[v][0]);
			run_fast_same(&a, what, &rep);
			cr_expect_eq(rep.status, 0, "%s: %s", what, rep.err);
			cr_expect(strlen(rep.out) > 30, "%s: %s", what, rep.out);
			run_free(&rep);
		}
	}
	cleanup(walk);
	cleanup(loop);
}

/*
 * report @input with @view at -J 1 and at -J 2 in 4 KiB chunks: each prints what libipt's
 * block decoder alone prints (run_fast_same()) and exits 0; @name names the input.
 */
static void view_fast_same(const char *const *input, const char *const *view, const char *name)
{
	for (int j = 0; j < 2; j++) {
		struct args a = { .n = 0 };
		struct run_result r;
		char what[256];

		args_addv(&a, input);
		if (j)
			args_addv(&a, (const char *[]){ "-J", "2", "--chunk-size", "4K", NULL });
		else	/* not the default, which follows the load */
			args_addv(&a, (const char *[]){ "-J", "1", NULL });
		args_addv(&a, view);
		snprintf(what, sizeof(what), "%s %s -J %d", name, view[0] ? view[0] : "(table)",
			 j + 1);
		run_fast_same(&a, what, &r);
		cr_expect_eq(r.status, 0, "%s: %s", what, r.err);
		run_free(&r);
	}
}

/*
 * A fast segment hands its calls and returns to report in batches (fastflow_set_batch(): 256
 * at most) before it is known good: one that turns out not fast takes back the batches it
 * handed over. ptgen's segments here hold some 1,100 calls each; three of them end in a
 * TSC packet (a copy of the next PSB+'s, put before that PSB), which a timed fast segment
 * does not take: each fails after eight batches and libipt decodes it. report prints what
 * libipt's decoder alone prints, every view, -J 1 and -J 2 in 4 KiB chunks.
 */
Test(report, takes_back_the_batches_of_a_segment_that_is_not_fast)
{
	static char *const count[] = { "PTCOLLECT_DECODE_FAST_COUNT=1", NULL };
	static const char *const views[][4] = {
		{ "--json", "--outliers", "3", NULL }, { "--folded", "--weight", "insns", NULL },
		{ "--per-thread", "--clock", "insns", NULL }, { "--sort", "p99", NULL },
	};
	static const uint8_t psb[16] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82 };
	static const size_t seg[] = { 4, 11, 21 };	/* the PSBs that end them */
	char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
	char *argv[] = { own(run_testprog("ptgen")), "-n", "200000", "-p", "50", dir, NULL };
	const char *elf, *good, *bad;
	size_t at[64], n = 0, len, from = 0;
	struct run_result r, g;
	uint8_t *buf;
	FILE *f;

	gen_into(dir, argv);
	elf = path_in(dir, "prog.elf");
	good = path_in(dir, "trace.pt");
	bad = path_in(dir, "bad.pt");
	f = fopen(good, "rb");
	cr_assert(f);
	buf = malloc(1u << 20);
	cr_assert(buf);
	len = fread(buf, 1, 1u << 20, f);
	fclose(f);
	cr_assert(len > 0 && len < (1u << 20));
	for (size_t i = 0; i + sizeof(psb) <= len && n < 64; i++)
		if (!memcmp(buf + i, psb, sizeof(psb)))
			at[n++] = i;
	cr_assert_geq(n, 22, "%zu PSBs", n);
	cr_assert(buf[at[21] + 16] == 0x19, "a TSC packet first in the PSB+");
	f = fopen(bad, "wb");
	cr_assert(f);
	for (size_t k = 0; k < 3; k++) {
		size_t p = at[seg[k]];

		cr_assert_eq(fwrite(buf + from, 1, p - from, f), p - from);
		cr_assert_eq(fwrite(buf + p + 16, 1, 8, f), 8);
		from = p;
	}
	cr_assert_eq(fwrite(buf + from, 1, len - from, f), len - from);
	cr_assert_eq(fclose(f), 0);
	free(buf);

	/* The three segments start fast and fail: three fewer fast ones, no error. */
	cr_assert_eq(run_ptcollect(count, &g, "report", "--elf", elf, "--pt", good, NULL), 0);
	cr_assert_eq(run_ptcollect(count, &r, "report", "--elf", elf, "--pt", bad, NULL), 0);
	cr_expect_eq(g.status, 0, "%s", g.err);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_gt(fast_note(g.err), 200, "%s", g.err);
	cr_expect_eq(fast_note(r.err), fast_note(g.err) - 3, "%s", r.err);
	run_free(&g);
	run_free(&r);
	for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++)
		view_fast_same((const char *[]){ "report", "--elf", elf, "--pt", bad, NULL },
			       views[v], bad);
	cleanup(dir);
}

/* --sort, --top, --function choose the rows; --clock insns measures a TSC-only trace. */
Test(report, sort_top_function_and_clock_choose_what_is_shown)
{
	static const char *const top[] = { "--sort", "calls", "--top", "1", "--clock", "insns",
					   NULL };
	static const char *const glob[] = { "--function", "f*", "--clock", "insns", NULL };
	static const char *const none[] = { "--function", "F*", NULL };
	static const char *const json[] = { "--json", "--sort", "insns", NULL };
	char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
	char *argv[] = { own(run_testprog("ptgen")), "-n", "1000", "-p", "4", dir, NULL };
	struct args in = { .n = 0 };
	struct run_result r;
	json_error_t je;
	json_t *doc, *rows;

	cr_assert(mkdtemp(dir));
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	run_free(&r);
	args_gen(&in, dir);
	/* f and g are called 1000 times each; g has more instructions, so it sorts first. */
	run_tool("report", &in, top, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "(--clock insns)"), "%s", r.out);
	cr_expect(strstr(r.out, "  g\n") && !strstr(r.out, "  f\n"), "%s", r.out);
	run_free(&r);
	run_tool("report", &in, glob, &r);
	cr_expect(strstr(r.out, "  f\n") && !strstr(r.out, "  g\n"), "%s", r.out);
	/* f's call: call g, g's 4 (a third of them) or 5, ret: 6 or 7 instructions. */
	cr_expect(strstr(r.out, "         6          7          7          7          7  "
			  "prog.elf          f\n"), "%s", r.out);
	cr_expect(!strstr(r.err, "matches none"), "%s", r.err);
	run_free(&r);
	/* A pattern that matches nothing (names are case-sensitive): the header alone, and a
	 * note that says so, so that a typo is not read as "no such calls". */
	run_tool("report", &in, none, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "--function 'F*' matches none of the trace's 3 functions"), "%s",
		  r.err);
	cr_expect(strstr(r.out, "# ") && !strstr(r.out, "prog.elf"), "%s", r.out);
	run_free(&r);
	run_tool("report", &in, json, &r);
	doc = json_loads(r.out, 0, &je);
	cr_assert(doc, "%s", je.text);
	cr_expect_str_eq(json_string_value(json_object_get(doc, "clock")), "time");
	rows = json_object_get(json_array_get(json_object_get(doc, "groups"), 0), "functions");
	cr_assert_eq(json_array_size(rows), 3, "%s", r.out);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(rows, 0), "function")),
			 "g");
	/* Each function is a symbol in an object (perf's sym and dso). */
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(rows, 0), "object")),
			 "prog.elf");
	cr_expect(strstr(r.out, "\"object\": \"\""), "[unknown] has no object: %s", r.out);
	json_decref(doc);
	run_free(&r);
	cleanup(dir);
}

/* A call cut by a decode error is incomplete: it enters no duration, and no duration spans it. */
Test(report, calls_cut_by_a_decode_error_are_incomplete_and_enter_no_duration)
{
	static const char *const json_opts[] = { "--json", "--outliers", "20", NULL };
	static const char *const stats[] = { "--stats", NULL };
	char *dir = generate("2000", "10", "40");
	struct args in = { .n = 0 };
	struct run_result rr, rs;
	unsigned long long insns = 0;
	json_error_t je;
	json_t *doc, *f, *o;
	size_t i;
	FILE *t;

	args_gen(&in, dir);
	/* Flip a byte in the middle of the trace: one decode error, resumed at the next PSB. */
	t = fopen(path_in(dir, "trace.pt"), "r+b");
	cr_assert(t);
	cr_assert_eq(fseek(t, 0, SEEK_END), 0);
	cr_assert_eq(fseek(t, ftell(t) / 2, SEEK_SET), 0);
	cr_assert_eq(fputc(0x9c, t), 0x9c);
	cr_assert_eq(fclose(t), 0);
	run_tool("report", &in, json_opts, &rr);
	run_tool("decode", &in, stats, &rs);
	cr_expect_eq(rr.status, 2, "%s", rr.err);
	cr_expect(strstr(rr.err, "resuming at the next PSB"), "%s", rr.err);
	cr_assert(sscanf(strstr(rs.out, "instructions: "), "instructions: %llu", &insns) == 1);
	doc = json_loads(rr.out, 0, &je);
	cr_assert(doc, "%s: %s", je.text, rr.out);
	cr_expect_eq(num(doc, "instructions"), insns);
	f = function(doc, "f");
	cr_assert(f, "%s", rr.out);
	cr_expect_gt(num(f, "incomplete"), 0, "%s", rr.out);
	cr_expect_lt(num(f, "calls"), 2000);
	/* Every duration is a whole call: 3 instructions, or 3 + 2 * 40. */
	cr_expect_eq(num(f, "max"), 83);
	json_array_foreach(json_object_get(f, "outliers"), i, o)
		cr_expect(num(o, "duration") == 83 || num(o, "duration") == 3, "%s", rr.out);
	json_decref(doc);
	run_free(&rr);
	run_free(&rs);
	cleanup(dir);
}

/*
 * Time: ptgen's slow calls hold two TSC packets, 0x1000 ticks apart each (no time conversion
 * given: a tick is a unit), the fast ones none. Each slow call lasts 0x2000, each fast one 0,
 * and the durations add up to f's total. (ptxed --time prints the time of the last event,
 * not of these packets, so it cannot be the reference here.)
 */
Test(report, durations_are_the_time_the_trace_encoded_and_add_up)
{
	static const char *const json_opts[] = { "--json", "--outliers", "11", NULL };
	char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
	char *argv[] = { own(run_testprog("ptgen")), "-n", "1000", "-p", "4", "-s", "100", "-w",
			 "50", dir, NULL };
	struct args in = { .n = 0 };
	struct run_result r;
	json_error_t je;
	json_t *doc, *f, *o;
	uint64_t sum = 0, last_start = 0;
	size_t i;

	gen_into(dir, argv);
	args_gen(&in, dir);
	run_tool("report", &in, json_opts, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	doc = json_loads(r.out, 0, &je);
	cr_assert(doc, "%s", je.text);
	cr_expect_str_eq(json_string_value(json_object_get(doc, "clock")), "time");
	f = function(doc, "f");
	cr_assert(f, "%s", r.out);
	json_array_foreach(json_object_get(f, "outliers"), i, o) {
		cr_expect_eq(num(o, "duration"), i < 10 ? 0x2000 : 0, "outlier %zu: %s", i, r.out);
		if (i < 10) {
			cr_expect_gt(num(o, "start"), last_start);
			last_start = num(o, "start");
		}
		sum += num(o, "duration");
	}
	cr_expect_eq(num(f, "total"), sum);
	cr_expect_eq(num(f, "self"), sum);
	cr_expect_eq(num(f, "p99"), 0);
	cr_expect_eq(num(f, "max"), 0x2000);
	json_decref(doc);
	run_free(&r);
	cleanup(dir);
}

/*
 * A trace whose time never moves (ptgen's loop with one PSB: one TSC, as a played stream
 * the rig has not stamped, whose only TSC is a placeholder): every call lasts 0 and no
 * start is known. The header says so; an outlier's start is "-" in the text and null in
 * JSON, never the one timestamp as if it were a call's; --clock insns gives starts.
 */
Test(report, a_trace_whose_time_never_moves_shows_no_start)
{
	static const char *const text[] = { "--outliers", "2", "--function", "f", NULL };
	static const char *const json_opts[] = { "--json", "--outliers", "2", NULL };
	static const char *const insns[] = { "--json", "--outliers", "2", "--clock", "insns",
					     NULL };
	char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
	char *argv[] = { own(run_testprog("ptgen")), "-n", "100", "-p", "100000", dir, NULL };
	struct args in = { .n = 0 };
	struct run_result r;
	json_error_t je;
	json_t *doc, *f, *o;
	size_t i;

	cr_assert(mkdtemp(dir));
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "psbs 1"), "%s", r.out);
	run_free(&r);
	args_gen(&in, dir);
	run_tool("report", &in, text, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "the trace's time never moves"), "%s", r.out);
	cr_expect(strstr(r.out, "\nslowest calls of f:\n"), "%s", r.out);
	cr_expect(strstr(r.out, "\n           0                    -              0/0  g x1\n"),
		  "%s", r.out);
	run_free(&r);
	run_tool("report", &in, json_opts, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	doc = json_loads(r.out, 0, &je);
	cr_assert(doc, "%s", je.text);
	cr_expect_str_eq(json_string_value(json_object_get(doc, "clock")), "time");
	f = function(doc, "f");
	cr_assert(f, "%s", r.out);
	cr_expect_eq(json_array_size(json_object_get(f, "outliers")), 2, "%s", r.out);
	json_array_foreach(json_object_get(f, "outliers"), i, o) {
		cr_expect_eq(num(o, "duration"), 0, "%s", r.out);
		cr_expect(json_is_null(json_object_get(o, "start")), "%s", r.out);
	}
	json_decref(doc);
	run_free(&r);
	run_tool("report", &in, insns, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	doc = json_loads(r.out, 0, &je);
	cr_assert(doc, "%s", je.text);
	f = function(doc, "f");
	cr_assert(f, "%s", r.out);
	json_array_foreach(json_object_get(f, "outliers"), i, o) {
		cr_expect_eq(num(o, "duration"), 7, "%s", r.out);
		cr_expect(json_is_string(json_object_get(o, "start")), "%s", r.out);
	}
	json_decref(doc);
	run_free(&r);
	cleanup(dir);
}

/* perf's conversion of a TSC to perf time (time_zero, time_shift, time_mult). */
static uint64_t perf_time(uint64_t tsc, uint64_t zero, unsigned shift, uint64_t mult)
{
	return zero + (tsc >> shift) * mult + (((tsc & ((1ull << shift) - 1)) * mult) >> shift);
}

static int cmp_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/*
 * Each call's start and end are libipt's time for its call and return instructions, as
 * ptxed --time prints them on the same input, through the run's time conversion; the
 * durations add up to the function's time.
 */
Test(report, call_times_are_libipts_for_the_call_and_ret_instructions)
{
	static const char *const opts[] = { "--json", "--outliers", "1000", "--pevent:time-zero",
					    "1000", "--pevent:time-shift", "2",
					    "--pevent:time-mult", "3", NULL };
	static const char *const ptxed_opts[] = { "--time", NULL };
	char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
	char *argv[] = { own(run_testprog("ptgen")), "-n", "400", "-p", "4", "-s", "40", "-w",
			 "30", "-t", "0x1234", dir, NULL };
	static uint64_t want[400][2], got[400][2];
	struct args in = { .n = 0 }, px = { .n = 0 };
	char raw[4200];
	struct run_result r;
	json_error_t je;
	json_t *doc, *f, *o;
	uint64_t call_t = 0, sum = 0, slow = 0;
	size_t n = 0, i;
	bool in_call = false;

	gen_into(dir, argv);

	/* ptxed: the time on each call line and on its ret line. */
	snprintf(raw, sizeof(raw), "%s:0x401000", path_in(dir, "prog.bin"));
	args_add(&px, "--raw");
	args_add(&px, raw);
	args_add(&px, "--pt");
	args_add(&px, path_in(dir, "trace.pt"));
	run_tool("ptxed", &px, ptxed_opts, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (const char *l = r.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *insn;
		uint64_t t;

		if (strspn(l, "0123456789abcdef") != 16 || l[16] != ' ')
			continue;
		t = strtoull(l, NULL, 16);
		insn = l + 18 + 16;
		insn += strspn(insn, " ");
		if (!strncmp(insn, "call", 4)) {
			cr_assert(!in_call, "f calls nothing: %.60s", l);
			call_t = t;
			in_call = true;
		} else if (!strncmp(insn, "ret", 3)) {
			cr_assert(in_call && n < 400);
			want[n][0] = perf_time(call_t, 1000, 2, 3);
			want[n][1] = perf_time(t, 1000, 2, 3);
			slow += t != call_t;
			n++;
			in_call = false;
		}
	}
	run_free(&r);
	cr_assert_eq(n, 400, "ptxed lists %zu calls", n);
	cr_assert_eq(slow, 10, "libipt times 10 slow calls, not %" PRIu64, slow);

	args_gen(&in, dir);
	run_tool("report", &in, opts, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	doc = json_loads(r.out, 0, &je);
	cr_assert(doc, "%s", je.text);
	f = function(doc, "f");
	cr_assert(f, "%s", r.out);
	cr_assert_eq(json_array_size(json_object_get(f, "outliers")), 400, "%s", r.out);
	json_array_foreach(json_object_get(f, "outliers"), i, o) {
		got[i][0] = num(o, "start");
		got[i][1] = num(o, "start") + num(o, "duration");
		sum += num(o, "duration");
	}
	qsort(want, n, sizeof(want[0]), cmp_pair);
	qsort(got, n, sizeof(got[0]), cmp_pair);
	for (i = 0; i < n; i++) {
		cr_expect_eq(got[i][0], want[i][0], "call %zu starts at %" PRIu64 ", libipt %" PRIu64,
			     i, got[i][0], want[i][0]);
		cr_expect_eq(got[i][1], want[i][1], "call %zu ends at %" PRIu64 ", libipt %" PRIu64,
			     i, got[i][1], want[i][1]);
	}
	/* Durations add up: f calls nothing, so its self and total time are its calls'. */
	cr_expect_gt(sum, 0);
	cr_expect_eq(num(f, "total"), sum, "%s", r.out);
	cr_expect_eq(num(f, "self"), sum, "%s", r.out);
	json_decref(doc);
	run_free(&r);
	cleanup(dir);
}

/*
 * f (at +0x7) is interrupted after its first instruction; the handler calls a function and
 * returns with iretq; f runs 3 more instructions and returns (pttc, as libipt's tests are
 * written). The 4 instructions of the interrupt are not f's, neither self nor total, and
 * not in its duration; the function the handler calls keeps its own; every instruction is
 * some row's self.
 */
static const char intr_ptt[] =
	"org 0x100000\n"
	"bits 64\n"
	"; @pt p0: psb()\n"
	"; @pt p1: fup(3: %l0)\n"
	"; @pt p2: mode.exec(64bit)\n"
	"; @pt p3: psbend()\n"
	"; @pt p4: fup(1: %l4)\n"
	"; @pt p5: tip(3: %l7)\n"
	"; @pt p6: tnt(t)\n"
	"; @pt p7: tip(3: %l4)\n"
	"; @pt p8: tnt(t)\n"
	"; @pt p9: fup(1: %l2)\n"
	"; @pt p10: tip.pgd(0: %l2)\n"
	"l0: call l3\n"
	"l1: nop\n"
	"l2: hlt\n"
	"l3: nop\n"
	"l4: nop\n"
	"l5: nop\n"
	"l6: ret\n"
	"l7: call l9\n"
	"l8: db 0x48, 0xcf\n"
	"l9: nop\n"
	"l10: ret\n";

/*
 * @ptt assembled by pttc as NAME.ptt in a new directory (*@dir, for cleanup()), then
 * `report --json` of NAME.pt over NAME.bin at 0x100000 into @r: its document.
 */
static json_t *report_of_ptt(const char *name, const char *ptt, char **dir,
			     struct run_result *r)
{
	static const char *const json_opts[] = { "--json", NULL };
	char *pttc = own(run_shared("oracle/pttc")), file[64], raw[4200];
	struct args in = { .n = 0 };
	json_error_t je;
	json_t *doc;
	FILE *out;

	if (system("command -v yasm >/dev/null 2>&1"))
		cr_skip_test("pttc needs yasm: apt-get install yasm");
	*dir = own(strdup("/tmp/ptc-report-XXXXXX"));
	cr_assert(mkdtemp(*dir));
	snprintf(file, sizeof(file), "%s.ptt", name);
	out = fopen(path_in(*dir, file), "w");
	cr_assert(out);
	fputs(ptt, out);
	fclose(out);
	cr_assert_eq(run_argv((char *[]){ "sh", "-c", "cd \"$1\" && \"$2\" \"$3\"", "sh", *dir,
					  pttc, file, NULL }, NULL, r), 0);
	cr_assert_eq(r->status, 0, "pttc: %s", r->err);
	run_free(r);
	snprintf(file, sizeof(file), "%s.pt", name);
	args_add(&in, "--pt");
	args_add(&in, path_in(*dir, file));
	args_add(&in, "--raw");
	snprintf(file, sizeof(file), "%s.bin", name);
	snprintf(raw, sizeof(raw), "%s:0x100000", path_in(*dir, file));
	args_add(&in, raw);
	run_tool("report", &in, json_opts, r);
	cr_assert_eq(r->status, 0, "%s", r->err);
	doc = json_loads(r->out, 0, &je);
	cr_assert(doc, "%s", je.text);
	return doc;
}

Test(report, time_in_an_interrupt_is_not_the_interrupted_functions)
{
	struct run_result r;
	json_t *doc, *f, *g, *row;
	uint64_t self_sum = 0;
	size_t i, j;
	char *dir;

	doc = report_of_ptt("intr", intr_ptt, &dir, &r);
	cr_expect_eq(num(doc, "instructions"), 10, "%s", r.out);
	f = function(doc, "[unknown] (intr.bin+0x7)");
	cr_assert(f, "%s", r.out);
	cr_expect_str_eq(json_string_value(json_object_get(f, "object")), "intr.bin");
	cr_expect_eq(num(f, "calls"), 1, "%s", r.out);
	cr_expect_eq(num(f, "insns_self"), 4, "%s", r.out);
	cr_expect_eq(num(f, "insns_total"), 4, "%s", r.out);
	cr_expect_eq(num(f, "self"), 4, "%s", r.out);
	cr_expect_eq(num(f, "total"), 4, "%s", r.out);
	cr_expect_eq(num(f, "max"), 4, "%s", r.out);
	/* What the handler calls keeps its own instructions (nop, ret) and time. */
	g = function(doc, "[unknown] (intr.bin+0x12)");
	cr_assert(g, "%s", r.out);
	cr_expect_eq(num(g, "insns_total"), 2, "%s", r.out);
	cr_expect_eq(num(g, "max"), 2, "%s", r.out);
	/* The handler's own instructions (call, iretq) are the interrupt's. */
	cr_assert(function(doc, "[interrupt]"), "%s", r.out);
	cr_expect_eq(num(function(doc, "[interrupt]"), "insns_self"), 2, "%s", r.out);
	json_array_foreach(json_object_get(doc, "groups"), i, g) {
		json_array_foreach(json_object_get(g, "functions"), j, row)
			self_sum += num(row, "insns_self");
	}
	cr_expect_eq(self_sum, 10, "%s", r.out);
	json_decref(doc);
	run_free(&r);
	cleanup(dir);
}

/*
 * The man page's exactness rules on a tail call and an unwinding return (pttc): f (+0x7)
 * calls g (+0xd), which jumps to h (+0x10: a tail call, not a call), which calls k (+0x17);
 * k returns straight to f's return address (a TIP: the stack unwinds, as longjmp and
 * exceptions do), which ends k, g and f at once, all complete. h has no row: its
 * instructions and time are g's. Durations in instructions, as ptxed lists them (7).
 */
static const char tail_ptt[] =
	"org 0x100000\n"
	"bits 64\n"
	"; @pt p0: psb()\n"
	"; @pt p1: fup(3: %l0)\n"
	"; @pt p2: mode.exec(64bit)\n"
	"; @pt p3: psbend()\n"
	"; @pt p4: tip(3: %l1)\n"
	"; @pt p5: fup(1: %l2)\n"
	"; @pt p6: tip.pgd(0: %l2)\n"
	"l0: call l3\n"
	"l1: nop\n"
	"l2: hlt\n"
	"l3: call l5\n"
	"l4: ret\n"
	"l5: jmp l7\n"
	"l6: nop\n"
	"l7: call l10\n"
	"l8: ret\n"
	"l9: nop\n"
	"l10: nop\n"
	"l11: ret\n";

Test(report, a_tail_call_is_its_callers_and_an_unwinding_return_ends_every_call_above)
{
	static const struct {
		const char *name;
		uint64_t self, total;
	} want[] = {
		{ "[unknown] (tc.bin+0x7)", 1, 5 },	/* f: its call */
		{ "[unknown] (tc.bin+0xd)", 2, 4 },	/* g: its jmp, and h's call */
		{ "[unknown] (tc.bin+0x17)", 2, 2 },	/* k: nop, ret */
	};
	struct run_result r;
	json_t *doc, *f;
	char *dir;

	doc = report_of_ptt("tc", tail_ptt, &dir, &r);
	cr_expect_eq(num(doc, "instructions"), 7, "%s", r.out);
	cr_expect_eq(num(doc, "calls"), 3, "%s", r.out);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		f = function(doc, want[i].name);
		cr_assert(f, "%s: %s", want[i].name, r.out);
		cr_expect_eq(num(f, "calls"), 1, "%s: %s", want[i].name, r.out);
		cr_expect_eq(num(f, "incomplete"), 0, "%s: %s", want[i].name, r.out);
		cr_expect_eq(num(f, "insns_self"), want[i].self, "%s: %s", want[i].name, r.out);
		cr_expect_eq(num(f, "insns_total"), want[i].total, "%s: %s", want[i].name, r.out);
		cr_expect_eq(num(f, "max"), want[i].total, "%s: %s", want[i].name, r.out);
	}
	cr_expect_null(function(doc, "[unknown] (tc.bin+0x10)"), "h is no call: %s", r.out);
	json_decref(doc);
	run_free(&r);
	cleanup(dir);
}

/*
 * A snapshot-mode bundle (as test_decode's): ptgen's f/g program (300 iterations) mapped by
 * cpu0's sideband for pid 4242, and two snapshots whose cpu0 window holds that trace.
 */
static char *snapshot_bundle(void)
{
	char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
	char *argv[] = { own(run_testprog("ptgen")), "-n", "300", "-p", "2", dir, NULL };
	static const char mapped[] = "/prog.elf";
	uint8_t mmap2[64 + 16] = { 0 }, start[8] = { 0 };
	uint64_t addr = 0x400000, len = 0x2000;
	uint32_t pid[2] = { 4242, 4242 };
	struct manifest m;
	struct mstream *st;
	struct error e = { 0 };
	char cmd[8192];
	FILE *f;
	int fd;

	gen_into(dir, argv);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/sysroot' && cp '%s/prog.elf' '%s/sysroot/' && "
		 ": > '%s/cpu1.pevent'", dir, dir, dir, dir);
	cr_assert_eq(system(cmd), 0);
	memcpy(start, pid, 8);
	memcpy(mmap2, pid, 8);
	memcpy(mmap2 + 8, &addr, 8);
	memcpy(mmap2 + 16, &len, 8);
	memcpy(mmap2 + 64, mapped, sizeof(mapped));
	f = fopen(path_in(dir, "cpu0.pevent"), "w");
	cr_assert(f);
	testbundle_sb_record(f, 12 /* ITRACE_START */, start, 8, 1);
	testbundle_sb_record(f, 10 /* MMAP2 */, mmap2, sizeof(mmap2), 2);
	fclose(f);
	testbundle_describe_cpu(&m, "-S");
	for (int i = 0; i < 2; i++) {
		st = manifest_add_stream(&m);
		cr_assert(st);
		cr_assert_eq(manifest_set(&st->sideband, i ? "cpu1.pevent" : "cpu0.pevent"), 0);
		st->cpu = i;
		st->tid = -1;
	}
	for (int k = 1; k <= 2; k++) {
		struct msnapshot *sn = manifest_add_snapshot(&m);
		struct stat sb;

		cr_assert(sn);
		sn->number = (unsigned int)k;
		sn->trigger = -1;
		cr_assert_eq(manifest_set(&sn->cause, "signal"), 0);
		cr_assert(asprintf(&sn->dir, "snap-%d", k) > 0);
		snprintf(cmd, sizeof(cmd), "mkdir '%s/snap-%d' && cp '%s/trace.pt' "
			 "'%s/snap-%d/cpu0.pt'", dir, k, dir, dir, k);
		cr_assert_eq(system(cmd), 0);
		cr_assert_eq(stat(path_in(dir, "trace.pt"), &sb), 0);
		struct mwindow *w = manifest_add_window(sn);

		cr_assert(w);
		cr_assert(asprintf(&w->file, "snap-%d/cpu0.pt", k) > 0);
		w->cpu = 0;
		w->tid = -1;
		w->bytes = (uint64_t)sb.st_size;
	}
	cr_assert_eq(manifest_set(&m.sysroot, "sysroot"), 0);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(manifest_write(&m, fd, &e), 0, "%s", e.why);
	close(fd);
	manifest_free(&m);
	return dir;
}

static uint64_t calls_in(json_t *doc, const char *group, const char *name)
{
	json_t *g, *f;
	size_t i, j;

	json_array_foreach(json_object_get(doc, "groups"), i, g) {
		if (strcmp(json_string_value(json_object_get(g, "group")), group))
			continue;
		json_array_foreach(json_object_get(g, "functions"), j, f)
			if (!strcmp(json_string_value(json_object_get(f, "function")), name))
				return num(f, "calls");
	}
	return UINT64_MAX;
}

/* A snapshot bundle: each window on its own (--per-stream), merged, or per thread. */
Test(report, snapshot_windows_on_their_own_or_merged_and_per_thread)
{
	char *dir = snapshot_bundle();
	struct args in = { .n = 0 };
	struct run_result r;
	json_error_t je;
	json_t *doc;
	struct {
		const char *opt, *group;
		uint64_t calls;
	} cases[] = {
		{ "--per-stream", "snap-1/cpu0.pt", 300 },
		{ "--per-stream", "snap-2/cpu0.pt", 300 },
		{ "--per-thread", "4242/4242", 600 },
		{ "--json", "", 600 },
	};

	args_add(&in, dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const opts[] = { "--json", cases[i].opt, NULL };

		run_tool("report", &in, opts, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		doc = json_loads(r.out, 0, &je);
		cr_assert(doc, "%s", je.text);
		cr_expect_eq(calls_in(doc, cases[i].group, "f"), cases[i].calls, "%s %s: %s",
			     cases[i].opt, cases[i].group, r.out);
		cr_expect_eq(calls_in(doc, cases[i].group, "g"), cases[i].calls, "%s", r.out);
		json_decref(doc);
		run_free(&r);
	}
	cleanup(dir);
}

/* The debug count PTCOLLECT_REPORT_SUM_COUNT adds to the table: calls folded from sums. */
/*
 * @out without the debug note's line: how many calls the workers sum depends on where the
 * chunks and batches end, and the run's own -J (the default: the CPUs free) sizes its chunks
 * as it goes (39,600 or 39,688 of ptgen's 40,000 at -J 2, 39,776 at -J 1); what they print
 * must not.
 */
static char *without_note(const char *out)
{
	char *s = strdup(out), *l = s ? strstr(s, " calls summed in the workers") : NULL;

	cr_assert(s);
	if (l) {
		char *b = l, *e = strchr(l, '\n');

		while (b > s && b[-1] != '\n')
			b--;
		memmove(b, e ? e + 1 : l + strlen(l), strlen(e ? e + 1 : l + strlen(l)) + 1);
	}
	return s;
}

/* The count after @label's " " in @out ("# N instructions, M calls": " calls;"), -1: none. */
static long count_before(const char *out, const char *label)
{
	const char *p = strstr(out, label);

	while (p && p > out && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return p ? strtol(p, NULL, 10) : -1;
}

/*
 * report's workers sum the calls of a fast segment that open and close in one of its
 * batches (T_SUM) and the merge folds the sums in where its stack allows: every view that
 * takes them prints what libipt's block decoder alone prints (per call), -J 1 and -J 2 in
 * 4 KiB chunks: ptgen's loop (timed and not: every duration 0, or the instruction counts),
 * its slow calls (a call open across PSBs below the batches' calls), ptwalk's walks over
 * 300 functions (recursion: a callee whose frame is open below, slots defined inside a sum)
 * and over 20,000. And the sums are taken: most of the loop's calls, some of each walk's;
 * played as their records (PTCOLLECT_REPORT_SUM_PLAY) they count the same.
 */
Test(report, sums_a_segments_calls_in_the_worker_and_prints_the_same, .timeout = 600)
{
	static char *const count[] = { "PTCOLLECT_REPORT_SUM_COUNT=1", NULL };
	static char *const play[] = { "PTCOLLECT_REPORT_SUM_COUNT=1", "PTCOLLECT_REPORT_SUM_PLAY=1",
				      NULL };
	static const char *const views[][6] = {
		{ NULL }, { "--json", NULL }, { "--per-thread", "--clock", "insns", NULL },
		{ "--sort", "p99", "--top", "5", NULL }, { "--clock", "insns", "--json", NULL },
	};
	char *dirs[5], *code[5];
	const char *how[5];
	/* (the walks: none; their trees are of calls to slots of their own, and a T_SUM pays
	 * only where calls repeat their slots: render_report.c's sum_close()) */
	long least[5] = { 5000, 5000, 100, 0, 0 };
	struct run_result r;

	for (int t = 0; t < 3; t++) {
		char *dir = t == 2 ? generate("20000", "7", "50") :
			    own(strdup("/tmp/ptc-report-XXXXXX"));
		char *gen[] = { own(run_testprog("ptgen")), "-n", "20000", "-p", "4", dir, NULL,
				NULL };

		if (t == 1)
			gen[5] = "-z", gen[6] = dir;
		if (t < 2) {
			gen_into(dir, gen);
		}
		dirs[t] = dir;
		how[t] = "--elf";
		code[t] = path_in(dir, "prog.elf");
	}
	for (int t = 3; t < 5; t++) {
		char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
		char *argv[] = { own(run_testprog("ptwalk")), "-b", t == 3 ? "300" : "20000",
				 "-s", "5", "-n", "200000", "-p", "24", dir, NULL };

		gen_into(dir, argv);
		dirs[t] = dir;
		how[t] = "--raw";
		code[t] = path_in(dir, "prog.bin:0x401000");
	}
	for (int t = 0; t < 5; t++) {
		const char *pt = path_in(dirs[t], "trace.pt");
		struct run_result p;

		cr_assert_eq(run_ptcollect(count, &r, "report", how[t], code[t], "--pt", pt, NULL), 0);
		cr_assert_eq(r.status, 0, "%s", r.err);
		if (least[t])
			cr_expect_geq(count_before(r.out, " calls summed in the workers"), least[t],
				      "%s: %s", pt, r.out);
		/* the sums played as records (the merge's way where its stack is too deep) */
		cr_assert_eq(run_ptcollect(play, &p, "report", how[t], code[t], "--pt", pt,
					   "--clock", "insns", NULL), 0);
		cr_expect_eq(p.status, 0, "%s", p.err);
		if (least[t])
			cr_expect_geq(count_before(p.out, " calls summed in the workers"), least[t],
				      "%s: %s", pt, p.out);
		run_free(&r);
		cr_assert_eq(run_ptcollect(count, &r, "report", how[t], code[t], "--pt", pt,
					   "--clock", "insns", NULL), 0);
		{
			char *po = without_note(p.out), *ro = without_note(r.out);

			cr_expect_str_eq(po, ro, "%s: the sums played print other output", pt);
			free(po);
			free(ro);
		}
		run_free(&p);
		run_free(&r);
		for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++)
			view_fast_same((const char *[]){ "report", how[t], code[t], "--pt", pt,
							 NULL }, views[v], pt);
		cleanup(dirs[t]);
	}
}


/*
 * report -J 1 on a walk ptwalk makes with @opts (its options, the directory added): at least
 * @min_calls calls and @funcs slot definitions (each function's once), fewer than one in
 * @per_def of the calls, and each of @views (@nviews) as libipt's block decoder alone
 * prints it, at -J 1 and at -J 2 in 4 KiB chunks (view_fast_same()).
 */
static void keeps_addresses(const char *const *opts, long min_calls, long funcs, long per_def,
			    long max_defs, const char *const (*views)[4], size_t nviews)
{
	static char *const count[] = { "PTCOLLECT_REPORT_SUM_COUNT=1", NULL };
	char *dir = own(strdup("/tmp/ptc-report-XXXXXX")), *argv[16];
	const char *code, *pt;
	struct run_result r;
	long calls, defs;
	size_t n = 0;

	argv[n++] = own(run_testprog("ptwalk"));
	while (*opts && n < 14)
		argv[n++] = (char *)*opts++;
	argv[n++] = dir;
	argv[n] = NULL;
	gen_into(dir, argv);
	code = path_in(dir, "prog.bin:0x401000");
	pt = path_in(dir, "trace.pt");
	cr_assert_eq(run_ptcollect(count, &r, "report", "-J", "1", "--raw", code, "--pt", pt, NULL),
		     0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	calls = count_before(r.out, " calls;");
	defs = count_before(r.out, " address slots defined");
	cr_assert_gt(calls, min_calls, "%s", r.out);
	cr_assert_geq(defs, funcs, "every function's slot is defined once at least: %s", r.out);
	cr_expect_lt(defs * per_def, calls, "addresses pushed out of their slots, defined again "
		     "and again: %ld defined for %ld calls", defs, calls);
	if (max_defs)
		cr_expect_leq(defs, max_defs, "callees defined again: %ld defined", defs);
	run_free(&r);
	for (size_t v = 0; v < nviews; v++)
		view_fast_same((const char *[]){ "report", "--raw", code, "--pt", pt, NULL },
			       views[v], pt);
	cleanup(dir);
}

/*
 * A worker keeps the addresses a chunk's calls name in ADDR_SLOTS slots (a T_ADEF when one
 * is not kept yet), and the merge finds the row by slot: on a walk over 2,000 functions
 * (more than the 512 slots there were), most calls name a kept slot, one chunk at -J 1
 * (4,873 definitions of 72,678 calls; 44,430 with 512 slots), and every view prints what
 * libipt's block decoder alone prints, at -J 1 and at -J 2 in 4 KiB chunks (a chunk's
 * slots are its own, and each worker thread has its own tables).
 */
Test(report, keeps_the_addresses_of_many_functions_and_prints_the_same, .timeout = 300)
{
	static const char *const views[][4] = {
		{ NULL }, { "--json", "--outliers", "3", NULL }, { "--folded", NULL },
		{ "--clock", "insns", NULL },
	};

	keeps_addresses((const char *[]){ "-b", "2000", "-s", "5", "-n", "1000000", "-p", "24",
					  NULL }, 50000, 2000, 5, 0, views,
			sizeof(views) / sizeof(views[0]));
}

/*
 * A worker keeps a chunk's addresses in its slots until 3/4 of a part are kept, callees'
 * apart from returns' (render_report.c's ADDR_CALLEES): no address that hashes alike or
 * comes later pushes a callee out. A walk over 20,000 functions, 5 M instructions
 * (bench/decode's walk, shorter), in one chunk at -J 1: 23,668 definitions for 338,384
 * calls (27,502 in lines of four slots, 49,067 in one slot an address); every view as
 * libipt's block decoder alone prints it.
 */
Test(report, keeps_addresses_that_hash_alike_and_prints_the_same, .timeout = 300)
{
	static const char *const views[][4] = {
		{ NULL }, { "--clock", "insns", "--json", NULL },
	};

	keeps_addresses((const char *[]){ "-b", "20000", "-s", "5", "-n", "5000000", NULL },
			300000, 20000, 10, 25000, views, sizeof(views) / sizeof(views[0]));
}

/*
 * More callees in a chunk than 3/4 of their slots: the worker starts their slots again (a
 * new generation: each is defined again at its next call, the merge's slots kept until
 * then), here a walk over 40,000 functions in one chunk at -J 1 (47,233 definitions for
 * 199,757 calls), and in 4 KiB chunks at -J 2; every view as libipt's block decoder alone
 * prints it.
 */
Test(report, keeps_more_callees_than_its_slots_and_prints_the_same, .timeout = 300)
{
	static const char *const views[][4] = {
		{ NULL }, { "--clock", "insns", "--json", NULL }, { "--folded", NULL },
	};

	keeps_addresses((const char *[]){ "-b", "40000", "-s", "5", "-n", "3000000", NULL },
			150000, 30000, 3, 0, views, sizeof(views) / sizeof(views[0]));
}

/*
 * A loop's batches of calls and returns come again (ptgen's: f calling g, the same calls
 * and runs in turn), and a worker writes the T_SUM of a batch it summed before from the
 * same state again by a copy, not by summing its trees (render_report.c's struct bmemo):
 * most of ptgen's batches go so, timed (a T_TIME before each segment's first) and not, at
 * -J 1 and in 4 KiB chunks at -J 2. Checked (PTCOLLECT_REPORT_AGAIN_CHECK: each such batch
 * also summed, the bytes and the worker's state after compared), none differs, there and
 * on ptgen's slow calls and a walk over 300 functions; and every view that takes the sums
 * prints what libipt's block decoder alone prints.
 */
Test(report, writes_a_loops_batches_again_and_prints_the_same, .timeout = 300)
{
	static char *const check[] = { "PTCOLLECT_REPORT_SUM_COUNT=1",
				       "PTCOLLECT_REPORT_AGAIN_CHECK=1", NULL };
	static const char *const views[][6] = {
		{ NULL }, { "--json", NULL }, { "--per-thread", "--clock", "insns", NULL },
		{ "--sort", "p99", "--top", "5", NULL }, { "--clock", "insns", "--json", NULL },
	};
	struct run_result r;

	for (int t = 0; t < 4; t++) {
		char *dir = t == 2 ? generate("20000", "7", "50") :
			    own(strdup("/tmp/ptc-report-XXXXXX"));
		char *gen[] = { own(run_testprog("ptgen")), "-n", "20000", "-p", "4", dir, NULL,
				NULL };
		char *walk[] = { own(run_testprog("ptwalk")), "-b", "300", "-s", "5", "-n",
				 "200000", "-p", "24", dir, NULL };
		const char *how = t == 3 ? "--raw" : "--elf", *code, *pt;

		if (t == 1)
			gen[5] = "-z", gen[6] = dir;
		if (t < 2)
			gen_into(dir, gen);
		else if (t == 3)
			gen_into(dir, walk);
		code = path_in(dir, t == 3 ? "prog.bin:0x401000" : "prog.elf");
		pt = path_in(dir, "trace.pt");
		for (int j = 0; j < 2; j++) {
			cr_assert_eq(run_ptcollect(check, &r, "report", how, code, "--pt", pt, "-J",
						   j ? "2" : "1", "--chunk-size", j ? "4K" : "64M",
						   "--clock", j ? "insns" : "time", NULL), 0);
			cr_assert_eq(r.status, 0, "%s", r.err);
			/* (ptgen's 40,000 calls: 453 batches, a segment's 176 calls and
			 * returns each; 449 written again at -J 1, 421 at -J 2) */
			if (t < 2)
				cr_expect_geq(count_before(r.out, " batches written again"), 400,
					      "%s -J %d: %s", pt, j + 1, r.out);
			cr_expect_eq(count_before(r.out, " checked not as summed)"), 0,
				     "%s -J %d: %s", pt, j + 1, r.out);
			run_free(&r);
		}
		for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++)
			view_fast_same((const char *[]){ "report", how, code, "--pt", pt, NULL },
				       views[v], pt);
		cleanup(dir);
	}
}

/*
 * The merge folds a T_SUM at once where the thread is at report's depth bound (fold_over():
 * each call its row's call and an incomplete one, the instructions the top frame's), folds
 * it over the frames below where the bound allows, and plays it where it would cross it:
 * ptgen's loop (f calling g) run 1,100, 1,000 and 1,023 calls deep (under r calling
 * itself). Most calls are summed; the sums played print what folding prints; every view at
 * -J 1 and at -J 2 in 4 KiB chunks prints what libipt's block decoder alone prints. (It
 * fails with fold_over()'s incomplete calls or instructions dropped: tried.)
 */
/*
 * ptgen -d 1100: r calls itself 1,100 times and never returns, then f and g are called 2,000
 * times each, all past the depth bound (1,024 frames). Every such call counts in its row as
 * a call and an incomplete one: the merge adds these counts a few calls later (row_later()),
 * so a buffer's last ones must still be added before the output (they were missing: f and g
 * 1,992).
 */
Test(report, counts_every_call_past_the_depth_bound, .timeout = 120)
{
	static const char *const jobs[][4] = {
		{ "-J", "1", NULL }, { "-J", "2", "--chunk-size", "4K" },
	};
	char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
	char *argv[] = { own(run_testprog("ptgen")), "-d", "1100", "-n", "2000", "-p", "4", dir,
			 NULL };
	struct args in = { .n = 0 };

	gen_into(dir, argv);
	args_gen(&in, dir);
	for (size_t j = 0; j < sizeof(jobs) / sizeof(jobs[0]); j++) {
		const char *extra[7] = { "--json", jobs[j][0], jobs[j][1], jobs[j][2], jobs[j][3],
					 NULL };
		struct run_result r;
		json_error_t je;
		json_t *doc;

		run_tool("report", &in, extra, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		doc = json_loads(r.out, 0, &je);
		cr_assert(doc, "%s: %s", je.text, r.out);
		cr_expect_eq(num(doc, "calls"), 1100 + 2 * 2000, "%s", r.out);
		for (int k = 0; k < 2; k++) {
			json_t *f = function(doc, k ? "g" : "f");

			cr_assert(f, "%s", r.out);
			cr_expect_eq(num(f, "calls"), 2000, "%s %s: %s", jobs[j][1],
				     k ? "g" : "f", r.out);
			cr_expect_eq(num(f, "incomplete"), 2000, "%s %s: %s", jobs[j][1],
				     k ? "g" : "f", r.out);
		}
		json_decref(doc);
		run_free(&r);
	}
	cleanup(dir);
}

Test(report, folds_the_sums_of_calls_past_the_depth_bound_and_prints_the_same, .timeout = 600)
{
	static char *const count[] = { "PTCOLLECT_REPORT_SUM_COUNT=1", NULL };
	static char *const play[] = { "PTCOLLECT_REPORT_SUM_COUNT=1", "PTCOLLECT_REPORT_SUM_PLAY=1",
				      NULL };
	static const char *const depths[] = { "1100", "1000", "1023" };
	static const char *const views[][6] = {
		{ NULL }, { "--json", NULL }, { "--per-thread", "--clock", "insns", NULL },
		{ "--clock", "insns", "--json", NULL },
	};

	for (size_t k = 0; k < sizeof(depths) / sizeof(depths[0]); k++) {
		char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
		char *argv[] = { own(run_testprog("ptgen")), "-d", (char *)depths[k], "-n", "20000",
				 "-p", "4", dir, NULL };
		const char *elf, *pt;
		struct run_result r, p;

		gen_into(dir, argv);
		elf = path_in(dir, "prog.elf");
		pt = path_in(dir, "trace.pt");
		for (int c = 0; c < 2; c++) {
			const char *clock = c ? "--clock" : NULL, *insns = c ? "insns" : NULL;

			cr_assert_eq(run_ptcollect(count, &r, "report", "--elf", elf, "--pt", pt,
						   clock, insns, NULL), 0);
			cr_assert_eq(r.status, 0, "%s", r.err);
			/* (f's and g's 40,000 calls but each chunk's first few) */
			cr_expect_geq(count_before(r.out, " calls summed in the workers"), 35000,
				      "-d %s: %s", depths[k], r.out);
			cr_assert_eq(run_ptcollect(play, &p, "report", "--elf", elf, "--pt", pt,
						   clock, insns, NULL), 0);
			cr_expect_eq(p.status, 0, "%s", p.err);
			{
				char *po = without_note(p.out), *ro = without_note(r.out);

				cr_expect_str_eq(po, ro, "-d %s: the sums played print other output",
						 depths[k]);
				free(po);
				free(ro);
			}
			run_free(&p);
			run_free(&r);
		}
		for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++)
			view_fast_same((const char *[]){ "report", "--elf", elf, "--pt", pt, NULL },
				       views[v], pt);
		cleanup(dir);
	}
}

/* The sums over a report's --json rows: their calls, their own instructions, incomplete. */
static void row_sums(json_t *doc, uint64_t *calls, uint64_t *insns, uint64_t *incomplete)
{
	json_t *g, *f;
	size_t i, j;

	*calls = *insns = *incomplete = 0;
	json_array_foreach(json_object_get(doc, "groups"), i, g) {
		json_array_foreach(json_object_get(g, "functions"), j, f) {
			*calls += num(f, "calls");
			*insns += num(f, "insns_self");
			*incomplete += num(f, "incomplete");
		}
	}
}

/*
 * The merge adds what calls and returns bring to their rows 8 entries later (report_agg.c's
 * struct rlog), and a frame keeps its own instructions until it leaves the stack: on a
 * walk over 20,000 functions (3 M instructions, its stack past the bound and open at the
 * end), the rows' calls add up to the report's calls and their own instructions to its
 * instructions, at -J 1 and at -J 2 in 4 KiB chunks (what is kept at a buffer's end is
 * added there), with --outliers (added at once) too, and -J 2 prints what -J 1 does.
 */
Test(report, adds_every_call_and_instruction_to_its_row_later, .timeout = 300)
{
	static const char *const runs[][7] = {
		{ "-J", "1", NULL }, { "-J", "2", "--chunk-size", "4K", NULL },
		{ "-J", "1", "--outliers", "3", NULL },
		{ "-J", "2", "--chunk-size", "4K", "--outliers", "3", NULL },
	};
	char *dir = own(strdup("/tmp/ptc-report-XXXXXX"));
	char *argv[] = { own(run_testprog("ptwalk")), "-b", "20000", "-s", "5", "-n", "3000000",
			 dir, NULL };
	char *first[2] = { NULL, NULL };
	struct args in = { .n = 0 };

	gen_into(dir, argv);
	args_add(&in, "--raw");
	args_add(&in, path_in(dir, "prog.bin:0x401000"));
	args_add(&in, "--pt");
	args_add(&in, path_in(dir, "trace.pt"));
	for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		const char *extra[8] = { "--json" };
		uint64_t calls, insns, incomplete;
		struct run_result r;
		json_error_t je;
		json_t *doc;

		for (size_t a = 0; runs[k][a]; a++)
			extra[a + 1] = runs[k][a];
		run_tool("report", &in, extra, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		doc = json_loads(r.out, 0, &je);
		cr_assert(doc, "%s: %s", je.text, r.out);
		row_sums(doc, &calls, &insns, &incomplete);
		cr_expect_gt(num(doc, "calls"), 200000);
		cr_expect_eq(calls, num(doc, "calls"), "run %zu: the rows' calls", k);
		cr_expect_eq(insns, num(doc, "instructions"), "run %zu: the rows' instructions", k);
		cr_expect_gt(incomplete, 10000, "run %zu: calls past the bound and open", k);
		/* (-J 2 in chunks prints what -J 1 does, each view) */
		if (!first[k / 2])
			first[k / 2] = strdup(r.out);
		else
			cr_expect_str_eq(r.out, first[k / 2], "run %zu", k);
		json_decref(doc);
		run_free(&r);
	}
	free(first[0]);
	free(first[1]);
	cleanup(dir);
}
