// SPDX-License-Identifier: MIT
/*
 * ptcollect decode against references nobody here wrote: the instructions
 * upstream projects list for real Intel traces (../shared/traces), libipt's
 * own ptxed (../shared/oracle) on the same input, perf's branch list, and
 * traces libipt's encoder writes for a program ptgen knows the flow of.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manifest.h"
#include "run.h"
#include "suitewatch.h"
#include "tempfile.h"
#include "testbundle.h"

SUITEWATCH(watchdog, 300)

TestSuite(decode, .init = watchdog, .fini = free_owned);

static bool hex_byte_at(const char *t)
{
	return strspn(t, "0123456789abcdef") >= 2 && (t[2] == ' ' || t[2] == '\n' || !t[2]);
}

static bool hex_byte(const char *t)
{
	return strlen(t) == 2 && hex_byte_at(t);
}

/* The reference data (run_shared: ../shared or $PTCOLLECT_SHARED), or a skip that says why. */
static char *shared(const char *rel)
{
	return own(run_shared(rel));
}

/* Run ptcollect decode with @a (after "decode"). */
static void decode(struct args *a, struct run_result *r)
{
	struct args full = { .n = 0 };

	args_add(&full, run_bin());
	args_add(&full, "decode");
	for (int i = 0; i < a->n; i++)
		args_add(&full, a->v[i]);
	cr_assert_eq(run_argv(full.v, NULL, r), 0);
}

static void ptxed(struct args *a, struct run_result *r)
{
	struct args full = { .n = 0 };

	args_add(&full, shared("oracle/ptxed"));
	for (int i = 0; i < a->n; i++)
		args_add(&full, a->v[i]);
	cr_assert_eq(run_argv(full.v, NULL, r), 0);
	cr_assert_eq(r->status, 0, "ptxed failed: %s", r->err);
}

/* The instruction addresses of a listing: lines that start with 16 hex digits. */
static size_t addresses(const char *text, uint64_t *out, size_t max)
{
	size_t n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t k = strspn(l, "0123456789abcdef");

		if (k == 16 && (l[16] == ' ' || l[16] == '\n')) {
			cr_assert_lt(n, max);
			out[n++] = strtoull(l, NULL, 16);
		}
	}
	return n;
}

/* The event lines ("[enabled]"), without ptxed's sideband diagnostics. */
static char *events(const char *text)
{
	char *out = calloc(1, strlen(text) + 1), *o = out;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) + 1 : strlen(l);

		if (*l == '[' && !memmem(l, len, "sideband", 8)) {
			memcpy(o, l, len);
			o += len;
		}
	}
	return out;
}

static const char *const dynamorio_cfg[] = {
	"--cpu", "6/85/4", "--mtc-freq", "3", "--nom-freq", "37", "--cpuid-0x15.eax", "2",
	"--cpuid-0x15.ebx", "308", "--pevent:sample-type", "0x10086", "--pevent:time-shift", "31",
	"--pevent:time-mult", "581029125", "--pevent:time-zero", "18444502336406842448", NULL,
};

/* The DynamoRIO set's options, for ptxed and ptcollect alike: sideband, no --elf. */
static void dynamorio_args(struct args *a, const char *set)
{
	char *dir, *p1, *p2, *pt;

	dir = shared(set);
	if (asprintf(&p1, "%s/primary.sideband.pevent", dir) < 0 ||
	    asprintf(&p2, "%s/secondary.sideband.pevent", dir) < 0 ||
	    asprintf(&pt, "%s/pt.bin", dir) < 0)
		abort();
	own(p1);
	own(p2);
	own(pt);
	args_addv(a, dynamorio_cfg);
	args_add(a, "--pevent:sysroot");
	args_add(a, dir);
	args_add(a, "--pevent:primary");
	args_add(a, p1);
	args_add(a, "--pevent:secondary");
	args_add(a, p2);
	args_add(a, "--pt");
	args_add(a, pt);
}

/* The number of instruction bytes on a --insn line. */
static unsigned line_bytes(const char *l)
{
	unsigned n = 0;

	for (l += 16; l[0] == ' ' && hex_byte_at(l + 1); l += 3)
		n++;
	return n;
}

static const char *line_at(const char *text, uint64_t addr)
{
	char key[20];
	const char *l;

	snprintf(key, sizeof(key), "%016" PRIx64 " ", addr);
	l = strstr(text, key);
	cr_assert(l, "no line for %s in:\n%s", key, text);
	return l;
}


/*
 * drpt2trace's expected listing: per instruction its "+N" offset, its bytes where the
 * listing has them ("L2 ba 0e 00 00 00 mov ...") and its mnemonic where the template
 * names one ("L3 .* mov ..."); and its "Number of Instructions".
 */
static size_t upstream_listing(const char *path, unsigned *offs, char mnem[][16],
			       char bytes[][48], size_t max, unsigned *count)
{
	char line[512];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	cr_assert(f, "%s: %s", path, strerror(errno));
	*count = 0;
	while (fgets(line, sizeof(line), f)) {
		char *tok[32], *save = NULL;
		int nt = 0, i;

		sscanf(line, "Number of Instructions: %u", count);
		for (char *t = strtok_r(line, " \t\r\n", &save); t && nt < 32;
		     t = strtok_r(NULL, " \t\r\n", &save))
			tok[nt++] = t;
		if (nt < 3 || tok[1][0] != 'L')
			continue;
		if (tok[0][0] == '\\')
			tok[0]++;
		if (tok[0][0] != '+')
			continue;
		cr_assert_lt(n, max);
		offs[n] = (unsigned)strtoul(tok[0] + 1, NULL, 10);
		mnem[n][0] = bytes[n][0] = '\0';
		i = 2;
		if (!strcmp(tok[2], ".*")) {
			i = 3;
		} else {
			for (; i < nt && hex_byte(tok[i]); i++)
				snprintf(bytes[n] + strlen(bytes[n]), 48 - strlen(bytes[n]), "%s%s",
					 bytes[n][0] ? " " : "", tok[i]);
		}
		if (i < nt && tok[i][0] >= 'a' && tok[i][0] <= 'z')
			snprintf(mnem[n], 16, "%s", tok[i]);
		n++;
	}
	fclose(f);
	return n;
}

/*
 * A DynamoRIO set decodes to its upstream listing: as many instructions, each at its
 * "+N" (the bytes of the instructions before, in trace order: an instruction that stops
 * the trace, like int $0x80, is not listed), with its bytes and mnemonic where the
 * listing has them; and no decode error.
 */
static void upstream_equal(const char *listing, const char *set, unsigned expect,
			   const char *mode_line)
{
	unsigned offs[16], count, at = 0;
	char mnem[16][16], bytes[16][48];
	struct args a = { .n = 0 };
	struct run_result r;
	uint64_t addr[64];
	size_t n, want, i;

	want = upstream_listing(shared(listing), offs, mnem, bytes, 16, &count);
	cr_assert_eq(want, expect);
	cr_assert_eq(count, expect);
	dynamorio_args(&a, set);
	args_add(&a, "--stats");
	args_add(&a, "--insn");
	decode(&a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, mode_line), "%s", r.out);
	cr_expect(strstr(r.out, "decode errors: 0"), "%s", r.out);
	n = addresses(r.out, addr, 64);
	cr_assert_eq(n, want, "%s", r.out);
	for (i = 0; i < n; i++) {
		const char *l = line_at(r.out, addr[i]);

		cr_expect_eq(at, offs[i], "instruction %zu at +%u, upstream +%u", i, at, offs[i]);
		at += line_bytes(l);
		cr_expect(!strncmp(l + 17, bytes[i], strlen(bytes[i])), "%.80s: bytes not %s", l,
			  bytes[i]);
		/* The text after the bytes: capstone's mnemonic, where upstream names one. */
		cr_expect(strstr(l + 16 + 47, mnem[i]) == l + 16 + 47, "%.80s: not %s", l, mnem[i]);
	}
	run_free(&r);
}

Test(decode, dynamorio64_decodes_to_the_eight_upstream_instructions)
{
	upstream_equal("traces/dynamorio-hello64-asm-2023/test_simple.templatex",
		       "traces/dynamorio-hello64-asm-2023/test_simple.raw", 8,
		       "[exec mode: 64-bit]");
}

Test(decode, dynamorio32_decodes_to_the_six_upstream_instructions)
{
	upstream_equal("traces/dynamorio-hello32-asm-2022/test_simple.expect",
		       "traces/dynamorio-hello32-asm-2022/test_simple.raw", 6,
		       "[exec mode: 32-bit]");
}

/* Our instructions and events equal ptxed's on the same options. */
static void same_as_ptxed(struct args *a)
{
	static uint64_t ours[1 << 16], theirs[1 << 16];
	struct run_result r, x;
	char *e1, *e2;
	size_t n, m;

	ptxed(a, &x);
	decode(a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	n = addresses(r.out, ours, 1 << 16);
	m = addresses(x.out, theirs, 1 << 16);
	cr_assert_gt(m, 0, "ptxed decoded nothing:\n%s", x.out);
	cr_expect_eq(n, m, "%zu instructions, ptxed %zu", n, m);
	for (size_t i = 0; i < n && i < m; i++)
		cr_assert_eq(ours[i], theirs[i], "instruction %zu: 0x%" PRIx64 ", ptxed 0x%" PRIx64,
			     i, ours[i], theirs[i]);
	e1 = events(r.out);
	e2 = events(x.out);
	cr_expect_str_eq(e1, e2);
	free(e1);
	free(e2);
	run_free(&r);
	run_free(&x);
}

Test(decode, dynamorio64_insn_equals_ptxed)
{
	struct args a = { .n = 0 };

	dynamorio_args(&a, "traces/dynamorio-hello64-asm-2023/test_simple.raw");
	same_as_ptxed(&a);
}

Test(decode, dynamorio32_insn_equals_ptxed)
{
	struct args a = { .n = 0 };

	dynamorio_args(&a, "traces/dynamorio-hello32-asm-2022/test_simple.raw");
	same_as_ptxed(&a);
}

static void hase_args(struct args *a)
{
	args_add(a, "--cpu");
	args_add(a, "6/94/3");
	args_add(a, "--elf");
	args_add(a, shared("traces/hase-loopy-skylake/loopy"));
	args_add(a, "--pt");
	args_add(a, shared("traces/hase-loopy-skylake/aux.aux-idx2-cpu2-tid19233.pt"));
}

Test(decode, hase_insn_equals_ptxed)
{
	struct args a = { .n = 0 };

	hase_args(&a);
	same_as_ptxed(&a);
}

/* @out, decode --branches' text, is upstream's branch list of hase-loopy, row for row. */
static void expect_upstream_branches(const char *out)
{
	uint64_t from[64], to[64], f, t;
	size_t n = 0, i = 0;
	char line[128];
	const char *l;
	FILE *up;

	up = fopen(shared("traces/hase-loopy-skylake/loopy-20180404T162955.trace"), "r");
	cr_assert(up);
	while (n < 64 && fgets(line, sizeof(line), up))
		if (sscanf(line, "%" SCNx64 "\t%" SCNx64, &from[n], &to[n]) == 2)
			n++;
	fclose(up);
	cr_assert_eq(n, 20);
	for (l = out; *l; l = strchr(l, '\n') + 1, i++) {
		cr_assert_eq(sscanf(l, " %" SCNx64 " => %" SCNx64, &f, &t), 2, "%s", l);
		cr_assert_lt(i, n, "more branches than upstream: %s", out);
		cr_expect(f == from[i] && t == to[i], "row %zu: %" PRIx64 " => %" PRIx64
			  ", upstream %" PRIx64 " => %" PRIx64, i, f, t, from[i], to[i]);
	}
	cr_expect_eq(i, n);
}

/*
 * perf's convention, which upstream's list follows: a trace start is "0 => where it
 * starts", a stop "where it stopped => 0" (the syscall's address; for an asynchronous
 * stop, where it would have gone on).
 */
Test(decode, hase_branches_equal_upstream_and_count_equals_ptxed)
{
	struct args a = { .n = 0 }, s = { .n = 0 }, x = { .n = 0 };
	struct run_result r, rs, rx;
	unsigned long long ins = 0, pins = 0;

	hase_args(&a);
	args_add(&a, "--branches");
	decode(&a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	expect_upstream_branches(r.out);
	hase_args(&s);
	args_add(&s, "--stats");
	decode(&s, &rs);
	cr_assert(sscanf(strstr(rs.out, "instructions: "), "instructions: %llu", &ins) == 1);
	hase_args(&x);
	args_add(&x, "--stat");
	args_add(&x, "--quiet");
	ptxed(&x, &rx);
	cr_assert(sscanf(strstr(rx.out, "insn: "), "insn: %llu", &pins) == 1, "%s", rx.out);
	cr_expect_eq(ins, pins, "%llu instructions, ptxed %llu", ins, pins);
	run_free(&r);
	run_free(&rs);
	run_free(&rx);
}

/* What ptgen says it encoded. */
struct gen_counts {
	unsigned long long insns, branches, calls, psbs;
};

/* A scratch directory with ptgen's program and trace of @iters iterations. */
static char *generate(const char *iters, const char *per_psb, struct gen_counts *c)
{
	char *dir = strdup("/tmp/ptc-decode-XXXXXX");
	struct gen_counts dummy;
	struct run_result r;
	char *argv[] = { own(run_testprog("ptgen")), "-n", (char *)iters, "-p", (char *)per_psb,
			 dir, NULL };

	cr_assert(mkdtemp(dir));
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	c = c ? c : &dummy;
	cr_assert_eq(sscanf(r.out, "instructions %llu branches %llu calls %llu psbs %llu",
			    &c->insns, &c->branches, &c->calls, &c->psbs), 4, "%s", r.out);
	run_free(&r);
	return dir;
}

static void cleanup(char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
	free(dir);
}

static char *path_in(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return own(p);
}

/* ptwalk's program and trace of @args (NULL-terminated) in a new directory from @tmpl. */
static char *walk_dir(const char *tmpl, const char *const *args)
{
	char *dir = strdup(tmpl);
	struct args a = { .n = 0 };
	struct run_result r;

	cr_assert(dir && mkdtemp(dir));
	args_add(&a, own(run_testprog("ptwalk")));
	args_addv(&a, args);
	args_add(&a, dir);
	cr_assert_eq(run_argv(a.v, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	return dir;
}

static void gen_args(struct args *a, const char *dir)
{
	args_add(a, "--elf");
	args_add(a, path_in(dir, "prog.elf"));
	args_add(a, "--pt");
	args_add(a, path_in(dir, "trace.pt"));
}

Test(decode, generated_trace_equals_ptxed)
{
	char *dir = generate("3000", "4", NULL);
	struct args a = { .n = 0 };

	gen_args(&a, dir);
	same_as_ptxed(&a);
	cleanup(dir);
}

/* Flip bytes of a trace at the given offsets. */
static void corrupt(const char *path, const long *offs)
{
	int fd = open(path, O_RDWR);

	cr_assert_geq(fd, 0);
	for (; *offs >= 0; offs++) {
		uint8_t b;

		cr_assert_eq(pread(fd, &b, 1, *offs), 1);
		b ^= 0xff;
		cr_assert_eq(pwrite(fd, &b, 1, *offs), 1);
	}
	close(fd);
}

/* Exit 2, each error on stderr at its offset, and decoding resumes at the next PSB. */
Test(decode, corrupted_trace_reports_errors_at_offsets_and_resumes)
{
	static const long offs[] = { 5000, 5001, 20000, -1 };
	char *dir = generate("20000", "3", NULL);
	struct args a = { .n = 0 };
	struct run_result r;
	unsigned errors = 0, resumed = 0;
	const char *l;

	corrupt(path_in(dir, "trace.pt"), offs);
	gen_args(&a, dir);
	decode(&a, &r);
	cr_expect_eq(r.status, 2, "%s", r.err);
	/* Every inline error: "[OFF, IP: error: ...]", the same on stderr. */
	for (l = r.out; (l = strstr(l, ": error: ")); l++) {
		const char *b = l, *next;
		unsigned long long off;
		char want[64];

		while (b > r.out && b[-1] != '\n')
			b--;
		cr_assert_eq(sscanf(b, "[%llx,", &off), 1, "%.80s", b);
		snprintf(want, sizeof(want), "offset 0x%llx, ip ", off);
		cr_expect(strstr(r.err, want), "%s not on stderr:\n%s", want, r.err);
		errors++;
		/* The next instruction is where the next PSB's FUP says: ptgen's loop. */
		next = strchr(l, '\n') + 1;
		while (*next == '[')
			next = strchr(next, '\n') + 1;
		if (*next) {
			cr_expect(!strncmp(next, "0000000000401000 ", 17), "after the error: %.40s",
				  next);
			resumed++;
		}
	}
	cr_expect_geq(errors, 1, "%s", r.out);
	cr_expect_eq(resumed, errors);
	cr_expect(strstr(r.err, "(resuming at the next PSB)"), "%s", r.err);
	cr_expect(strstr(r.err, "decode errors: the trace between each and the next PSB"),
		  "%s", r.err);
	run_free(&r);
	cleanup(dir);
}

static char *decode_out(const char *dir, const char *const *extra, int *status)
{
	struct args a = { .n = 0 };
	struct run_result r;
	char *out;

	gen_args(&a, dir);
	args_addv(&a, extra);
	decode(&a, &r);
	*status = r.status;
	cr_expect_eq(r.status, 0, "%s", r.err);
	out = strdup(r.out);
	run_free(&r);
	return out;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	cr_assert(f, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

/* --jobs 2 cuts the stream at PSBs and merges: the same bytes as one decoder. */
Test(decode, jobs_two_prints_what_jobs_one_prints)
{
	static const char *const modes[][4] = {
		{ "--insn", NULL }, { "--branches", NULL }, { "--calls", NULL },
		{ "--insn", "--json", NULL }, { "--calls", "--json", NULL }, { "--stats", NULL },
	};
	struct gen_counts gc;
	char *dir = generate("20000", "3", &gc);
	int st;

	cr_assert_gt(gc.psbs, 100);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		const char *one[8] = { "-J", "1" }, *two[8] = { "--jobs", "2", "--chunk-size", "2K" };
		char *o1, *o2;
		int k;

		for (k = 0; modes[m][k]; k++) {
			one[2 + k] = modes[m][k];
			two[4 + k] = modes[m][k];
		}
		o1 = decode_out(dir, one, &st);
		o2 = decode_out(dir, two, &st);
		cr_expect(strlen(o1) > 100);
		cr_expect(!strcmp(o1, o2), "%s: -j 2 differs from -j 1 (%zu and %zu bytes)",
			  modes[m][0], strlen(o1), strlen(o2));
		free(o1);
		free(o2);
	}
	{
		char *t1 = path_in(dir, "t1.json"), *t2 = path_in(dir, "t2.json"), *a, *b;
		const char *one[] = { "-J", "1", "--timeline", t1, NULL };
		const char *two[] = { "--jobs", "2", "--chunk-size", "2K", "--timeline", t2, NULL };

		free(decode_out(dir, one, &st));
		free(decode_out(dir, two, &st));
		a = slurp(t1);
		b = slurp(t2);
		cr_expect(!strcmp(a, b), "--timeline: -j 2 differs from -j 1");
		free(a);
		free(b);
	}
	cleanup(dir);
}

/* Every output mode, compared at --jobs 1 and --jobs 4. */
static const char *const jobs_modes[][3] = {
	{ "--insn", NULL }, { "--branches", NULL }, { "--calls", NULL }, { "--stats", NULL },
	{ "--insn", "--json" }, { "--branches", "--json" }, { "--calls", "--json" },
	{ "--stats", "--json" }, { "--timeline", NULL }, { "--insn", "--offset" },
	/* An output the merge filters beside one its worker writes (decode.c: merge_turn()). */
	{ "--timeline", "--insn" }, { "--timeline", "--calls" },
};

/*
 * @base (a trace's options) decoded in every mode with --jobs 1 and with --jobs 4 cut into
 * @chunk-byte chunks: standard output, standard error, the exit status and the timeline
 * file are the same, byte for byte. @tmp is a directory for the timeline files.
 */
static void jobs_one_and_four_agree(const struct args *base, const char *chunk, const char *tmp,
				    const char *what)
{
	for (size_t m = 0; m < sizeof(jobs_modes) / sizeof(jobs_modes[0]); m++) {
		struct run_result r[2];
		char *tl[2] = { NULL, NULL }, *text[2];
		char mode[32];

		snprintf(mode, sizeof(mode), "%s%s%s", jobs_modes[m][0],
			 jobs_modes[m][1] ? " " : "", jobs_modes[m][1] ? jobs_modes[m][1] : "");
		for (int j = 0; j < 2; j++) {
			struct args a = { .n = 0 };

			for (int i = 0; i < base->n; i++)
				args_add(&a, base->v[i]);
			args_add(&a, "-q");
			if (j) {
				args_addv(&a, (const char *[]){ "--jobs", "4", "--chunk-size", chunk, NULL });
			} else {
				args_addv(&a, (const char *[]){ "--jobs", "1", NULL });
			}
			args_add(&a, jobs_modes[m][0]);
			if (!strcmp(jobs_modes[m][0], "--timeline")) {
				tl[j] = path_in(tmp, j ? "tl4.json" : "tl1.json");
				args_add(&a, tl[j]);
			}
			if (jobs_modes[m][1])
				args_add(&a, jobs_modes[m][1]);
			decode(&a, &r[j]);
		}
		cr_expect_eq(r[0].status, r[1].status, "%s %s: exit %d at -J 1, %d at -J 4", what,
			     mode, r[0].status, r[1].status);
		cr_expect(tl[0] || strlen(r[0].out) + strlen(r[0].err) > 0, "%s %s: no output", what,
			  mode);
		cr_expect(!strcmp(r[0].out, r[1].out), "%s %s: -J 4 prints other output than -J 1 "
			  "(%zu and %zu bytes)", what, mode, strlen(r[0].out), strlen(r[1].out));
		cr_expect(!strcmp(r[0].err, r[1].err), "%s %s: -J 4 says other things than -J 1:\n"
			  "%s\n---\n%s", what, mode, r[0].err, r[1].err);
		if (tl[0]) {
			text[0] = slurp(tl[0]);
			text[1] = slurp(tl[1]);
			cr_expect(strlen(text[0]) > 30, "%s %s: %s", what, mode, text[0]);
			cr_expect(!strcmp(text[0], text[1]), "%s %s: -J 4 writes another timeline",
				  what, mode);
			free(text[0]);
			free(text[1]);
		}
		run_free(&r[0]);
		run_free(&r[1]);
	}
}

/* --jobs 4 in many small chunks prints what --jobs 1 prints, in every mode. */
Test(decode, jobs_four_prints_what_jobs_one_prints_in_every_mode)
{
	struct gen_counts gc;
	char *dir = generate("20000", "3", &gc);
	char *slow = generate("3000", "2", NULL);
	struct args a = { .n = 0 }, b = { .n = 0 };

	cr_assert_gt(gc.psbs, 100);
	gen_args(&a, dir);
	jobs_one_and_four_agree(&a, "2K", dir, "ptgen loop");
	/* The report tests' program: slow calls with time between them. */
	cleanup(slow);
	slow = strdup("/tmp/ptc-decode-XXXXXX");
	cr_assert(mkdtemp(slow));
	{
		char *argv[] = { own(run_testprog("ptgen")), "-n", "3000", "-p", "2", "-s", "7",
				 "-w", "50", "-t", "1000", slow, NULL };
		struct run_result r;

		cr_assert_eq(run_argv(argv, NULL, &r), 0);
		cr_assert_eq(r.status, 0, "%s", r.err);
		run_free(&r);
	}
	gen_args(&b, slow);
	jobs_one_and_four_agree(&b, "1K", slow, "ptgen slow calls");
	cleanup(slow);
	cleanup(dir);
}

/*
 * The same on ptwalk's random walk: deep call stacks (hundreds of frames) across the seams,
 * for --calls' depth and the timeline's stacks at the merge (report's views are in
 * test_report.c jobs_four_prints_what_jobs_one_prints_in_every_view).
 */
Test(decode, jobs_four_prints_what_jobs_one_prints_on_a_random_walk)
{
	char *dir = walk_dir("/tmp/ptc-walk-XXXXXX", (const char *[]){ "-b", "20000", "-s", "1",
								"-n", "100000", NULL });
	struct args a = { .n = 0 };

	args_addv(&a, (const char *[]){ "--raw", path_in(dir, "prog.bin:0x401000"), "--pt",
					 path_in(dir, "trace.pt"), NULL });
	jobs_one_and_four_agree(&a, "4K", dir, "ptwalk");
	cleanup(dir);
}

/*
 * A corrupted trace whose broken PSB+s (a MODE byte flipped in every fifth) fall on chunk
 * seams: one decoder reports each at the IP it was at and goes on from the next PSB;
 * --jobs 4 passes them for a cut and prints the same, in 1 and 2 KiB chunks.
 */
Test(decode, jobs_four_prints_what_jobs_one_prints_with_broken_psbs)
{
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };
	char *dir = generate("20000", "3", NULL), *path = path_in(dir, "trace.pt"), *buf;
	struct args a = { .n = 0 };
	size_t n, k = 0, flipped = 0;
	struct run_result r;
	FILE *f;

	buf = slurp(path);
	f = fopen(path, "rb");
	cr_assert(f);
	fseek(f, 0, SEEK_END);
	n = (size_t)ftell(f);
	fclose(f);
	for (size_t i = 4096; i + 32 < n - 4096; i++) {
		/* ptgen's PSB+: PSB, TSC (8 bytes), MODE.Exec (0x99), FUP, PSBEND. */
		if (memcmp(buf + i, psb, sizeof(psb)) || (uint8_t)buf[i + 24] != 0x99)
			continue;
		if (k++ % 5 == 0) {
			long offs[] = { (long)(i + 24), -1 };

			corrupt(path, offs);
			flipped++;
		}
		i += 31;
	}
	free(buf);
	cr_assert_geq(flipped, 50);
	gen_args(&a, dir);
	jobs_one_and_four_agree(&a, "1K", dir, "broken PSB+s, 1K");
	jobs_one_and_four_agree(&a, "2K", dir, "broken PSB+s, 2K");
	args_add(&a, "--branches");
	decode(&a, &r);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "unexpected packet context"), "%s", r.err);
	run_free(&r);
	cleanup(dir);
}

/* The same on the real traces of ../shared/traces (one PSB each: one chunk at -J 4 too). */
Test(decode, jobs_four_prints_what_jobs_one_prints_on_the_shared_traces)
{
	char *tmp = strdup("/tmp/ptc-decode-XXXXXX");
	struct args h = { .n = 0 }, d64 = { .n = 0 }, d32 = { .n = 0 };

	cr_assert(mkdtemp(tmp));
	hase_args(&h);
	jobs_one_and_four_agree(&h, "64", tmp, "hase-loopy-skylake");
	dynamorio_args(&d64, "traces/dynamorio-hello64-asm-2023/test_simple.raw");
	jobs_one_and_four_agree(&d64, "64", tmp, "dynamorio-hello64");
	dynamorio_args(&d32, "traces/dynamorio-hello32-asm-2022/test_simple.raw");
	jobs_one_and_four_agree(&d32, "64", tmp, "dynamorio-hello32");
	cleanup(tmp);
}

/*
 * A trace-event file: every event well formed, begin/end balanced on every
 * thread (never below zero, nothing open at the end), gaps as "gap" slices with
 * no function open across them.
 */
static void check_timeline(const char *path, size_t *calls, size_t *gaps)
{
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr), *evs, *ev;
	struct {
		json_int_t pid, tid;
		long depth;
	} th[64];
	size_t nth = 0, i;

	cr_assert(doc, "%s: %s (line %d)", path, jerr.text, jerr.line);
	evs = json_object_get(doc, "traceEvents");
	cr_assert(json_is_array(evs));
	*calls = *gaps = 0;
	json_array_foreach(evs, i, ev) {
		const char *ph = json_string_value(json_object_get(ev, "ph"));
		json_t *pid = json_object_get(ev, "pid"), *tid = json_object_get(ev, "tid");
		size_t t;

		cr_assert(ph && json_is_integer(pid) && json_is_integer(tid), "event %zu", i);
		if (strcmp(ph, "M"))
			cr_assert(json_is_number(json_object_get(ev, "ts")) &&
				  json_number_value(json_object_get(ev, "ts")) >= 0, "event %zu",
				  i);
		for (t = 0; t < nth; t++)
			if (th[t].pid == json_integer_value(pid) &&
			    th[t].tid == json_integer_value(tid))
				break;
		if (t == nth) {
			cr_assert_lt(nth, 64);
			th[nth].pid = json_integer_value(pid);
			th[nth].tid = json_integer_value(tid);
			th[nth++].depth = 0;
		}
		if (!strcmp(ph, "B")) {
			cr_assert(json_is_string(json_object_get(ev, "name")), "event %zu", i);
			th[t].depth++;
			(*calls)++;
		} else if (!strcmp(ph, "E")) {
			cr_assert_gt(th[t].depth, 0, "event %zu: an end without a begin", i);
			th[t].depth--;
		} else if (!strcmp(ph, "X")) {
			cr_assert_str_eq(json_string_value(json_object_get(ev, "cat")), "gap");
			cr_assert(json_number_value(json_object_get(ev, "dur")) >= 0);
			cr_assert_eq(th[t].depth, 0, "event %zu: a gap inside an open function", i);
			(*gaps)++;
		} else {
			cr_assert_str_eq(ph, "M", "event %zu", i);
		}
	}
	for (size_t t = 0; t < nth; t++)
		cr_expect_eq(th[t].depth, 0, "thread %lld/%lld: %ld left open",
			     (long long)th[t].pid, (long long)th[t].tid, th[t].depth);
	json_decref(doc);
}

Test(decode, timeline_is_balanced_trace_event_json_with_gaps_marked)
{
	static const long offs[] = { 5000, 5001, 20000, -1 };
	struct gen_counts gc;
	char *dir = generate("20000", "3", &gc), *tl = path_in(dir, "t.json");
	const char *extra[] = { "--timeline", tl, NULL };
	struct args a = { .n = 0 };
	struct run_result r;
	size_t calls, gaps;
	int st;

	free(decode_out(dir, extra, &st));
	check_timeline(tl, &calls, &gaps);
	cr_expect_eq(calls, gc.calls);
	cr_expect_eq(gaps, 0);
	corrupt(path_in(dir, "trace.pt"), offs);
	gen_args(&a, dir);
	args_add(&a, "--timeline");
	args_add(&a, tl);
	decode(&a, &r);
	cr_expect_eq(r.status, 2);
	check_timeline(tl, &calls, &gaps);
	cr_expect_geq(gaps, 1);
	run_free(&r);
	cleanup(dir);
}

Test(decode, timeline_of_real_traces_is_well_formed)
{
	char *tl = strdup("/tmp/ptc-tl-XXXXXX");
	struct args a = { .n = 0 }, b = { .n = 0 };
	struct run_result r;
	size_t calls, gaps;
	int fd = mkstemp(tl);

	cr_assert_geq(fd, 0);
	close(fd);
	dynamorio_args(&a, "traces/dynamorio-hello64-asm-2023/test_simple.raw");
	args_add(&a, "--timeline");
	args_add(&a, tl);
	decode(&a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	check_timeline(tl, &calls, &gaps);
	run_free(&r);
	hase_args(&b);
	args_add(&b, "--timeline");
	args_add(&b, tl);
	decode(&b, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	check_timeline(tl, &calls, &gaps);
	run_free(&r);
	unlink(tl);
	free(tl);
}

/* --calls names both ends by ELF symbol; returns line up with their calls. */
Test(decode, calls_are_a_tree_with_symbol_names)
{
	char *dir = generate("2", "4", NULL);
	const char *extra[] = { "--calls", NULL };
	int st;
	char *out = decode_out(dir, extra, &st);

	cr_expect_str_eq(out,
		"[enabled]\n"
		"call f+0x0 (0x401010) from _start+0x0\n"
		"  call g+0x0 (0x401020) from f+0x0\n"
		"  ret  to f+0x5 (0x401015) from g+0x8\n"
		"ret  to _start+0x5 (0x401005) from f+0x5\n"
		"call f+0x0 (0x401010) from _start+0x0\n"
		"  call g+0x0 (0x401020) from f+0x0\n"
		"  ret  to f+0x5 (0x401015) from g+0x8\n"
		"ret  to _start+0x5 (0x401005) from f+0x5\n"
		"[disabled]\n");
	free(out);
	cleanup(dir);
}

/* ptgen's own count of the flow it encoded, against --stats and --branches (-j: JSON). */
Test(decode, stats_and_branches_count_what_ptgen_encoded)
{
	const char *stats[] = { "--stats", "-j", NULL }, *br[] = { "--branches", NULL };
	struct gen_counts gc;
	char *dir = generate("5000", "2", &gc), *out;
	json_t *doc, *s;
	size_t rows = 0;
	int st;

	out = decode_out(dir, stats, &st);
	doc = json_loads(out, 0, NULL);
	cr_assert(doc, "%s", out);
	s = json_array_get(json_object_get(doc, "streams"), 0);
	cr_expect_eq(json_integer_value(json_object_get(s, "instructions")),
		     (json_int_t)gc.insns);
	cr_expect_eq(json_integer_value(json_object_get(s, "calls")), (json_int_t)gc.calls);
	cr_expect_eq(json_integer_value(json_object_get(s, "errors")), 0);
	/* Taken near branches, and the final syscall (a far one). */
	cr_expect_eq(json_integer_value(json_object_get(s, "branches")),
		     (json_int_t)gc.branches + 1);
	json_decref(doc);
	free(out);
	out = decode_out(dir, br, &st);
	for (const char *l = out; *l; l = strchr(l, '\n') + 1)
		rows++;
	/* Plus the trace's start and its end at the syscall. */
	cr_expect_eq(rows, gc.branches + 2);
	free(out);
	cleanup(dir);
}

/*
 * The bench's second trace (tests/gen/ptwalk): a seeded random walk through 20,000 basic
 * blocks, raw code at 0x401000. decode counts what ptwalk encoded (instructions, calls, the
 * taken branches plus the trace's start and its end at the syscall), and ptxed counts the
 * same instructions: the bench's figures compare like with like.
 */
Test(decode, walk_trace_counts_what_ptwalk_encoded_as_ptxed_does)
{
	char *dir = strdup("/tmp/ptc-walk-XXXXXX"), *raw, *pt, *out;
	unsigned long long insns, branches, calls, psbs, blocks, visited, pins = 0;
	struct args a = { .n = 0 }, x = { .n = 0 };
	struct run_result r, rx;
	json_t *doc, *st;
	size_t rows = 0;

	cr_assert(mkdtemp(dir));
	char *argv[] = { own(run_testprog("ptwalk")), "-b", "20000", "-s", "7", "-n", "300000",
			 "-p", "200", dir, NULL };
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(sscanf(r.out, "instructions %llu branches %llu calls %llu psbs %llu "
			    "blocks %llu visited %llu", &insns, &branches, &calls, &psbs, &blocks,
			    &visited), 6, "%s", r.out);
	run_free(&r);
	cr_expect_geq(visited, 10000, "the walk ran %llu of %llu blocks", visited, blocks);
	cr_expect_gt(psbs, 10);
	raw = path_in(dir, "prog.bin:0x401000");
	pt = path_in(dir, "trace.pt");
	args_addv(&a, (const char *[]){ "--raw", raw, "--pt", pt, "--stats", "-j", NULL });
	decode(&a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	doc = json_loads(r.out, 0, NULL);
	cr_assert(doc, "%s", r.out);
	st = json_array_get(json_object_get(doc, "streams"), 0);
	cr_expect_eq(json_integer_value(json_object_get(st, "instructions")), (json_int_t)insns);
	cr_expect_eq(json_integer_value(json_object_get(st, "calls")), (json_int_t)calls);
	cr_expect_eq(json_integer_value(json_object_get(st, "errors")), 0);
	json_decref(doc);
	run_free(&r);
	a.n = 0;
	args_addv(&a, (const char *[]){ "--raw", raw, "--pt", pt, "--branches", NULL });
	decode(&a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	out = r.out;
	for (const char *l = out; *l; l = strchr(l, '\n') + 1)
		rows++;
	cr_expect_eq(rows, branches + 2);
	run_free(&r);
	args_addv(&x, (const char *[]){ "--raw", raw, "--pt", pt, "--stat", "--quiet", NULL });
	ptxed(&x, &rx);
	cr_assert(sscanf(strstr(rx.out, "insn: "), "insn: %llu", &pins) == 1, "%s", rx.out);
	cr_expect_eq(pins, insns, "ptxed %llu instructions, ptwalk %llu", pins, insns);
	run_free(&rx);
	cleanup(dir);
}

/* The walks' arguments: with timing packets, good and bad; over 60,000 blocks. */
static const char *const ff_good[] = { "-b", "3000", "-s", "2", "-n", "60000", "-p", "30", "-t",
				       NULL };
static const char *const ff_odd[] = { "-b", "3000", "-s", "2", "-n", "60000", "-p", "30", "-t",
				      "-x", "5", NULL };
static const char *const ff_big[] = { "-b", "60000", "-s", "3", "-n", "400000", "-p", "40",
				      NULL };

/*
 * decode --cpu @cpu @mode of ptwalk's trace in @dir, in 4000-byte chunks when @chunked, with
 * the fast path and without (run_fast_same()): the fast run's result in @r.
 */
static void ff_decode(const char *cpu, const char *dir, const char *mode, bool chunked,
		      const char *what, struct run_result *r)
{
	struct args a = { .n = 0 };

	args_addv(&a, (const char *[]){ "decode", "--cpu", cpu, NULL });
	/* -J 1 said: the default follows the load, and the two runs must cut alike. */
	if (chunked)
		args_addv(&a, (const char *[]){ "-J", "2", "--chunk-size", "4000", NULL });
	else
		args_addv(&a, (const char *[]){ "-J", "1", NULL });
	args_addv(&a, (const char *[]){ "--raw", path_in(dir, "prog.bin:0x401000"), "--pt",
					path_in(dir, "trace.pt"), mode, NULL });
	if (!chunked && !strcmp(mode, "--stats"))
		args_add(&a, "--json");
	run_fast_same(&a, what, r);
}

/*
 * The fast flow path on what a real CPU records (issue 25): timing packets (TSC, TMA, MTC,
 * CYC between a TNT and the branches that use it: ptwalk -t) and a CPU with errata that
 * libipt works around (Skylake 6/94/3: BDM70, SKD007, SKD022, SKD010, SKL014, SKL168;
 * Skylake-SP 6/85/4: SKZ84; Broadwell 6/61/0: BDM64). --stats and --branches take it for
 * most segments (the debug count PTCOLLECT_DECODE_FAST_COUNT; was: none with any erratum)
 * and print what libipt's block decoder alone prints, byte for byte. With timing packets
 * libipt fails on or reads otherwise (ptwalk -x: a second TMA after a TSC, a 10-byte CYC, a
 * TMA with reserved bits, SKD007's CYC before 0xf3; was, with --cpu none: the fast path
 * skipped them and printed none of libipt's errors), the same, in one chunk and in many.
 */
Test(decode, fast_path_takes_timing_packets_and_errata_and_prints_what_libipt_does)
{
	static char *const count[] = { "PTCOLLECT_DECODE_FAST_COUNT=1", NULL };
	static const char *const cpus[] = { "none", "6/94/3", "6/85/4", "6/61/0" };

	for (int bad = 0; bad < 2; bad++) {
		char *dir = walk_dir("/tmp/ptc-ffwalk-XXXXXX", bad ? ff_odd : ff_good);
		struct run_result r;

		for (size_t c = 0; c < sizeof(cpus) / sizeof(cpus[0]); c++) {
			if (!bad) {
				json_t *doc, *st;

				cr_assert_eq(run_ptcollect(count, &r, "decode", "--cpu", cpus[c],
							   "--raw", path_in(dir, "prog.bin:0x401000"),
							   "--pt", path_in(dir, "trace.pt"), "--stats",
							   "--json", NULL), 0);
				cr_assert_eq(r.status, 0, "%s", r.err);
				doc = json_loads(r.out, 0, NULL);
				cr_assert(doc, "%s", r.out);
				st = json_array_get(json_object_get(doc, "streams"), 0);
				cr_expect_gt(json_integer_value(json_object_get(st, "fast_segments")),
					     50, "%s: %s", cpus[c], r.out);
				json_decref(doc);
				run_free(&r);
			}
			for (int m = 0; m < 4; m++) {
				const char *mode = m & 1 ? "--branches" : "--stats";
				char what[128];

				snprintf(what, sizeof(what), "%s %s%s (%s)", cpus[c], mode,
					 m >= 2 ? " in chunks" : "", bad ? "bad timing" : "timing");
				ff_decode(cpus[c], dir, mode, m >= 2, what, &r);
				if (bad)
					cr_expect(strstr(r.err, "error"), "%s", r.err);
				run_free(&r);
			}
		}
		cleanup(dir);
	}
}

/*
 * --insn on the fast path (insnblk.h: each block's lines made once, then copied) prints what
 * libipt's instruction decoder prints, byte for byte, and is taken: ptwalk traces with timing
 * packets, good and bad (libipt's errors at the same offsets), under CPUs whose errata the
 * fast path must keep to, at -J 1 and in 4000-byte chunks; and a walk over 60,000 blocks,
 * more than the block table holds (emptied, and the lines' cache with it) and more lines
 * than the cache's ring (written over).
 */
Test(decode, insn_fast_path_prints_what_the_insn_decoder_prints)
{
	static char *const count[] = { "PTCOLLECT_DECODE_FAST_COUNT=1", NULL };
	static const char *const cpus[] = { "none", "6/94/3", "6/85/4" };

	for (int t = 0; t < 3; t++) {
		char *dir = walk_dir("/tmp/ptc-insnfast-XXXXXX",
				    t == 0 ? ff_good : t == 1 ? ff_odd : ff_big);
		struct run_result r;

		for (size_t c = 0; c < (t == 2 ? 1 : sizeof(cpus) / sizeof(cpus[0])); c++) {
			char *raw = path_in(dir, "prog.bin:0x401000"), *pt = path_in(dir, "trace.pt");
			const char *fast;

			if (t != 1) {
				cr_assert_eq(run_ptcollect(count, &r, "decode", "--cpu", cpus[c],
							   "--raw", raw, "--pt", pt, "--insn",
							   "--stats", NULL), 0);
				cr_assert_eq(r.status, 0, "%s", r.err);
				fast = strstr(r.out, "PSB segments decoded fast: ");
				cr_assert(fast, "%.200s", r.err);
				cr_expect_gt(atol(fast + strlen("PSB segments decoded fast: ")), 50,
					     "%s: %s", cpus[c], fast);
				run_free(&r);
			}
			for (int chunked = 0; chunked < 2; chunked++) {
				char what[128];

				snprintf(what, sizeof(what), "%s, walk %d, %s: --insn", cpus[c], t,
					 chunked ? "chunks" : "-J 1");
				ff_decode(cpus[c], dir, "--insn", chunked, what, &r);
				if (t == 1)
					cr_expect(strstr(r.err, "error"), "%s", r.err);
				run_free(&r);
			}
		}
		cleanup(dir);
	}
}

/*
 * A PSB+ that libipt reads, followed by timing packets it fails on (ptwalk -x: a second TMA,
 * a TMA with reserved bits, an unknown packet) is passed for a cut: a chunk started there
 * failed before its first block and printed the error at IP 0, where -J 1 prints the IP it
 * was at (was: 3 of these 3 chunk sizes differed; in CI the default -J followed the load).
 */
Test(decode, jobs_two_prints_the_ip_jobs_one_prints_at_bad_packets_after_a_psb)
{
	static const char *const sizes[] = { "4096", "12800", "32256" };
	char *dir = walk_dir("/tmp/ptc-badcut-XXXXXX", ff_odd);
	char *raw = path_in(dir, "prog.bin:0x401000"), *pt = path_in(dir, "trace.pt");
	struct run_result one, two;

	cr_assert_eq(run_ptcollect(NULL, &one, "decode", "--cpu", "none", "-J", "1", "--raw", raw,
				   "--pt", pt, "--branches", NULL), 0);
	cr_assert(strstr(one.err, "error: unexpected packet context"), "%.300s", one.err);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		cr_assert_eq(run_ptcollect(NULL, &two, "decode", "--cpu", "none", "-J", "2",
					   "--chunk-size", sizes[i], "--raw", raw, "--pt", pt,
					   "--branches", NULL), 0);
		cr_expect_eq(two.status, one.status, "%s: exit %d, -J 1 %d", sizes[i], two.status,
			     one.status);
		cr_expect_str_eq(two.err, one.err, "--chunk-size %s", sizes[i]);
		cr_expect(!strcmp(two.out, one.out), "--chunk-size %s: other branches", sizes[i]);
		run_free(&two);
	}
	run_free(&one);
	cleanup(dir);
}

/*
 * A chunk's last PSB segment (up to the next chunk's PSB) is decoded on the fast path as
 * -J 1's one decoder decodes it, reading past the chunk's end from the file (issue 25: it
 * went to libipt, 20 times the cost, in every chunk; -J 2 took up to a third more CPU time
 * than -J 1 on the walk): in 4 KiB chunks as many segments are fast as in one chunk, with
 * the same output, --stats and --branches, and with an erratum (SKZ84, 6/85/4) that
 * makes fastflow look past the next PSB+.
 */
static uint64_t fast_segments(const char *dir, const char *cpu, const char *chunk,
			      char **branches)
{
	static char *const count[] = { "PTCOLLECT_DECODE_FAST_COUNT=1", NULL };
	char *raw = path_in(dir, "prog.bin:0x401000"), *pt = path_in(dir, "trace.pt");
	struct run_result r;
	json_t *doc;
	uint64_t n;

	cr_assert_eq(run_ptcollect(count, &r, "decode", "--cpu", cpu, "-J", chunk ? "2" : "1",
				   "--chunk-size", chunk ? chunk : "4K", "--raw", raw, "--pt", pt,
				   "--stats", "--json", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	doc = json_loads(r.out, 0, NULL);
	cr_assert(doc, "%s", r.out);
	n = (uint64_t)json_integer_value(json_object_get(json_array_get(
		json_object_get(doc, "streams"), 0), "fast_segments"));
	json_decref(doc);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "decode", "--cpu", cpu, "-J", chunk ? "2" : "1",
				   "--chunk-size", chunk ? chunk : "4K", "--raw", raw, "--pt", pt,
				   "--branches", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(r.err, "");
	*branches = strdup(r.out);
	run_free(&r);
	return n;
}

Test(decode, jobs_two_decodes_a_chunks_last_segment_on_the_fast_path)
{
	static const char *const cpus[] = { "none", "6/85/4" };
	char *dir = walk_dir("/tmp/ptc-seam-XXXXXX", (const char *[]){ "-b", "3000", "-s", "2",
								"-n", "60000", "-p", "30", NULL });
	for (size_t c = 0; c < sizeof(cpus) / sizeof(cpus[0]); c++) {
		char *one, *two;
		uint64_t n1 = fast_segments(dir, cpus[c], NULL, &one);
		uint64_t n2 = fast_segments(dir, cpus[c], "4K", &two);

		cr_expect_gt(n1, 100, "%s: %llu fast segments", cpus[c], (unsigned long long)n1);
		cr_expect_eq(n2, n1, "%s: %llu segments fast in 4 KiB chunks, %llu in one", cpus[c],
			     (unsigned long long)n2, (unsigned long long)n1);
		cr_expect_gt(strlen(one), 1000, "%s", cpus[c]);
		cr_expect(!strcmp(one, two), "%s: -J 2 prints other branches than -J 1", cpus[c]);
		free(one);
		free(two);
	}
	cleanup(dir);
}

/*
 * The debug count PTCOLLECT_DECODE_THREADS (docs/benchmarks.md): a line for the run and
 * one per worker on stderr, each worker's chunks adding up to what the run cut (4 KiB
 * chunks of a 60,000-instruction walk: many), its chunks' CPU time within its own; the
 * output the same as without it.
 */
Test(decode, jobs_two_accounts_each_threads_time_when_asked)
{
	static char *const threads[] = { "PTCOLLECT_DECODE_THREADS=1", NULL };
	char *dir = walk_dir("/tmp/ptc-acct-XXXXXX", (const char *[]){ "-b", "3000", "-s", "2",
								"-n", "60000", "-p", "30", NULL });
	struct run_result r, plain;
	unsigned long long chunks = 0;
	unsigned workers = 0;
	double wall;

	char *raw = path_in(dir, "prog.bin:0x401000"), *pt = path_in(dir, "trace.pt");

	cr_assert_eq(run_ptcollect(threads, &r, "decode", "-J", "2", "--chunk-size", "4K",
				   "--raw", raw, "--pt", pt, "--branches", NULL), 0);
	cr_assert_eq(run_ptcollect(NULL, &plain, "decode", "-J", "2", "--chunk-size", "4K",
				   "--raw", raw, "--pt", pt, "--branches", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_str_eq(plain.err, "");
	cr_assert(!strcmp(r.out, plain.out), "the count changed the output");
	cr_assert(strstr(r.err, "decode: threads: wall "), "%s", r.err);
	cr_assert_eq(sscanf(strstr(r.err, "decode: threads: wall "), "decode: threads: wall %lf",
			    &wall), 1, "%s", r.err);
	for (const char *l = strstr(r.err, "worker "); l; l = strstr(l + 1, "worker ")) {
		unsigned w;
		double cpu, dcpu, done;
		unsigned long long n;
		const char *at;

		cr_assert_eq(sscanf(l, "worker %u: cpu %lf (chunks %lf in %llu)", &w, &cpu, &dcpu,
				    &n), 4, "%.200s", l);
		cr_expect_eq(w, workers, "%s", r.err);
		cr_expect_leq(dcpu, cpu, "%s", r.err);
		/* When it found no chunk left: after its chunks' CPU time, before the run's end. */
		at = strstr(l, "done at ");
		cr_assert(at && sscanf(at, "done at %lf", &done) == 1, "%.200s", l);
		cr_expect_geq(done, dcpu, "%s", r.err);
		cr_expect_leq(done, wall, "%s", r.err);
		chunks += n;
		workers++;
	}
	cr_expect_eq(workers, 2, "%s", r.err);
	cr_expect_gt(chunks, 10, "%s", r.err);
	run_free(&r);
	run_free(&plain);
	cleanup(dir);
}

/*
 * --calls names every address by its own offset: on the walk trace (calls and returns
 * between 20,000 blocks, more addresses than the decoder keeps names of, so slots are
 * shared and reused), each line's "[unknown] (prog.bin+0xOFF)" is its address less
 * 0x401000, the text's target and the JSON's both ends, at -J 1 and in 16 KiB chunks.
 */
static size_t check_call_names(const char *out, bool json, const char *what)
{
	unsigned long long from, to, fo, tof;
	size_t n = 0;

	for (const char *l = out, *end; *l; l = end + 1) {
		char line[4096];
		const char *p;

		end = strchr(l, '\n');
		cr_assert(end, "%s: a line without its end", what);
		cr_assert_lt((size_t)(end - l), sizeof(line), "%s: %.200s", what, l);
		memcpy(line, l, (size_t)(end - l));
		line[end - l] = '\0';
		if (json) {
			p = strstr(line, "\"from\":");
			if (!p)
				continue;
			cr_assert_eq(sscanf(p, "\"from\":\"0x%llx\",\"from_sym\":\"[unknown] "
					    "(prog.bin+0x%llx)\",\"to\":\"0x%llx\",\"to_sym\":"
					    "\"[unknown] (prog.bin+0x%llx)\"", &from, &fo, &to, &tof), 4,
				     "%s: %s", what, line);
			cr_assert_eq(from - 0x401000, fo, "%s: %s", what, line);
		} else {
			p = strstr(line, "call [unknown] (prog.bin+0x");
			if (p)
				p += 5;
			else if ((p = strstr(line, "ret  to [unknown] (prog.bin+0x")))
				p += 8;
			else
				continue;
			cr_assert_eq(sscanf(p, "[unknown] (prog.bin+0x%llx) (0x%llx) from [unknown] "
					    "(prog.bin+0x%llx)", &tof, &to, &fo), 3, "%s: %s", what,
				     line);
		}
		cr_assert_eq(to - 0x401000, tof, "%s: %s", what, line);
		n++;
	}
	return n;
}

Test(decode, calls_name_every_address_by_its_own_offset)
{
	char *dir = strdup("/tmp/ptc-walk-XXXXXX"), *raw, *pt;
	unsigned long long calls;

	cr_assert(mkdtemp(dir));
	char *argv[] = { own(run_testprog("ptwalk")), "-b", "20000", "-s", "5", "-n", "200000",
			 "-p", "100", dir, NULL };
	struct run_result r;

	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(sscanf(r.out, "instructions %*u branches %*u calls %llu", &calls), 1);
	run_free(&r);
	raw = path_in(dir, "prog.bin:0x401000");
	pt = path_in(dir, "trace.pt");
	for (int m = 0; m < 4; m++) {
		struct args a = { .n = 0 };
		char what[64];
		size_t n;

		args_addv(&a, (const char *[]){ "--raw", raw, "--pt", pt, "--calls", NULL });
		if (m & 1)
			args_add(&a, "--json");
		if (m & 2)
			args_addv(&a, (const char *[]){ "-J", "2", "--chunk-size", "16K", NULL });
		else
			args_addv(&a, (const char *[]){ "-J", "1", NULL });
		snprintf(what, sizeof(what), "--calls%s at -J %d", m & 1 ? " --json" : "",
			 m & 2 ? 2 : 1);
		decode(&a, &r);
		cr_assert_eq(r.status, 0, "%s: %s", what, r.err);
		n = check_call_names(r.out, m & 1, what);
		/* Every call and its return, but those cut by the trace's end. */
		cr_expect_geq(n, calls, "%s: %zu lines, %llu calls", what, n, calls);
		run_free(&r);
	}
	cleanup(dir);
}

static void refused(const char *const *argv, const char *needle)
{
	struct args a = { .n = 0 };
	struct run_result r;

	args_addv(&a, argv);
	decode(&a, &r);
	cr_expect_eq(r.status, 2, "%s: exit %d", argv[0] ? argv[0] : "", r.status);
	cr_expect(strstr(r.err, needle), "'%s' not in: %s", needle, r.err);
	cr_expect_str_empty(r.out);
	run_free(&r);
}

Test(decode, bad_inputs_are_refused_by_name)
{
	char *dir = generate("10", "4", NULL);
	char *pt = path_in(dir, "trace.pt"), *bin = path_in(dir, "prog.bin");
	char *fifo = path_in(dir, "fifo"), *junk = path_in(dir, "junk.pevent");
	FILE *f;

	cr_assert_eq(mkfifo(fifo, 0600), 0);
	f = fopen(junk, "w");
	fputs("this is not perf sideband, not even close", f);
	fclose(f);
	refused((const char *[]){ NULL }, "no trace: give a bundle DIR, or --pt FILE");
	refused((const char *[]){ "--pt", "/nonexistent.pt", NULL }, "--pt: /nonexistent.pt");
	refused((const char *[]){ "--pt", fifo, NULL }, "not a regular file (a FIFO)");
	refused((const char *[]){ "--pt", dir, NULL }, "not a regular file (a directory)");
	refused((const char *[]){ "--pt", pt, "--pt", pt, NULL }, "one trace per run");
	refused((const char *[]){ "--pt", path_in(dir, "trace.pt:0x10-0x5"), NULL },
		"the range ends before it begins");
	refused((const char *[]){ "--pt", path_in(dir, "trace.pt:0x100000"), NULL },
		"--pt: ");
	refused((const char *[]){ "--pt", pt, "--pevent:primary",
				  path_in(dir, "trace.pt:0-0x100000"), NULL },
		"--pevent:primary: ");
	refused((const char *[]){ "--pt", pt, "--raw", path_in(dir, "prog.bin:0x100:0x401000"),
		NULL }, "offset 0x100 is not inside the file");
	refused((const char *[]){ "--pt", pt, "--cpu", "6/x", NULL }, "--cpu '6/x'");
	refused((const char *[]){ "--pt", pt, "--cpu", "-6/1", NULL }, "--cpu '-6/1'");
	refused((const char *[]){ "--pt", pt, "--raw", bin, NULL }, "--raw '");
	refused((const char *[]){ "--pt", pt, "--raw", "nofile:0x1000", NULL }, "--raw: nofile");
	refused((const char *[]){ "--pt", pt, "--elf", bin, NULL }, "--elf: ");
	refused((const char *[]){ "--pt", pt, "--elf", fifo, NULL }, "(a FIFO)");
	refused((const char *[]){ "--pt", pt, "--mtc-freq", "99", NULL }, "--mtc-freq '99'");
	refused((const char *[]){ "--pt", pt, "--nom-freq", "x", NULL }, "--nom-freq 'x'");
	refused((const char *[]){ "--pt", pt, "--cpuid-0x15.eax", "-1", NULL }, "--cpuid-0x15.eax");
	refused((const char *[]){ "--pt", pt, "--pevent:time-mult", "0", NULL }, "must not be 0");
	refused((const char *[]){ "--pt", pt, "--pevent:time-shift", "64", NULL },
		"--pevent:time-shift '64'");
	refused((const char *[]){ "--pt", pt, "--pevent:sysroot", bin, NULL }, "not a directory");
	refused((const char *[]){ "--pt", pt, "--pevent:primary", fifo, NULL }, "(a FIFO)");
	refused((const char *[]){ "--pt", pt, "--pevent:vdso-x64", "/nonexistent", NULL },
		"--pevent:vdso-x64: /nonexistent");
	refused((const char *[]){ "--pt", pt, "--insn", "--calls", NULL }, "give one");
	refused((const char *[]){ "--pt", pt, "-J", "0", NULL }, "--jobs '0'");
	/* -j is --json, as for every command: the old "-j N" is told the new spelling. */
	refused((const char *[]){ "--pt", pt, "-j", "4", NULL },
		"decode: -j 4: -j is --json; the number of threads is --jobs 4 (or -J 4)");
	refused((const char *[]){ "--pt", pt, "-j2", NULL }, "the number of threads is --jobs 2");
	refused((const char *[]){ "--pt", pt, "--chunk-size", "lots", NULL },
		"--chunk-size 'lots'");
	refused((const char *[]){ "--pt", pt, "--timeline", "/nonexistent/dir/t.json", NULL },
		"--timeline '/nonexistent/dir/t.json'");
	/* ptxed's --filter:* options. */
	refused((const char *[]){ "--pt", pt, "--filter:addr0_cfg", "3", NULL },
		"--filter:addr0_cfg '3': give 0 (the range is off), 1 (trace only in it) or 2");
	refused((const char *[]){ "--pt", pt, "--filter:addr3_cfg", "one", NULL },
		"--filter:addr3_cfg 'one'");
	refused((const char *[]){ "--pt", pt, "--filter:addr1_a", "0x1g", NULL },
		"--filter:addr1_a '0x1g': not a number");
	refused((const char *[]){ "--pt", pt, "--filter:addr2_b", "-1", NULL },
		"--filter:addr2_b '-1': not a number");
	refused((const char *[]){ "--pt", pt, "--filter:addr0_cfg", NULL }, "needs a value");
	refused((const char *[]){ "--pt", pt, "--event:tick=1", NULL },
		"option '--event:tick' takes no value");
	refused((const char *[]){ dir, "--filter:addr0_cfg", "1", NULL },
		"--filter:addr0_cfg: ");
#if LIBIPT_VERSION < 0x202
	/* Built with an older libipt (LIBIPT=system, Debian 12's 2.0.5). */
	refused((const char *[]){ "--pt", pt, "--resync-on-error", NULL },
		"--resync-on-error: needs libipt 2.2 or newer");
#endif
	refused((const char *[]){ "--pt", pt, "--frob", NULL }, "unknown option '--frob'");
	refused((const char *[]){ "--pt", pt, "--elf", NULL }, "needs a value");
	refused((const char *[]){ "--pt", pt, "--insn=3", NULL }, "option '--insn' takes no value");
	refused((const char *[]){ "--pt", pt, "bundle-dir", NULL },
		"a bundle DIR or --pt FILE, not both");
	/* Sideband that is not sideband: decoding goes on, the file and offset are named. */
	{
		struct args a = { .n = 0 };
		struct run_result r;

		args_add(&a, "--raw");
		args_add(&a, path_in(dir, "prog.bin:0x401000"));
		args_addv(&a, (const char *[]){ "--pevent:primary", junk, "--pt", pt, NULL });
		decode(&a, &r);
		cr_expect_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.err, "junk.pevent: offset 0x0: "), "%s", r.err);
		cr_expect(strstr(r.out, "0000000000401000 e8"), "%s", r.out);
		run_free(&r);
	}
	cleanup(dir);
}

/*
 * The decode half of libipt's own suite (tests/libipt/decode): every .ptt that expects ptxed
 * output, decoded by ptcollect and held against the .exp; the listed exceptions aside.
 * Bounded by the suite's watchdog (suitewatch.h).
 */
Test(decode, libipt_suite_decode_half_passes)
{
	char *pttc = own(run_oracle("pttc")), *ptts = shared("libipt-tests");
	char *runner = own(run_srcpath("tests/libipt/decode"));
	char env1[4200], env2[4200], env3[4200];
	char *env[] = { env1, env2, env3, NULL };
	struct run_result r;
	const char *last;

#if LIBIPT_VERSION < 0x202
	cr_skip_test("built with libipt %d.%d: the suite's expectations are libipt 2.2's (Event "
		     "Trace, TRIG, resync)", LIBIPT_VERSION_MAJOR, LIBIPT_VERSION_MINOR);
#endif
	if (system("command -v yasm >/dev/null 2>&1")) {
		cr_assert(!getenv("PTCOLLECT_REQUIRE_SHARED") ||
			  strcmp(getenv("PTCOLLECT_REQUIRE_SHARED"), "1"),
			  "pttc needs yasm: apt-get install yasm (scripts/deps.sh)");
		cr_skip_test("pttc needs yasm: apt-get install yasm");
	}
	snprintf(env1, sizeof(env1), "PTCOLLECT=%s", run_bin());
	snprintf(env2, sizeof(env2), "ORACLE=%.*s", (int)(strlen(pttc) - strlen("/pttc")), pttc);
	snprintf(env3, sizeof(env3), "PTT_DIR=%s", ptts);
	cr_assert_eq(run_argv((char *[]){ runner, NULL }, env, &r), 0);
	last = strstr(r.out, "libipt decode: ");
	cr_assert(last, "%s\n%s", r.out, r.err);
	cr_expect_eq(r.status, 0, "%s\n%s", r.out, r.err);
	cr_expect(strstr(last, " 0 failed"), "%s", last);
	/* 440 runs: 242 files, one run per `; cpu` line; most pass. */
	cr_expect(atoi(last + strlen("libipt decode: ")) >= 400, "%s", last);
	run_free(&r);
}

/* pttc (with yasm) makes NAME.pt and NAME.bin of @ptt in a new folder, returned. */
static char *pttc_make(const char *name, const char *ptt)
{
	char *pttc = own(run_oracle("pttc")), *dir = strdup("/tmp/ptc-decode-pttc.XXXXXX");
	char *path;
	struct run_result r;
	FILE *f;

	if (system("command -v yasm >/dev/null 2>&1"))
		cr_skip_test("pttc needs yasm: apt-get install yasm");
	cr_assert(dir && mkdtemp(dir));
	path = path_in(dir, name);
	f = fopen(path, "w");
	cr_assert(f);
	fputs(ptt, f);
	fclose(f);
	cr_assert_eq(run_argv((char *[]){ "sh", "-c", "cd \"$1\" && \"$2\" \"$3\"", "sh", dir, pttc,
				(char *)name, NULL }, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "pttc: %s", r.err);
	run_free(&r);
	return dir;
}

/*
 * An interrupt, its iretq, a syscall and its sysretq, then an interrupt out of traced code
 * (no Event Trace): perf's words in --branches, frames in --calls and the timeline.
 */
static const char interrupts_ptt[] =
	"org 0x100000\n"
	"bits 64\n"
	"; @pt p0: psb()\n"
	"; @pt p1: fup(3: %l0)\n"
	"; @pt p2: mode.exec(64bit)\n"
	"; @pt p3: psbend()\n"
	"; @pt p4: fup(1: %l1)\n"	/* the interrupt, before l1 */
	"; @pt p5: tip(3: %l5)\n"
	"; @pt p6: tip(3: %l1)\n"	/* its iretq */
	"; @pt p7: tip(3: %l6)\n"	/* the syscall */
	"; @pt p8: tip(3: %l3)\n"	/* its sysretq */
	"; @pt p9: fup(1: %l4)\n"	/* an interrupt out of traced code */
	"; @pt p10: tip.pgd(0: %l4)\n"
	"l0: nop\n"
	"l1: nop\n"
	"l2: syscall\n"
	"l3: nop\n"
	"l4: hlt\n"
	"l5: db 0x48, 0xcf\n"		/* iretq */
	"l6: db 0x48, 0x0f, 0x07\n";	/* sysretq */

Test(decode, interrupts_are_branches_frames_and_timeline_slices)
{
	char *dir = pttc_make("intr.ptt", interrupts_ptt);
	char *pt = path_in(dir, "intr.pt"), *raw = path_in(dir, "intr.bin:0x100000");
	char *tl = path_in(dir, "t.json");
	struct args a = { .n = 0 };
	struct run_result r;
	json_t *doc, *evs;
	const char *want_b[] = { "hw int", "iret", "syscall", "sysret", "tr end async" };
	size_t i, n = 0, slices = 0;
	const char *l;

	args_addv(&a, (const char *[]){ "--pt", pt, "--raw", raw, "--branches", "--json", NULL });
	decode(&a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (l = r.out; *l; l = strchr(l, '\n') + 1, n++) {
		json_t *o = json_loadb(l, (size_t)(strchr(l, '\n') - l), 0, NULL);

		cr_assert(o && n < 5, "%s", r.out);
		cr_expect_str_eq(json_string_value(json_object_get(o, "type")), want_b[n], "%s",
				 r.out);
		json_decref(o);
	}
	cr_expect_eq(n, 5, "%s", r.out);
	cr_expect(strstr(r.out, "{\"from\":\"0x100001\",\"to\":\"0x100006\",\"type\":\"hw int\"}"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "{\"from\":\"0x100008\",\"to\":\"0x100004\",\"type\":\"sysret\"}"),
		  "%s", r.out);
	run_free(&r);

	a.n = 0;
	args_addv(&a, (const char *[]){ "--pt", pt, "--raw", raw, "--calls", NULL });
	decode(&a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_str_eq(r.out,
		"[interrupt]\n"
		"interrupt [unknown] (intr.bin+0x6) (0x100006) from [unknown] (intr.bin+0x1)\n"
		"iret to [unknown] (intr.bin+0x1) (0x100001) from [unknown] (intr.bin+0x6)\n"
		"[disabled]\n", "%s", r.out);
	run_free(&r);

	a.n = 0;
	args_addv(&a, (const char *[]){ "--pt", pt, "--raw", raw, "--timeline", tl, NULL });
	decode(&a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	doc = json_load_file(tl, 0, NULL);
	cr_assert(doc);
	evs = json_object_get(doc, "traceEvents");
	for (i = 0; i < json_array_size(evs); i++) {
		json_t *ev = json_array_get(evs, i);
		const char *ph = json_string_value(json_object_get(ev, "ph"));
		const char *name = json_string_value(json_object_get(ev, "name"));

		if (strcmp(ph, "B"))
			continue;
		cr_expect_str_eq(json_string_value(json_object_get(ev, "cat")), "interrupt");
		cr_expect_str_eq(name, slices ? "trace off (interrupt, exception or VM exit)" :
				 "interrupt: [unknown] (intr.bin+0x6)");
		slices++;
	}
	cr_expect_eq(slices, 2);
	json_decref(doc);
	cleanup(dir);
}

/* Event Trace (libipt 2.1 and newer): what each transfer is, from libipt's own test. */
Test(decode, event_trace_says_what_interrupts_and_vm_exits_are)
{
#if LIBIPT_VERSION >= 0x202
	static const char *const names[] = { "ptet-int-iret", "ptet-vmexit-vmentry" };
	static const char *const want[][2] = {
		{ "{\"from\":\"0x100001\",\"to\":\"0x100008\",\"type\":\"hw int\"}",
		  "{\"from\":\"0x100004\",\"to\":\"0x10000a\",\"type\":\"int\"}" },
		{ "{\"from\":\"0x100001\",\"to\":\"0x100008\",\"type\":\"vmexit\"}",
		  "{\"from\":\"0x100008\",\"to\":\"0x100001\",\"type\":\"vmentry\"}" },
	};
	static const char *const calls[] = {
		"[interrupt 14, cr2: 0000000000f00baa]\n"
		"[interrupt]\n"
		"interrupt [unknown] (ptet-int-iret.bin+0x8) (0x100008) from [unknown] (ptet-int-iret.bin+0x1)\n"
		"  [iret]\n"
		"iret to [unknown] (ptet-int-iret.bin+0x1) (0x100001) from [unknown] (ptet-int-iret.bin+0x8)\n"
		"[swintr 128]\n"
		"[interrupt]\n"
		"int [unknown] (ptet-int-iret.bin+0xa) (0x10000a) from [unknown] (ptet-int-iret.bin+0x4)\n"
		"  [iret]\n"
		"iret to [unknown] (ptet-int-iret.bin+0x6) (0x100006) from [unknown] (ptet-int-iret.bin+0xa)\n"
		"[disabled]\n",
		"[vmexit, intr: 14, vmxr: 0000000000000000, vmxq: 0000000000f00baa]\n"
		"[interrupt]\n"
		"[paging, cr3: 0000000000000f00]\n"
		"vmexit [unknown] (ptet-vmexit-vmentry.bin+0x8) (0x100008) from [unknown] (ptet-vmexit-vmentry.bin+0x1)\n"
		"  [vmentry]\n"
		"  [paging, cr3: 0000000000000b00, nr]\n"
		"vmentry to [unknown] (ptet-vmexit-vmentry.bin+0x1) (0x100001) from "
		"[unknown] (ptet-vmexit-vmentry.bin+0x8)\n",
	};

	for (size_t k = 0; k < 2; k++) {
		char *src = shared("libipt-tests"), file[4200], *text, *dir, *pt, *raw;
		struct args a = { .n = 0 };
		struct run_result r;

		snprintf(file, sizeof(file), "%s/%s.ptt", src, names[k]);
		text = own(slurp(file));
		snprintf(file, sizeof(file), "%s.ptt", names[k]);
		dir = pttc_make(file, text);
		snprintf(file, sizeof(file), "%s.pt", names[k]);
		pt = path_in(dir, file);
		snprintf(file, sizeof(file), "%s.bin:0x100000", names[k]);
		raw = path_in(dir, file);
		args_addv(&a, (const char *[]){ "--pt", pt, "--raw", raw, "--branches", "--json", NULL });
		decode(&a, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.out, want[k][0]), "%s", r.out);
		cr_expect(strstr(r.out, want[k][1]), "%s", r.out);
		run_free(&r);
		a.n = 0;
		args_addv(&a, (const char *[]){ "--pt", pt, "--raw", raw, "--calls", NULL });
		decode(&a, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_expect(!strncmp(r.out, calls[k], strlen(calls[k])), "%s", r.out);
		run_free(&r);
		a.n = 0;
		args_addv(&a, (const char *[]){ "--pt", pt, "--raw", raw, "--insn", "--json", NULL });
		decode(&a, &r);
		cr_assert_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.out, k ? "{\"event\":\"vmexit\",\"text\":\"vmexit, intr: 14, "
				 "vmxr: 0000000000000000, vmxq: 0000000000f00baa\",\"vector\":14,"
				 "\"vmxr\":\"0x0\",\"vmxq\":\"0xf00baa\",\"ip\":\"0x100001\"}" :
				 "{\"event\":\"interrupt\",\"text\":\"interrupt 14, cr2: "
				 "0000000000f00baa\",\"vector\":14,\"cr2\":\"0xf00baa\""), "%s", r.out);
		cr_expect(strstr(r.out, "{\"event\":\"async_branch\",\"text\":\"interrupt\","
				 "\"from\":\"0x100001\",\"to\":\"0x100008\"}"), "%s", r.out);
		run_free(&r);
		cleanup(dir);
	}
#else
	cr_skip_test("libipt %d.%d has no Event Trace events", LIBIPT_VERSION_MAJOR,
		     LIBIPT_VERSION_MINOR);
#endif
}

Test(decode, help_names_every_mode)
{
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "help", "decode", NULL), 0);
	cr_expect_eq(r.status, 0);
	for (const char *const *o = (const char *const[]){ "--insn", "--branches", "--calls",
		"--stats", "--timeline", "--json", "--pevent:primary", "--elf", "--raw", "--jobs",
		NULL }; *o; o++)
		cr_expect(strstr(r.out, *o), "%s missing from help", *o);
	run_free(&r);
}

/*
 * A loop that needs no trace would run for ever: an error, then the next PSB. libipt 2.1
 * and later recurse once per lap of it (up to 65535 frames: src/decode/decode.c,
 * DECODE_CHUNK_STACK), which overflowed a thread's default stack: every shape of such a loop.
 */
static void loop_is_an_error(const uint8_t *code, size_t len, const char *what)
{
	char dir[] = "/tmp/ptc-decode-XXXXXX", *bin, *pt, *raw;
	uint8_t buf[256];
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet p[] = {
		{ .type = ppt_psb }, { .type = ppt_mode }, { .type = ppt_psbend },
		{ .type = ppt_tip_pge }, { .type = ppt_tnt_8 },
	};
	struct args a = { .n = 0 };
	struct run_result r;
	uint64_t off = 0;
	FILE *f;

	cr_assert(mkdtemp(dir));
	bin = path_in(dir, "loop.bin");
	pt = path_in(dir, "loop.pt");
	f = fopen(bin, "w");
	cr_assert(f && fwrite(code, 1, len, f) == len && !fclose(f));
	p[1].payload.mode.leaf = pt_mol_exec;
	p[1].payload.mode.bits.exec.csl = 1;
	p[3].payload.ip.ipc = pt_ipc_sext_48;
	p[3].payload.ip.ip = 0x401000;
	/* A branch the loop never asks for: the trace does not end where it starts. */
	p[4].payload.tnt.bit_size = 1;
	p[4].payload.tnt.payload = 1;
	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	enc = pt_alloc_encoder(&cfg);
	cr_assert(enc);
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		cr_assert_gt(pt_enc_next(enc, &p[i]), 0);
	pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	f = fopen(pt, "w");
	cr_assert(f && fwrite(buf, 1, off, f) == off && !fclose(f));
	raw = path_in(dir, "loop.bin:0x401000");
	args_addv(&a, (const char *[]){ "--raw", raw, "--pt", pt, "--stats", NULL });
	decode(&a, &r);
	cr_expect_eq(r.status, 2, "%s: %s", what, r.err);
	cr_expect(strstr(r.err, "instructions without reading trace"), "%s: %s", what, r.err);
	/* The block decoder stops where the instruction decoder stopped, at the same count. */
	{
		struct args full = { .n = 0 };
		char *env[] = { "PTCOLLECT_DECODE_INSN_PATH=1", NULL };
		struct run_result o;

		args_add(&full, run_bin());
		args_add(&full, "decode");
		for (int i = 0; i < a.n; i++)
			args_add(&full, a.v[i]);
		cr_assert_eq(run_argv(full.v, env, &o), 0);
		cr_expect_eq(o.status, r.status, "%s", what);
		cr_expect_str_eq(o.err, r.err, "%s", what);
		cr_expect_str_eq(o.out, r.out, "%s", what);
		run_free(&o);
	}
	run_free(&r);
	cleanup(strdup(dir));
}

Test(decode, a_jump_to_itself_is_an_error_not_a_hang)
{
	static const uint8_t jmp_self[] = { 0xeb, 0xfe };

	loop_is_an_error(jmp_self, sizeof(jmp_self), "jmp .");
}

Test(decode, every_loop_without_trace_is_an_error_not_a_crash)
{
	static const uint8_t call_self[] = { 0xe8, 0xfb, 0xff, 0xff, 0xff };
	static const uint8_t nop_jmp[] = { 0x90, 0xeb, 0xfd };
	static const uint8_t two_jmps[] = { 0xeb, 0x00, 0xeb, 0xfc };
	uint8_t chain[2 + 2 * 60];

	loop_is_an_error(call_self, sizeof(call_self), "call .");
	loop_is_an_error(nop_jmp, sizeof(nop_jmp), "nop; jmp back");
	loop_is_an_error(two_jmps, sizeof(two_jmps), "jmp forward; jmp back");
	/* A jump to the end, then 60 jumps each back to the one before. */
	chain[0] = 0xeb;
	chain[1] = 2 * 60 - 2;
	for (size_t k = 1; k <= 60; k++) {
		chain[2 * k] = 0xeb;
		chain[2 * k + 1] = 0xfc;
	}
	loop_is_an_error(chain, sizeof(chain), "a chain of jumps back");
}

/*
 * Event Trace's CFE and TRIG decoded by a libipt that does not know them (2.0.5, a build
 * with LIBIPT=system): the error names the packet and what decodes it.
 */
Test(decode, a_packet_this_libipt_cannot_decode_is_named)
{
	static const uint8_t nops[16] = {
		0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
		0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	};
	static const struct { uint8_t raw[4]; size_t len; const char *name, *what, *since; } pkt[] = {
		{ { 0x02, 0x13, 0x01, 0x0e }, 4, "CFE", "Event Trace", "2.1" },
		{ { 0xd9, 0x00, 0x1a }, 3, "TRIG", "TRIG", "2.2" },
	};
	struct pt_version v = pt_library_version();
	unsigned have = (unsigned)v.major << 8 | v.minor;

	if (have > (LIBIPT_VERSION_MAJOR << 8 | LIBIPT_VERSION_MINOR))
		have = LIBIPT_VERSION_MAJOR << 8 | LIBIPT_VERSION_MINOR;
	for (size_t k = 0; k < sizeof(pkt) / sizeof(pkt[0]); k++) {
		char dir[] = "/tmp/ptc-decode-XXXXXX", *bin, *pt, want[200];
		uint8_t buf[256];
		struct pt_config cfg;
		struct pt_encoder *enc;
		struct pt_packet p[] = {
			{ .type = ppt_psb }, { .type = ppt_mode }, { .type = ppt_psbend },
			{ .type = ppt_tip_pge },
		};
		struct args a = { .n = 0 };
		struct run_result r;
		uint64_t off = 0;
		unsigned since = (unsigned)(pkt[k].since[0] - '0') << 8 |
				 (unsigned)(pkt[k].since[2] - '0');
		FILE *f;

		cr_assert(mkdtemp(dir));
		bin = path_in(dir, "nops.bin");
		pt = path_in(dir, "new.pt");
		f = fopen(bin, "w");
		cr_assert(f && fwrite(nops, 1, sizeof(nops), f) == sizeof(nops) && !fclose(f));
		p[1].payload.mode.leaf = pt_mol_exec;
		p[1].payload.mode.bits.exec.csl = 1;
		p[3].payload.ip.ipc = pt_ipc_sext_48;
		p[3].payload.ip.ip = 0x401000;
		pt_config_init(&cfg);
		cfg.begin = buf;
		cfg.end = buf + sizeof(buf);
		enc = pt_alloc_encoder(&cfg);
		cr_assert(enc);
		for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
			cr_assert_gt(pt_enc_next(enc, &p[i]), 0);
		pt_enc_get_offset(enc, &off);
		pt_free_encoder(enc);
		memcpy(buf + off, pkt[k].raw, pkt[k].len);
		f = fopen(pt, "w");
		cr_assert(f && fwrite(buf, 1, off + pkt[k].len, f) == off + pkt[k].len &&
			  !fclose(f));
		args_addv(&a, (const char *[]){ "--raw", path_in(dir, "nops.bin:0x401000"), "--pt", pt,
					   "--insn", NULL });
		decode(&a, &r);
		snprintf(want, sizeof(want), "%s packet: this libipt %u.%u.%u does not decode %s "
			 "packets; ptcollect built with libipt \u2265 %s does", pkt[k].name, v.major,
			 v.minor, v.patch, pkt[k].what, pkt[k].since);
		if (have < since) {
			cr_expect_eq(r.status, 2, "%s", r.err);
			cr_expect(strstr(r.err, want), "%s in %s", want, r.err);
			cr_expect(strstr(r.out, want), "%s in %s", want, r.out);
		} else {
			cr_expect(!strstr(r.err, "does not decode"), "%s", r.err);
		}
		run_free(&r);
		cleanup(strdup(dir));
	}
}

/*
 * A bundle as the recorder writes one: a stream whose sideband maps ptgen's program
 * from a path that exists only under DIR/sysroot, and a stream without trace.
 * @snapshots: in snapshot mode (-S): the streams have no file; snapshots 1 and
 * 2 hold cpu0's trace as windows (snap-N/cpu0.pt), cpu1's windows are empty.
 */
static char *make_bundle_mode(bool snapshots)
{
	char *dir = generate("300", "2", NULL), *sysroot = path_in(dir, "sysroot/gone");
	static const char mapped[] = "/gone/prog.elf";
	uint8_t mmap2[64 + 16] = { 0 }, start[8] = { 0 };
	uint64_t addr = 0x400000, len = 0x2000;
	uint32_t pid[2] = { 4242, 4242 };
	struct manifest m;
	struct mstream *st;
	struct error e = { 0 };
	struct stat sb;
	char cmd[8192];
	FILE *f;
	int fd;

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s/prog.elf' '%s/' && mv '%s/trace.pt' "
		 "'%s/cpu0.pt' && : > '%s/cpu1.pt' && : > '%s/cpu1.pevent'", sysroot, dir, sysroot,
		 dir, dir, dir, dir);
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
	testbundle_describe_cpu(&m, NULL);
	for (int i = 0; i < 2; i++) {
		st = manifest_add_stream(&m);
		cr_assert(st);
		cr_assert_eq(manifest_set(&st->file, i ? "cpu1.pt" : "cpu0.pt"), 0);
		cr_assert_eq(manifest_set(&st->sideband, i ? "cpu1.pevent" : "cpu0.pevent"), 0);
		st->cpu = i;
		st->tid = -1;
		cr_assert_eq(stat(path_in(dir, st->file), &sb), 0);
		st->bytes = (uint64_t)sb.st_size;
	}
	for (int k = 1; snapshots && k <= 2; k++) {
		struct msnapshot *sn = manifest_add_snapshot(&m);

		cr_assert(sn);
		sn->number = (unsigned int)k;
		sn->trigger = -1;
		cr_assert_eq(manifest_set(&sn->cause, "signal"), 0);
		cr_assert(asprintf(&sn->dir, "snap-%d", k) > 0);
		snprintf(cmd, sizeof(cmd), "mkdir '%s/snap-%d' && cp '%s/cpu0.pt' '%s/snap-%d/' && "
			 ": > '%s/snap-%d/cpu1.pt'", dir, k, dir, dir, k, dir, k);
		cr_assert_eq(system(cmd), 0);
		for (int i = 0; i < 2; i++) {
			struct mwindow *w = manifest_add_window(sn);

			cr_assert(w);
			cr_assert(asprintf(&w->file, "snap-%d/cpu%d.pt", k, i) > 0);
			w->cpu = i;
			w->tid = -1;
			w->bytes = i ? 0 : m.streams[0].bytes;
		}
	}
	for (int i = 0; snapshots && i < 2; i++) {
		free(m.streams[i].file);
		m.streams[i].file = NULL;
		m.streams[i].bytes = 0;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(manifest_write(&m, fd, &e), 0, "%s", e.why);
	close(fd);
	manifest_free(&m);
	return dir;
}

static char *make_bundle(void)
{
	return make_bundle_mode(false);
}

/*
 * decode DIR of a snapshot-mode bundle (issue 21): its streams have no file,
 * each snapshot's window is decoded as a trace of its own with its stream's
 * sideband; a window is named as a stream is ("snap-2/cpu0").
 */
Test(decode, a_snapshot_bundle_decodes_each_window)
{
	char *dir = make_bundle_mode(true);
	struct args a = { .n = 0 }, b = { .n = 0 }, c = { .n = 0 };
	struct run_result r, x, all;

	args_addv(&a, (const char *[]){ dir, "snap-2/cpu0", "--calls", NULL });
	decode(&a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	args_addv(&b, (const char *[]){ "--cpu", "6/85/4", "--elf", path_in(dir, "prog.elf"), "--pt",
				   path_in(dir, "cpu0.pt"), "--calls", NULL });
	decode(&b, &x);
	cr_assert_eq(x.status, 0, "%s", x.err);
	cr_expect(strlen(r.out) > 1000);
	cr_expect_str_eq(r.out, x.out);
	/* Every window with bytes: both snapshots' cpu0, each as the whole trace. */
	args_addv(&c, (const char *[]){ dir, "--calls", NULL });
	decode(&c, &all);
	cr_assert_eq(all.status, 0, "%s", all.err);
	cr_expect(strstr(all.out, "snap-1/cpu0.pt") && strstr(all.out, "snap-2/cpu0.pt") &&
		  !strstr(all.out, "cpu1"), "%.2000s", all.out);
	run_free(&r);
	run_free(&x);
	run_free(&all);
	refused((const char *[]){ dir, "cpu0", NULL }, "no stream 'cpu0' in the bundle");
	refused((const char *[]){ dir, "snap-3/cpu0", NULL }, "no stream 'snap-3/cpu0'");
	cleanup(dir);
}

/* decode DIR: the manifest gives what --pt, --cpu and the sideband options would. */
Test(decode, a_bundle_decodes_as_its_files_given_by_hand)
{
	char *dir = make_bundle();
	struct args a = { .n = 0 }, b = { .n = 0 };
	struct run_result r, x;

	args_addv(&a, (const char *[]){ dir, "--calls", "--jobs", "2", NULL });
	decode(&a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	args_addv(&b, (const char *[]){ "--cpu", "6/85/4", "--elf", path_in(dir, "prog.elf"), "--pt",
				   path_in(dir, "cpu0.pt"), "--calls", NULL });
	decode(&b, &x);
	cr_assert_eq(x.status, 0, "%s", x.err);
	cr_expect(strlen(r.out) > 1000);
	/* The empty stream has nothing to decode: only cpu0's lines. */
	cr_expect_str_eq(r.out, x.out);
	run_free(&r);
	run_free(&x);
	refused((const char *[]){ dir, "cpu9", NULL }, "no stream 'cpu9' in the bundle");
	refused((const char *[]){ dir, "--cpu", "6/85/4", NULL }, "--cpu: ");
	refused((const char *[]){ dir, "--pt", path_in(dir, "cpu0.pt"), NULL }, "not both");
	refused((const char *[]){ path_in(dir, "sysroot"), NULL }, "manifest.json");
	refused((const char *[]){ "/nonexistent-bundle", NULL }, "/nonexistent-bundle");
	cleanup(dir);
}

/*
 * The acceptance on real hardware's trace: hase-loopy-skylake's perf.data through
 * import, then decode of the bundle (its program where perf recorded it, in the sysroot):
 * the branches are upstream's list, the timeline is well formed.
 */
Test(decode, imported_hase_bundle_decodes_to_upstreams_branches)
{
	static const char recorded[] = "/home/joerg/git/angr/hase/tests/bin/loopy";
	char *dir = strdup("/tmp/ptc-hase-XXXXXX"), *bundle, *tl, cmd[8192];
	struct args a = { .n = 0 }, b = { .n = 0 };
	struct run_result r;
	size_t calls, gaps;

	cr_assert(mkdtemp(dir));
	own(dir);
	bundle = path_in(dir, "bundle");
	tl = path_in(dir, "t.json");
	cr_assert_eq(run_ptcollect(NULL, &r, "import", shared("traces/hase-loopy-skylake/perf.data"),
				   bundle, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/sysroot%s' && cp '%s' '%s/sysroot%s/'", bundle,
		 recorded, shared("traces/hase-loopy-skylake/loopy"), bundle, recorded);
	cr_assert_eq(system(cmd), 0);
	args_addv(&a, (const char *[]){ bundle, "--branches", "--timeline", tl, NULL });
	decode(&a, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	expect_upstream_branches(r.out);
	run_free(&r);
	check_timeline(tl, &calls, &gaps);
	args_addv(&b, (const char *[]){ bundle, "cpu2", "--stats", NULL });
	decode(&b, &r);
	cr_expect(strstr(r.out, "decode errors: 0"), "%s", r.out);
	run_free(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

/* Overwrite the first @old in @path with @new (as long). */
static void patch_file(const char *path, const char *old, const char *new)
{
	static char buf[1 << 16];
	size_t n = strlen(old), len;
	FILE *f = fopen(path, "r+");
	char *at;

	cr_assert(f, "%s: %s", path, strerror(errno));
	len = fread(buf, 1, sizeof(buf), f);
	at = memmem(buf, len, old, n);
	cr_assert(at, "%s: no %s", path, old);
	cr_assert_eq(strlen(new), n);
	cr_assert_eq(fseek(f, at - buf, SEEK_SET), 0);
	cr_assert_eq(fwrite(new, 1, n, f), n);
	cr_assert_eq(fclose(f), 0);
}

/*
 * Issue 22 item 8: a symbol name from an ELF file holds an escape sequence and a newline.
 * decode --calls shows them escaped, as symbols does (printable.h): no byte of them reaches
 * the terminal, and no line of the tree is forged; --json has them as JSON escapes.
 */
Test(decode, item8_calls_escape_symbol_names_as_symbols_does)
{
	char *dir = generate("1", "4", NULL), *elf = path_in(dir, "prog.elf"), *out;
	const char *text[] = { "--calls", NULL }, *json[] = { "--calls", "--json", NULL };
	struct run_result r;
	int st;

	/* ptgen's .strtab: "\0_start\0f\0g\0" */
	patch_file(elf, "_start", "\x1b[31m\n");
	out = decode_out(dir, text, &st);
	cr_expect_null(strchr(out, '\x1b'), "%s", out);
	cr_expect(strstr(out, "call f+0x0 (0x401010) from \\x1b[31m\\n+0x0\n"), "%s", out);
	free(out);
	out = decode_out(dir, json, &st);
	cr_expect(strstr(out, "\"from_sym\":\"\\u001B[31m\\n+0x0\""), "%s", out);
	free(out);
	cr_assert_eq(run_ptcollect(NULL, &r, "symbols", elf, NULL), 0);
	cr_expect_null(strchr(r.out, '\x1b'), "%s", r.out);
	cr_expect(strstr(r.out, "\\x1b[31m\\n"), "%s", r.out);
	run_free(&r);
	cleanup(dir);
}

/*
 * The block decoder (every mode that prints no instructions) prints what the instruction
 * decoder printed before it, byte for byte, in every mode, on the real traces, libipt's
 * suite and ptgen traces cut into many chunks (-J 1 and -J 4): tests/decode-paths.sh, which
 * lists the malformed traces where libipt's two decoders part ways (docs/testing.md).
 */
Test(decode, block_path_prints_what_the_insn_path_printed)
{
	char *dir = temp_dir("ptc-decode-paths");
	char *argv[] = { own(run_srcpath("tests/decode-paths.sh")), (char *)run_bin(),
			 shared("."), own(run_testprog("ptgen")), dir,
			 own(run_testprog("ptwalk")), NULL };
	struct run_result r;

	/*
	 * Some 4000 decodes: 20 min were not enough with two suites at once (load 36). Bound by
	 * their progress: 300 s in which no decode ends and the script uses no CPU.
	 */
	suitewatch_awaiting("tests/decode-paths.sh to end (no decode ended for 300 s)");
	cr_assert_eq(run_argv_busy(argv, NULL, &r, 300), 0);
	suitewatch_awaiting(NULL);
	cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
	run_free(&r);
	temp_dir_remove(dir);
}

/*
 * decode DIR gives libipt the recording's address filters (the manifest's kernel string)
 * as ADDRn_CFG and ADDRn_A/B: libipt needs them for erratum SKL014, a TIP.PGD without its
 * IP after a direct jump out of a FilterEn range (libipt's skl014-jmp-jmp.ptt, on a
 * Skylake, 6/94). With them the disable binds to the second jump; without them libipt
 * decodes on past it into code that is not there (was: never passed, a decode error). A
 * filter on a file is at other addresses in each process: then none is passed.
 */
static const char skl014_ptt[] =
	"org 0xffffffff81000000\n"
	"bits 64\n"
	"; @pt p0: psb()\n"
	"; @pt p1: mode.exec(64bit)\n"
	"; @pt p2: fup(3: %l0)\n"
	"; @pt p3: psbend()\n"
	"l0: jmp l2\n"
	"l1: hlt\n"
	"l2: jmp l4\n"
	"l3: hlt\n"
	"; @pt p4: tip.pgd(0: %l4)\n"
	"ALIGN 0x100\n"
	"l4: hlt\n";

static void skl014_bundle(const char *dir, const char *src, const char *filter)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char cmd[8600];
	struct manifest m;

	testbundle_describe(&m, &pc);
	cr_assert_eq(manifest_set(&m.filter, filter), 0);
	m.attr.exclude_kernel = false;
	testbundle_write_manifest(dir, &m, true);
	/* The trace in cpu0.pt (shorter than the manifest says: decode reads what is there). */
	snprintf(cmd, sizeof(cmd), "cp '%s/skl.pt' '%s/cpu0.pt'", src, dir);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(decode, a_bundles_address_filters_reach_libipt_for_its_skl014_workaround)
{
	char *src = pttc_make("skl.ptt", skl014_ptt);
	char *raw = path_in(src, "skl.bin:0xffffffff81000000");
	static const struct {
		const char *filter;
		bool passed;
		const char *ptxed;
	} cases[] = {
		{ "filter 0xffffffff81000000/0x100", true, " --filter:addr0_cfg 1 --filter:addr0_a "
		  "0xffffffff81000000 --filter:addr0_b 0xffffffff810000ff " },
		{ "stop 0xffffffff81000100/0x100,filter 0xffffffff81000000/0x100", true,
		  " --filter:addr0_cfg 2 --filter:addr0_a 0xffffffff81000100 --filter:addr0_b "
		  "0xffffffff810001ff --filter:addr1_cfg 1 --filter:addr1_a 0xffffffff81000000 "
		  "--filter:addr1_b 0xffffffff810000ff " },
		{ "filter 0x1000/0x100@/bin/true", false, NULL },
		{ "filter 0xffffffff81000000/0x100,filter 0x0/0x100@/bin/true", false, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *dir = testbundle_dir();
		struct args a = { .n = 0 };
		struct run_result r;
		const char *l;
		json_t *line;

		skl014_bundle(dir, src, cases[i].filter);
		args_addv(&a, (const char *[]){ dir, "cpu0.pt", "--raw", raw, NULL });
		decode(&a, &r);
		if (cases[i].passed) {
			cr_expect_eq(r.status, 0, "%s: exit %d: %s", cases[i].filter, r.status, r.err);
			cr_expect(strstr(r.out, "jmp 0xffffffff81000100\n[disabled]\n"), "%s: %s",
				  cases[i].filter, r.out);
			cr_expect(!strstr(r.out, "hlt"), "%s: %s", cases[i].filter, r.out);
		} else {
			cr_expect(strstr(r.out, "jmp 0xffffffff81000100\n") &&
				  !strstr(r.out, "[disabled]"),
				  "%s: %s", cases[i].filter, r.out);
		}
		run_free(&r);
		/* info's ptxed line gives ptxed the same ranges. */
		cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", dir, NULL), 0);
		line = json_loads(r.out, 0, NULL);
		l = json_string_value(json_object_get(json_array_get(json_object_get(line,
					"streams"), 0), "ptxed"));
		cr_assert(l, "%s", r.out);
		if (cases[i].passed)
			cr_expect(strstr(l, cases[i].ptxed), "%s: %s", cases[i].filter, l);
		else
			cr_expect(!strstr(l, "--filter:"), "%s: %s", cases[i].filter, l);
		json_decref(line);
		run_free(&r);
		testbundle_remove(dir);
		free(dir);
	}
	cleanup(src);
}

/*
 * The caches' stats document of `decode ARGS --stats --json` (after the mode's records):
 * caches.NAME's bound (entries, bytes) and use, checked against each other.
 */
static json_t *caches_of(const char *raw, const char *pt, const char *mode)
{
	struct run_result r;
	const char *doc;
	json_t *j, *c;

	static char *const count[] = { "PTCOLLECT_DECODE_FAST_COUNT=1", NULL };

	cr_assert_eq(run_ptcollect(count, &r, "decode", "-J", "1", "--raw", raw, "--pt", pt, mode,
				   "--stats", "--json", NULL), 0);
	cr_assert_eq(r.status, 0, "%s %s", mode, r.err);
	doc = strstr(r.out, "{\n  \"streams\"");
	cr_assert(doc, "%s: no stats document", mode);
	j = json_loads(doc, 0, NULL);
	cr_assert(j, "%s: %s", mode, doc);
	c = json_incref(json_object_get(j, "caches"));
	cr_assert(c, "%s: no caches: %s", mode, doc);
	json_decref(j);
	run_free(&r);
	return c;
}

static json_int_t cache_field(json_t *caches, const char *name, const char *field)
{
	json_t *v = json_object_get(json_object_get(caches, name), field);

	cr_assert(json_is_integer(v), "caches.%s.%s is not a number", name, field);
	return json_integer_value(v);
}

/*
 * decode --stats prints each cache's bound (entries, bytes: the same for any trace), and
 * with the debug count the entries a run used, up to the bound: the fast path's blocks in every mode it takes,
 * the names with --calls, the instruction text with --insn; the text output says them too.
 */
Test(decode, stats_print_each_caches_bound_and_use)
{
	static const char *const names[] = { "blocks", "names", "shapes", "insn_text",
					     "insn_blocks" };
	static char *const count[] = { "PTCOLLECT_DECODE_FAST_COUNT=1", NULL };
	const char *lines;
	char *dir = walk_dir("/tmp/ptc-caches-XXXXXX", (const char *[]){ "-b", "2000", "-s", "1",
								  "-n", "20000", "-p", "100",
								  NULL }), *raw, *pt;
	json_t *st, *calls, *insn;
	struct run_result r;
	raw = path_in(dir, "prog.bin:0x401000");
	pt = path_in(dir, "trace.pt");
	st = caches_of(raw, pt, "--branches");
	calls = caches_of(raw, pt, "--calls");
	insn = caches_of(raw, pt, "--insn");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		json_int_t n = cache_field(st, names[i], "entries");
		json_int_t b = cache_field(st, names[i], "bytes");

		cr_expect_gt(n, 1000, "caches.%s.entries", names[i]);
		cr_expect_geq(b, n * 16, "caches.%s.bytes: %lld for %lld entries", names[i],
			      (long long)b, (long long)n);
		cr_expect_eq(cache_field(calls, names[i], "entries"), n, "%s", names[i]);
		cr_expect_eq(cache_field(insn, names[i], "bytes"), b, "%s", names[i]);
		cr_expect_leq(cache_field(st, names[i], "used"), n, "%s", names[i]);
		cr_expect_leq(cache_field(calls, names[i], "used"), n, "%s", names[i]);
		cr_expect_leq(cache_field(insn, names[i], "used"), n, "%s", names[i]);
	}
	cr_expect_gt(cache_field(st, "blocks", "used"), 100);
	cr_expect_eq(cache_field(st, "names", "used"), 0, "--branches names nothing");
	cr_expect_eq(cache_field(st, "insn_text", "used"), 0, "--branches prints no text");
	cr_expect_gt(cache_field(calls, "names", "used"), 100);
	cr_expect_gt(cache_field(insn, "insn_text", "used"), 100);
	cr_expect_eq(cache_field(insn, "names", "used"), 0, "--insn names nothing");
	json_decref(st);
	json_decref(calls);
	json_decref(insn);
	cr_assert_eq(run_ptcollect(NULL, &r, "decode", "--raw", raw, "--pt", pt, "--stats", NULL),
		     0);
	cr_expect(strstr(r.out, "\ncaches (each decoder thread's, bounded whatever the trace):\n"
			 "  fast path blocks:\n    bound, entries: 32768\n"), "%s", r.out);
	run_free(&r);
	/* --insn's text takes the fast path (not with --json): its block lines are used. */
	cr_assert_eq(run_ptcollect(count, &r, "decode", "--raw", raw, "--pt", pt, "--insn",
				   "--stats", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	lines = strstr(r.out, "\n  block lines (--insn):\n    bound, entries: 65536\n"
			"    bound, bytes: 9437184\n    entries used: ");
	cr_assert(lines, "%s", r.out);
	cr_expect_gt(strtoul(strrchr(lines, ':') + 1, NULL, 10), 100, "%s", lines);
	run_free(&r);
	cleanup(dir);
}

/* The "cuts N (unread U), planning read B bytes" of PTCOLLECT_DECODE_THREADS's count. */
static void plan_count(const char *dir, unsigned long long *cuts, unsigned long long *unread,
		       unsigned long long *bytes)
{
	static char *const threads[] = { "PTCOLLECT_DECODE_THREADS=1", NULL };
	char *elf = path_in(dir, "prog.elf"), *pt = path_in(dir, "trace.pt");
	struct run_result r, one;
	const char *at;

	cr_assert_eq(run_ptcollect(threads, &r, "decode", "-J", "4", "--chunk-size", "16K",
				   "--elf", elf, "--pt", pt, "--branches", NULL), 0);
	cr_assert_eq(run_ptcollect(NULL, &one, "decode", "-J", "1", "--elf", elf, "--pt", pt,
				   "--branches", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(one.status, 0, "%s", one.err);
	cr_assert(!strcmp(r.out, one.out), "-J 4 prints other branches than -J 1");
	at = strstr(r.err, ", cuts ");
	cr_assert(at && sscanf(at, ", cuts %llu (unread %llu), planning read %llu bytes", cuts,
			       unread, bytes) == 3, "%s", r.err);
	run_free(&r);
	run_free(&one);
}

/*
 * Planning reads 8 KiB at a cut first (find_psb(), psb_state()), 64 KiB only when the
 * PSB is further or its PSB+ longer: on ptgen's trace (PSBs a few hundred bytes apart)
 * a cut reads little, and where each PSB+ holds 9,000 bytes of PAD every cut still
 * knows what its PSB+ says, and -J 4 prints what -J 1 prints.
 */
Test(decode, planning_reads_little_at_a_cut_and_more_for_a_long_psb_plus)
{
	static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };
	char *dir = generate("200000", "3", NULL), *path = path_in(dir, "trace.pt"), *buf;
	unsigned long long cuts, unread, bytes, n = 0;
	size_t len, i = 0;
	FILE *f;

	plan_count(dir, &cuts, &unread, &bytes);
	cr_expect_gt(cuts, 10);
	cr_expect_eq(unread, 0);
	cr_expect_lt(bytes, cuts * (24u << 10), "%llu bytes for %llu cuts", bytes, cuts);

	f = fopen(path, "rb");
	cr_assert(f);
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	fclose(f);
	buf = slurp(path);
	f = fopen(path, "wb");
	cr_assert(f);
	/* PAD after each PSB: inside its PSB+, which is then longer than the first read. */
	while (i < len) {
		const uint8_t *p = memmem(buf + i, len - i, psb, sizeof(psb));
		size_t to = p ? (size_t)((const char *)p - buf) + sizeof(psb) : len;

		cr_assert_eq(fwrite(buf + i, 1, to - i, f), to - i);
		for (int k = 0; p && k < 9000; k++)
			fputc(0, f);
		n += p != NULL;
		i = to;
	}
	cr_assert_eq(fclose(f), 0);
	free(buf);
	cr_assert_gt(n, 100);
	plan_count(dir, &cuts, &unread, &bytes);
	cr_expect_gt(cuts, 10);
	cr_expect_eq(unread, 0, "%llu of %llu cuts unread", unread, cuts);
	cleanup(dir);
}

/*
 * A worker wakes the merge when the chunk it waits for is planned or decoded (decode.c's
 * merge_to_wake()): with no wake, each of the merge's waits ended at its 250 ms tick (for
 * the progress line), and the workers, AHEAD_PER_JOB chunks ahead, waited for it.
 */
Test(decode, jobs_two_wakes_the_merge_for_its_chunk)
{
	static char *const threads[] = { "PTCOLLECT_DECODE_THREADS=1", NULL };
	char *dir = walk_dir("/tmp/ptc-wake-XXXXXX", (const char *[]){ "-b", "3000", "-s", "2",
								"-n", "600000", "-p", "30", NULL });
	unsigned long long n[2];
	double ms[2];
	struct run_result r;
	const char *at;

	cr_assert_eq(run_ptcollect(threads, &r, "decode", "-J", "2", "--chunk-size", "4K",
				   "--raw", path_in(dir, "prog.bin:0x401000"), "--pt",
				   path_in(dir, "trace.pt"), "--stats", NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	at = strstr(r.err, "merge waits planned ");
	cr_assert(at && sscanf(at, "merge waits planned %llu %lf, merge waits decoded %llu %lf",
			       &n[0], &ms[0], &n[1], &ms[1]) == 4, "%s", r.err);
	/*
	 * Each wait a chunk's time at most (4 KiB of trace: well under a millisecond; 0.2 to
	 * 3.5 ms on average with the machine at load 29); without the wakes, 227 ms.
	 */
	if (n[0] + n[1] >= 4)
		cr_expect_lt((ms[0] + ms[1]) / (double)(n[0] + n[1]), 100.0, "%s", r.err);
	run_free(&r);
	cleanup(dir);
}
