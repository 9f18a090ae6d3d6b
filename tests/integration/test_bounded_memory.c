// SPDX-License-Identifier: MIT
/*
 * Memory that does not grow with the input (issue 22, item 5): a 256 MiB
 * sideband file, sparse (a record header every 64 KiB, holes between), is
 * read by decode, dump and archive in bounded memory. The peak resident set
 * of each run is the child's ru_maxrss from wait4(); reading the file whole
 * (or keeping its mapping's pages) takes 256 MiB and more.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "suitewatch.h"
#include "tempfile.h"
#include "testbundle.h"

SUITEWATCH(watchdog, 240)

TestSuite(bounded_memory, .init = watchdog);

#define BIG (256u << 20)
#define BOUND_KB (64u << 10)
/* -J 2's waiting output at most (decode.c's decode_wait_mark(2)), in KiB. */
#define WAIT_AT_KB (16l << 10)

/* The child's exit status when it could not be put on one CPU under SCHED_FIFO. */
#define NO_FIFO 125

/*
 * Run ptcollect with @args (NULL-terminated), its output to @out (NULL: /dev/null); its
 * peak RSS in KiB. @fifo: on one CPU under SCHED_FIFO, where a thread runs until it waits.
 */
static long run_measured_on(const char *const *args, const char *out, int *status, bool fifo)
{
	char *argv[24];
	struct rusage ru;
	int n = 0, st;
	pid_t pid;

	argv[n++] = (char *)run_bin();
	for (int i = 0; args[i]; i++) {
		cr_assert_lt(n, 23);
		argv[n++] = (char *)args[i];
	}
	argv[n] = NULL;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);
		int fd = out ? open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600) : null;
		const char *asan = getenv("ASAN_OPTIONS");
		char opts[512];

		if (fd < 0 || null < 0)
			_exit(126);
		if (fifo) {
			struct sched_param sp = { .sched_priority = 1 };
			cpu_set_t one;
			int cpu = sched_getcpu();

			CPU_ZERO(&one);
			CPU_SET(cpu < 0 ? 0 : cpu, &one);
			if (sched_setaffinity(0, sizeof(one), &one) ||
			    sched_setscheduler(0, SCHED_FIFO, &sp))
				_exit(NO_FIFO);
		}

		/* Under ASan, freed memory waits in a quarantine (256 MB): none here. */
		snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=0", asan ? asan : "",
			 asan && *asan ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);

		dup2(fd, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return ru.ru_maxrss;
}

static long run_measured(const char *const *args, const char *out, int *status)
{
	return run_measured_on(args, out, status, false);
}

/* The same, output to /dev/null. */
static long peak_rss_kb(const char *const *args, int *status)
{
	return run_measured(args, NULL, status);
}

/*
 * The lower of two runs' peaks, output to @out (NULL: /dev/null): a length to compare with
 * another. A run's peak varies on its own, upwards: where the allocations fall between
 * malloc's main arena and a thread's depends on the scheduling, and what is freed in one is
 * not reused by the other (report at one length: 13.4 to 15.5 MB, once 19.6 with a single
 * arena); growth with the trace is in both runs.
 */
static long peak_rss_kb_low(const char *const *args, const char *out, int *status)
{
	int st;
	long a = run_measured(args, out, status), b = run_measured(args, out, &st);

	*status = *status ? *status : st;
	return a < b ? a : b;
}

/*
 * The highest of three runs' peaks, output to /dev/null: what a length can reach. -J 2's
 * waiting output reaches the mark only when both workers run at once while the merge is
 * behind, which a loaded machine may not give a short run at all (21.1 MB at 5.2 M
 * instructions beside 25.7 MB at 20.9 M, the long one at the mark).
 */
static long peak_rss_kb_high(const char *const *args, int *status)
{
	long hi = 0;

	for (int i = 0; i < 3; i++) {
		int st;
		long kb = run_measured(args, NULL, &st);

		*status = i && *status ? *status : st;
		hi = kb > hi ? kb : hi;
	}
	return hi;
}

/* @path becomes @size bytes of records of an unknown type, each 65528 bytes long, sparse. */
static void sparse_sideband(const char *path, size_t size)
{
	struct perf_event_header h = { .type = 80, .size = 65528 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t off;

	cr_assert_geq(fd, 0, "%s", path);
	for (off = 0; off + h.size <= size; off += h.size)
		cr_assert_eq(pwrite(fd, &h, sizeof(h), (off_t)off), (ssize_t)sizeof(h));
	cr_assert_eq(ftruncate(fd, (off_t)off), 0);
	close(fd);
}

Test(bounded_memory, a_256_MiB_sideband_is_read_in_bounded_memory)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *dir = testbundle_dir(), pevent[256];
	const char *decode[] = { "decode", dir, NULL };
	const char *dump[] = { "dump", pevent, NULL };
	const char *archive[] = { "archive", dir, NULL };
	const char *const *runs[] = { decode, dump, archive };
	int status;

	testbundle_write(dir, &pc, true);
	snprintf(pevent, sizeof(pevent), "%s/cpu0.pevent", dir);
	sparse_sideband(pevent, BIG);
	for (int i = 0; i < 3; i++) {
		long kb = peak_rss_kb(runs[i], &status);

		cr_expect_lt(status, 128, "%s: killed (%d)", runs[i][0], status);
		cr_expect_lt(kb, BOUND_KB, "%s of a %u MiB sideband: %ld KiB resident at its peak "
			     "(bound %u KiB)", runs[i][0], BIG >> 20, kb, BOUND_KB);
	}
	testbundle_remove(dir);
	free(dir);
}

/* @pt (a mkstemp template): BIG bytes without a PSB (a sparse file: PAD), then PSB, PSBEND. */
static void pad_then_psb(char *pt)
{
	static const uint8_t psb_psbend[] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					      0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					      0x02, 0x23 };
	int fd = mkstemp(pt);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, psb_psbend, sizeof(psb_psbend), BIG), (ssize_t)sizeof(psb_psbend));
	close(fd);
}

/*
 * A trace of 256 MiB without a PSB (a sparse file: PAD bytes), then one PSB at its
 * end: dump searches the stretch in bounded steps, dropping them, and libipt's search
 * starts just before the PSB; it kept all 256 MiB resident before.
 */
Test(bounded_memory, dump_skips_a_256_MiB_stretch_without_a_psb_in_bounded_memory)
{
	char pt[] = "/tmp/ptc-bigpad-XXXXXX";
	const char *dump[] = { "dump", "--format", "pt", pt, NULL };
	struct run_result r;
	int status;
	long kb;

	pad_then_psb(pt);
	kb = peak_rss_kb(dump, &status);
	cr_expect_eq(status, 0);
	cr_expect_lt(kb, BOUND_KB, "dump of a %u MiB stretch without a PSB: %ld KiB resident at "
		     "its peak (bound %u KiB)", BIG >> 20, kb, BOUND_KB);
	/* The same PSB found as libipt's search alone finds it. */
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--format", "pt", pt, NULL), 0);
	cr_expect_str_eq(r.out, "0000000010000000  psb\n0000000010000010  psbend\n", "%s", r.err);
	run_free(&r);
	unlink(pt);
}

/*
 * decode of a trace whose 256 MiB before its one PSB hold no PSB (PAD bytes, a sparse
 * file): the search for the first PSB goes in bounded steps, dropped behind, and the
 * decoder is synchronized at the PSB it finds; libipt's own search kept all 256 MiB.
 */
Test(bounded_memory, decode_skips_a_256_MiB_stretch_without_a_psb_in_bounded_memory)
{
	char pt[] = "/tmp/ptc-bigpad-XXXXXX";
	const char *decode[] = { "decode", "--pt", pt, "--stats", NULL };
	struct run_result r;
	int status;
	long kb;

	pad_then_psb(pt);
	kb = peak_rss_kb(decode, &status);
	cr_expect_eq(status, 0);
	cr_expect_lt(kb, BOUND_KB, "decode of a %u MiB stretch without a PSB: %ld KiB resident "
		     "at its peak (bound %u KiB)", BIG >> 20, kb, BOUND_KB);
	/* It synchronized at the PSB past the stretch: one PSB, no error. */
	cr_assert_eq(run_ptcollect(NULL, &r, "decode", "--pt", pt, "--stats", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_empty(r.err);
	run_free(&r);
	unlink(pt);
}

/* ---- a stretch read by libipt in one call: PAD (or garbage) after a PSB ---- */

#define STRETCH (96u << 20)	/* more than the bound: what is kept whole exceeds it */

static const uint8_t psb_psbend[] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				      0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				      0x02, 0x23 };

/* PSB, TSC, CBR, PSBEND, MTC: a PSB+ that libipt and ptxed decode without an error. */
static const uint8_t psb_plus[] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				    0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
				    0x19, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
				    0x02, 0x03, 0x20, 0x00, 0x02, 0x23, 0x59, 0x10 };

static void put(int fd, const void *p, size_t len, uint64_t at)
{
	cr_assert_eq(pwrite(fd, p, len, (off_t)at), (ssize_t)len);
}

/*
 * @path: PSB, PSBEND, then STRETCH bytes of PAD (a hole), or of @bad when not @bad_last
 * (written: a search must read them), or of PAD then @bad; a PSB+ at the end.
 */
static void psb_then_stretch(const char *path, const uint8_t *bad, bool bad_last)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	uint64_t end = sizeof(psb_psbend) + STRETCH;

	cr_assert_geq(fd, 0, "%s", path);
	put(fd, psb_psbend, sizeof(psb_psbend), 0);
	if (bad && bad_last) {
		put(fd, bad, 1, end++);
	} else if (bad) {
		uint8_t *block = malloc(1u << 20);

		cr_assert_not_null(block);
		memset(block, *bad, 1u << 20);
		for (uint64_t at = sizeof(psb_psbend); at < end; at += 1u << 20)
			put(fd, block, end - at < (1u << 20) ? end - at : 1u << 20, at);
		free(block);
	}
	put(fd, psb_plus, sizeof(psb_plus), end);
	close(fd);
}

/* decode @pt with @mode (then @more), under the bound; exit @want. */
static void decode_bounded(const char *pt, const char *jobs, const char *mode, const char *more,
			   int want)
{
	const char *args[] = { "decode", "--pt", pt, "-J", jobs, mode, more, NULL };
	int status;
	long kb = peak_rss_kb(args, &status);

	cr_expect_eq(status, want, "decode -J %s %s: exit %d", jobs, mode, status);
	cr_expect_lt(kb, BOUND_KB, "decode -J %s %s %s of a PSB and %u MiB of PAD: %ld KiB "
		     "resident at its peak (bound %u KiB)", jobs, mode, more ? more : "",
		     STRETCH >> 20, kb, BOUND_KB);
}

/*
 * PAD after a PSB: libipt reads the whole run in one call (the query decoder's read
 * ahead), so that dropping pages between its calls never came; every page stayed
 * resident (96 MiB here, 1 GiB in the issue). A guard page ahead of the decoder drops
 * behind it within the call. Every mode, one thread and two; dump too.
 */
Test(bounded_memory, pad_after_a_psb_is_read_in_bounded_memory_by_every_mode)
{
	char *dir = temp_dir("ptc-padafter"), *pt = temp_path(dir, "t.pt");
	char *tl = temp_path(dir, "tl.json");
	const char *modes[] = { "--insn", "--branches", "--calls", "--stats" };
	const char *dump[] = { "dump", "--no-pad", pt, NULL };
	struct run_result r;
	int status;
	long kb;

	psb_then_stretch(pt, NULL, false);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		decode_bounded(pt, "1", modes[i], NULL, 0);
	decode_bounded(pt, "1", "--timeline", tl, 0);
	decode_bounded(pt, "2", "--json", NULL, 0);
	kb = peak_rss_kb(dump, &status);
	cr_expect_eq(status, 0);
	cr_expect_lt(kb, BOUND_KB, "dump of a PSB and %u MiB of PAD: %ld KiB resident at its "
		     "peak (bound %u KiB)", STRETCH >> 20, kb, BOUND_KB);
	/* As ptxed: nothing to print, no error. */
	cr_assert_eq(run_ptcollect(NULL, &r, "decode", "--pt", pt, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_empty(r.out);
	cr_expect_str_empty(r.err);
	run_free(&r);
	free(tl);
	free(pt);
	temp_dir_remove(dir);
}

/*
 * Garbage after a PSB: 96 MiB of it right after its PSBEND (the resync's search crosses
 * the stretch, in steps dropped behind), or a bad byte after a stretch of PAD (libipt
 * reads the PAD in one call, then fails). Both are reported where ptxed reports them,
 * in bounded memory, by decode and dump.
 */
Test(bounded_memory, garbage_after_a_psb_is_read_in_bounded_memory)
{
	static const uint8_t bad = 0xd9 + 0x20;	/* an opcode libipt does not know */
	char *dir = temp_dir("ptc-garbafter"), *pt = temp_path(dir, "t.pt"), want[160];

	for (int last = 0; last < 2; last++) {
		uint64_t at = last ? sizeof(psb_psbend) + STRETCH : sizeof(psb_psbend);
		const char *dump[] = { "dump", "--no-pad", pt, NULL };
		struct run_result r;
		int status;
		long kb;

		psb_then_stretch(pt, &bad, last);
		decode_bounded(pt, "1", "--stats", NULL, 2);
		decode_bounded(pt, "2", "--insn", NULL, 2);
		kb = peak_rss_kb(dump, &status);
		cr_expect_eq(status, 0);
		cr_expect_lt(kb, BOUND_KB, "dump of a PSB, garbage and %u MiB of PAD: %ld KiB "
			     "resident at its peak (bound %u KiB)", STRETCH >> 20, kb, BOUND_KB);
		/*
		 * The error where libipt puts it: 2.0 at the bad byte; 2.1 and newer,
		 * as the oracle's ptxed, at the packet after the PSB's (0x10).
		 */
		cr_assert_eq(run_ptcollect(NULL, &r, "--version", NULL), 0);
		if (!strstr(r.out, "libipt 2.0."))
			at = 0x10;
		run_free(&r);
		cr_assert_eq(run_ptcollect(NULL, &r, "decode", "--pt", pt, NULL), 0);
		cr_expect_eq(r.status, 2, "%s", r.err);
		snprintf(want, sizeof(want), "offset 0x%" PRIx64 ", ip 0x0: ", at);
		cr_expect(strstr(r.err, want), "'%s' not in: %s", want, r.err);
		run_free(&r);
	}
	free(pt);
	temp_dir_remove(dir);
}

/*
 * Many small chunks (-J 2 --chunk-size 16K) over a 96 MiB trace of real packets: a
 * page fault maps the kernel's whole folio (fault-around, or since Linux 6.18 a large
 * folio), pages of chunks let go of already; the trace's mapping grew to what was read
 * (1 GB on a 1 GB trace). hase's trace, repeated: PSBs every 700 bytes, errors between.
 */
Test(bounded_memory, small_chunks_on_two_threads_decode_in_bounded_memory)
{
	char *dir = temp_dir("ptc-chunks"), *pt = temp_path(dir, "t.pt");
	char *src = run_shared("traces/hase-loopy-skylake/aux.aux-idx2-cpu2-tid19233.pt");
	const char *args[] = { "decode", "--pt", pt, "-J", "2", "--chunk-size", "16K",
			       "--stats", NULL };
	size_t len = 0, n = 0;
	uint8_t trace[4096], *block;
	int fd = open(src, O_RDONLY), status;
	ssize_t got;
	long kb;

	cr_assert_geq(fd, 0, "%s", src);
	got = read(fd, trace, sizeof(trace));
	cr_assert_gt(got, 0);
	len = (size_t)got;
	close(fd);
	block = malloc(1000 * len);
	cr_assert_not_null(block);
	for (size_t i = 0; i < 1000; i++)
		memcpy(block + i * len, trace, len);
	fd = open(pt, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fd, 0, "%s", pt);
	for (n = 0; n < STRETCH; n += 1000 * len)
		put(fd, block, 1000 * len, n);
	close(fd);
	free(block);
	kb = peak_rss_kb(args, &status);
	cr_expect_lt(status, 128, "killed (%d)", status);
	cr_expect_lt(kb, BOUND_KB, "decode -J 2 --chunk-size 16K of a %zu MiB trace: %ld KiB "
		     "resident at its peak (bound %u KiB)", n >> 20, kb, BOUND_KB);
	free(src);
	free(pt);
	temp_dir_remove(dir);
}

/* Pages of @path's first @len bytes in the page cache (mincore of a mapping of it). */
static size_t cached_pages(const char *path, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 0;
	int fd = open(path, O_RDONLY);
	unsigned char *vec = malloc(len / page + 1);
	void *p;

	cr_assert_geq(fd, 0, "%s", path);
	cr_assert_not_null(vec);
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	cr_assert_neq(p, MAP_FAILED);
	cr_assert_eq(mincore(p, len, vec), 0);
	for (size_t i = 0; i < len / page; i++)
		n += vec[i] & 1;
	munmap(p, len);
	free(vec);
	close(fd);
	return n;
}

/*
 * A stretch without a PSB that is a hole of a sparse file (the 1 GiB of PAD of the
 * issue, made with truncate) holds zeroes only: decode and dump pass it with SEEK_DATA,
 * never reading it. The search read every page of it before (0.4 to 8 s of filling the
 * page cache with zeroes for 1 GiB, against 0.01 s now): none of its pages is cached.
 */
Test(bounded_memory, a_hole_of_a_sparse_trace_is_passed_without_reading_it)
{
	char pt[] = "/tmp/ptc-bigpad-XXXXXX";
	struct run_result r;

	pad_then_psb(pt);
	cr_assert_eq(run_ptcollect(NULL, &r, "decode", "--pt", pt, "--stats", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "decode", "--pt", pt, "-J", "2", "--stats", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--format", "pt", pt, NULL), 0);
	cr_expect_str_eq(r.out, "0000000010000000  psb\n0000000010000010  psbend\n", "%s", r.err);
	run_free(&r);
	/* The hole's first 255 MiB: the last MiB is near the PSB, which libipt reads. */
	cr_expect_eq(cached_pages(pt, BIG - (1u << 20)), 0, "pages of the hole were read");
	unlink(pt);
}

/* ptwalk's trace of @insns instructions over @blocks blocks into @dir, seeded @seed. */
static void walk_seeded(const char *dir, const char *blocks, const char *insns, const char *seed)
{
	char *prog = run_testprog("ptwalk");
	char *argv[] = { prog, "-b", (char *)blocks, "-s", (char *)seed, "-n", (char *)insns,
			 "-p", "400", (char *)dir, NULL };
	struct run_result r;

	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	free(prog);
}

/* The same, seed 5. */
static void walk(const char *dir, const char *blocks, const char *insns)
{
	walk_seeded(dir, blocks, insns, "5");
}

/*
 * The fast flow path's blocks (fastflow.h: FASTFLOW_BLOCKS, then the table is emptied):
 * a walk over 60,000 blocks, more than it keeps, decoded at two lengths (3.2 M and 6.4 M
 * instructions, 2.1 and 4.3 MB of trace) has the same peak resident set (the lower of two
 * runs each), within 10 % (and 1 MiB); and what the shorter prints is libipt's
 * (PTCOLLECT_DECODE_NO_FAST=1), byte for byte, however often the table was emptied, at
 * -J 1 and at -J 2 (the workers' shared table fills, and each goes on in a table of its
 * own). Both lengths are past the thresholds: the table filled and emptied, 59,000 of the
 * blocks visited, and the traces longer than what the mapping keeps behind the decoder (at
 * 0.4 M and 1.6 M, 0.3 and 1.1 MB, each resident whole: 0.9 MB more at 1.6 M).
 */
Test(bounded_memory, the_fast_paths_block_table_does_not_grow_with_the_trace)
{
	char dir[] = "/tmp/ptc-ffbound-XXXXXX", s[64], l[64], raw[96], pt_s[96], pt_l[96];
	static char *const nofast[] = { "PTCOLLECT_DECODE_NO_FAST=1", NULL };
	long kb_s, kb_l;
	int status;

	cr_assert(mkdtemp(dir));
	snprintf(s, sizeof(s), "%s/s", dir);
	snprintf(l, sizeof(l), "%s/l", dir);
	cr_assert_eq(mkdir(s, 0700), 0);
	cr_assert_eq(mkdir(l, 0700), 0);
	walk(s, "60000", "3200000");
	walk(l, "60000", "6400000");
	snprintf(raw, sizeof(raw), "%s/prog.bin:0x401000", l);
	snprintf(pt_s, sizeof(pt_s), "%s/trace.pt", s);
	snprintf(pt_l, sizeof(pt_l), "%s/trace.pt", l);
	for (int m = 0; m < 2; m++) {
		const char *mode = m ? "--branches" : "--stats";
		char raw_s[96];
		struct run_result a, b;

		snprintf(raw_s, sizeof(raw_s), "%s/prog.bin:0x401000", s);
		kb_s = peak_rss_kb_low((const char *[]){ "decode", "-J", "1", "--raw", raw_s, "--pt",
							 pt_s, mode, NULL }, NULL, &status);
		cr_expect_eq(status, 0);
		kb_l = peak_rss_kb_low((const char *[]){ "decode", "-J", "1", "--raw", raw, "--pt",
							 pt_l, mode, NULL }, NULL, &status);
		cr_expect_eq(status, 0);
		cr_expect_leq(kb_l, kb_s + kb_s / 10 + 1024, "%s: %ld KiB at 6.4 M instructions, "
			      "%ld KiB at 3.2 M", mode, kb_l, kb_s);
		cr_log_info("decode %s: %ld KiB at 3.2 M instructions, %ld KiB at 6.4 M", mode, kb_s,
			    kb_l);
		cr_assert_eq(run_ptcollect(NULL, &a, "decode", "-J", "1", "--raw", raw_s, "--pt",
					   pt_s, mode, NULL), 0);
		cr_assert_eq(run_ptcollect(nofast, &b, "decode", "-J", "1", "--raw", raw_s, "--pt",
					   pt_s, mode, NULL), 0);
		cr_expect_eq(a.status, 0, "%s", a.err);
		cr_expect_eq(b.status, a.status);
		cr_expect_str_eq(a.out, b.out);
		cr_expect_str_eq(a.err, b.err);
		run_free(&a);
		/* -J 2: the workers' shared table fills, then each goes on in one of its own. */
		cr_assert_eq(run_ptcollect(NULL, &a, "decode", "-J", "2", "--chunk-size", "64K",
					   "--raw", raw_s, "--pt", pt_s, mode, NULL), 0);
		cr_expect_eq(a.status, b.status, "-J 2 %s: %s", mode, a.err);
		cr_expect(!strcmp(a.out, b.out), "-J 2 %s prints other output than libipt", mode);
		cr_expect_str_eq(a.err, b.err);
		run_free(&a);
		run_free(&b);
	}
	for (int i = 0; i < 2; i++) {
		char f[96];

		snprintf(f, sizeof(f), "%s/%s/trace.pt", dir, i ? "l" : "s");
		unlink(f);
		snprintf(f, sizeof(f), "%s/%s/prog.bin", dir, i ? "l" : "s");
		unlink(f);
		rmdir(i ? l : s);
	}
	rmdir(dir);
}

/* Rows of report --json's output in @path with durations kept exactly (not yet a histogram). */
static int exact_rows(const char *path)
{
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr), *g, *f;
	size_t i, k;
	int n = 0;

	cr_assert_not_null(doc, "%s: %s", path, jerr.text);
	json_array_foreach(json_object_get(doc, "groups"), i, g) {
		json_array_foreach(json_object_get(g, "functions"), k, f) {
			const char *calls = json_string_value(json_object_get(f, "calls"));

			n += json_is_true(json_object_get(f, "exact")) && calls && strcmp(calls, "0");
		}
	}
	json_decref(doc);
	return n;
}

/*
 * report's tables keep a row per function, durations exact up to REPORT_EXACT_MAX (1024)
 * per function then a histogram of 15 KiB, and no call-stack tree (only --folded reads it;
 * it is bounded by REPORT_NODES_MAX, not by the trace, and grows with the paths a trace
 * takes until then): a walk over 200 blocks (seed 7) reported at two lengths, 16 M and 32 M
 * instructions (1.1 M and 2.2 M calls, 13 and 25 MB of trace), has the same peak resident
 * set in every table view (the lower of two runs each), within 10 % (and 1 MiB). Both
 * lengths are past every threshold, so that what differs is only what grows with the calls:
 * every row with a duration has its histogram (checked; the walk's rarest functions cross
 * between 8 M and 12 M; at seed 5's 1 M and 4 M, 11 and 24 of 200 had, and the 4 M run
 * peaked 1 to 2 MB higher), and both traces are longer than what the mapping keeps behind
 * the decoder.
 * Durations kept exactly without the cap peak 12 MB higher at 32 M (33 MB to 22). And the
 * tables keep no tree: each view peaks under half of --folded's at 16 M, whose tree is full
 * (63 MB to the tables' 14); kept for the tables too, it is as large at both lengths (63 MB),
 * which the lengths alone do not tell.
 */
Test(bounded_memory, report_tables_do_not_grow_with_the_trace)
{
	char *dir = temp_dir("ptc-reportbound"), *s = temp_path(dir, "s"), *l = temp_path(dir, "l");
	char *json = temp_path(dir, "report.json");
	char raw_s[160], raw_l[160], pt_s[160], pt_l[160];
	static const char *const views[][4] = {
		{ NULL }, { "--outliers", "3", NULL }, { "--json", NULL },
	};
	long kb_folded, kb_max = 0;
	int status;

	cr_assert_eq(mkdir(s, 0700), 0);
	cr_assert_eq(mkdir(l, 0700), 0);
	walk_seeded(s, "200", "16000000", "7");
	walk_seeded(l, "200", "32000000", "7");
	snprintf(raw_s, sizeof(raw_s), "%s/prog.bin:0x401000", s);
	snprintf(raw_l, sizeof(raw_l), "%s/prog.bin:0x401000", l);
	snprintf(pt_s, sizeof(pt_s), "%s/trace.pt", s);
	snprintf(pt_l, sizeof(pt_l), "%s/trace.pt", l);
	for (size_t v = 0; v < sizeof(views) / sizeof(views[0]); v++) {
		const char *args[12] = { "report", "-J", "1", "--raw", raw_s, "--pt", pt_s };
		bool is_json = views[v][0] && !strcmp(views[v][0], "--json");
		long kb_s, kb_l;
		int n = 7;

		for (int i = 0; views[v][i]; i++)
			args[n++] = views[v][i];
		args[n] = NULL;
		kb_s = peak_rss_kb_low(args, is_json ? json : NULL, &status);
		cr_expect_eq(status, 0);
		if (is_json)
			cr_expect_eq(exact_rows(json), 0, "at 16 M instructions, rows still exact: the "
				     "lengths are no longer past the cap at every function");
		args[4] = raw_l;
		args[6] = pt_l;
		kb_l = peak_rss_kb_low(args, is_json ? json : NULL, &status);
		cr_expect_eq(status, 0);
		if (is_json)
			cr_expect_eq(exact_rows(json), 0, "at 32 M instructions, rows still exact");
		cr_expect_leq(kb_l, kb_s + kb_s / 10 + 1024, "report %s: %ld KiB at 32 M "
			      "instructions, %ld KiB at 16 M", views[v][0] ? views[v][0] : "(the table)",
			      kb_l, kb_s);
		cr_log_info("report %s: %ld KiB at 16 M instructions, %ld KiB at 32 M",
			    views[v][0] ? views[v][0] : "(the table)", kb_s, kb_l);
		kb_max = kb_l > kb_max ? kb_l : kb_max;
		kb_max = kb_s > kb_max ? kb_s : kb_max;
	}
	kb_folded = peak_rss_kb((const char *[]){ "report", "-J", "1", "--raw", raw_s, "--pt", pt_s,
						  "--folded", NULL }, &status);
	cr_expect_eq(status, 0);
	cr_log_info("report --folded: %ld KiB at 16 M instructions", kb_folded);
	cr_expect_lt(2 * kb_max, kb_folded, "the tables peak at %ld KiB, --folded (the tree) at "
		     "%ld KiB: do the tables keep the tree?", kb_max, kb_folded);
	free(json);
	free(s);
	free(l);
	temp_dir_remove(dir);
}

/* Run ptcollect with @args (NULL-terminated), its output to @out; its exit status. */
static int run_to_file(const char *const *args, const char *out)
{
	int st;

	run_measured(args, out, &st);
	return st;
}

/* Whether files @a and @b hold the same bytes (and are not empty). */
static bool same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	char ba[65536], bb[65536];
	size_t na, nb, total = 0;
	bool same = fa && fb;

	while (same) {
		na = fread(ba, 1, sizeof(ba), fa);
		nb = fread(bb, 1, sizeof(bb), fb);
		same = na == nb && !memcmp(ba, bb, na);
		total += na;
		if (!na)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same && total;
}

/*
 * --insn's caches of instruction texts (disasm.h: a table over 256 KiB of code, 4 MiB, and
 * a ring of 4 MiB of texts, written over when full; and the fast path's lines of whole
 * blocks, insnblk.h: a table of 1 MiB, a ring of 8 MiB, emptied with the block table): a
 * walk over 60,000 blocks (780 KiB of code, 240,000 instructions, more than each holds)
 * decoded at two lengths (3.2 M and 6.4 M instructions, 2.1 and 4.3 MB of trace) has the
 * same peak resident set (the lower of two runs each), within 10 % (and 1 MiB): both past
 * the thresholds, the caches full and the traces longer than what the mapping keeps behind
 * the decoder (at 0.4 M and 1.6 M, 0.3 and 1.1 MB, each resident whole: 1.3 MB more at
 * 1.6 M). And a walk of 0.4 M instructions prints the same at -J 1 and in chunks of 64 KiB
 * on two threads, each chunk's decoder with caches of its own, started empty.
 */
Test(bounded_memory, the_insn_text_cache_does_not_grow_with_the_trace)
{
	char *dir = temp_dir("ptc-insncache"), *s = temp_path(dir, "s"), *l = temp_path(dir, "l");
	char *o1 = temp_path(dir, "o1"), *o2 = temp_path(dir, "o2"), *e = temp_path(dir, "e");
	char raw_s[256], raw_l[256], pt_s[256], pt_l[256], raw_e[256], pt_e[256];
	long kb_s, kb_l;
	int status;

	cr_assert_eq(mkdir(s, 0700), 0);
	cr_assert_eq(mkdir(l, 0700), 0);
	cr_assert_eq(mkdir(e, 0700), 0);
	walk(s, "60000", "3200000");
	walk(l, "60000", "6400000");
	walk(e, "60000", "400000");
	snprintf(raw_e, sizeof(raw_e), "%s/prog.bin:0x401000", e);
	snprintf(pt_e, sizeof(pt_e), "%s/trace.pt", e);
	snprintf(raw_s, sizeof(raw_s), "%s/prog.bin:0x401000", s);
	snprintf(raw_l, sizeof(raw_l), "%s/prog.bin:0x401000", l);
	snprintf(pt_s, sizeof(pt_s), "%s/trace.pt", s);
	snprintf(pt_l, sizeof(pt_l), "%s/trace.pt", l);
	kb_s = peak_rss_kb_low((const char *[]){ "decode", "-J", "1", "--raw", raw_s, "--pt", pt_s,
						 "--insn", NULL }, NULL, &status);
	cr_expect_eq(status, 0);
	kb_l = peak_rss_kb_low((const char *[]){ "decode", "-J", "1", "--raw", raw_l, "--pt", pt_l,
						 "--insn", NULL }, NULL, &status);
	cr_expect_eq(status, 0);
	cr_expect_leq(kb_l, kb_s + kb_s / 10 + 1024, "--insn: %ld KiB at 6.4 M instructions, "
		      "%ld KiB at 3.2 M", kb_l, kb_s);
	cr_log_info("decode --insn: %ld KiB at 3.2 M instructions, %ld KiB at 6.4 M", kb_s, kb_l);
	cr_expect_eq(run_to_file((const char *[]){ "decode", "-J", "1", "--raw", raw_e, "--pt",
						   pt_e, "--insn", NULL }, o1), 0);
	cr_expect_eq(run_to_file((const char *[]){ "decode", "-J", "2", "--chunk-size", "64K",
						   "--raw", raw_e, "--pt", pt_e, "--insn", NULL },
				 o2), 0);
	cr_expect(same_file(o1, o2), "--insn -J 1 and -J 2 --chunk-size 64K differ: %s, %s",
		  o1, o2);
	free(s);
	free(l);
	free(e);
	free(o1);
	free(o2);
	temp_dir_remove(dir);
}

/* ptgen's loop (a call to two functions), @iters iterations, a PSB every 64 of them. */
static void loop(const char *dir, const char *iters)
{
	char *prog = run_testprog("ptgen");
	char *argv[] = { prog, "-n", (char *)iters, "-p", "64", (char *)dir, NULL };
	struct run_result r;

	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	free(prog);
}

/*
 * -J 2's output waiting for its turn (decode.c: budget.wait_at): a worker ahead of the
 * merged chunk waits at the mark (16 MiB) as it writes, not only before its next chunk,
 * and the mark is reached in the first chunks of full size (the first sized by its output
 * makes 5/4 of it, and the workers start together; those after it end half a share after
 * the chunk before), so the peak is the same at two lengths past them, within
 * 10 % and 1 MiB: --insn and --branches on ptgen's loop at 5.2 M and 20.9 M instructions
 * (1.3 and 5.2 GB of --insn text). Not --calls: its merged chunk's records wait for the
 * merge's filter too, up to DSINK_TURN_HOLD beside the mark, and how much of that a run
 * reaches depends on how far the merge falls behind (a loaded machine: 32.6 and 37.9 MB
 * at the two lengths, 16 % apart; 31.5 and 33.0 MB idle). Before, a chunk made half the
 * mark, which was reached only once a worker got a chunk ahead, later the longer the run
 * (--branches 25.6 and 37.2 MB); and the sinks' buffers given back stayed in malloc's arenas (--insn
 * on the walk of bench/decode: 28 MB at 0.2 s, 35 MB at 4.7 s). Each peak is also under
 * -J 1's, twice the mark (what waits, and the buffers kept for reuse) and 8 MiB for the
 * second worker's own state and the buffers being written. What -J 2 prints is -J 1's:
 * test_decode.c's jobs_*.
 */
Test(bounded_memory, two_jobs_hold_the_same_waiting_output_at_two_lengths)
{
	char *dir = temp_dir("ptc-jwait"), *s = temp_path(dir, "s"), *l = temp_path(dir, "l");
	static const char *const modes[] = { "--insn", "--branches" };
	char raw_s[256], raw_l[256], pt_s[256], pt_l[256];
	int status;

	cr_assert_eq(mkdir(s, 0700), 0);
	cr_assert_eq(mkdir(l, 0700), 0);
	loop(s, "540000");
	loop(l, "2160000");
	snprintf(raw_s, sizeof(raw_s), "%s/prog.bin:0x401000", s);
	snprintf(raw_l, sizeof(raw_l), "%s/prog.bin:0x401000", l);
	snprintf(pt_s, sizeof(pt_s), "%s/trace.pt", s);
	snprintf(pt_l, sizeof(pt_l), "%s/trace.pt", l);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const char *m = modes[i];
		long kb_1, kb_s, kb_l, hi;

		kb_1 = peak_rss_kb((const char *[]){ "decode", "-J", "1", "--raw", raw_l, "--pt",
						     pt_l, m, NULL }, &status);
		cr_expect_eq(status, 0);
		/* Growth shows in every long run; the short one's peak is its highest. */
		kb_s = peak_rss_kb_high((const char *[]){ "decode", "-J", "2", "--raw", raw_s,
							  "--pt", pt_s, m, NULL }, &status);
		cr_expect_eq(status, 0);
		kb_l = peak_rss_kb_low((const char *[]){ "decode", "-J", "2", "--raw", raw_l, "--pt",
							 pt_l, m, NULL }, NULL, &status);
		cr_expect_eq(status, 0);
		hi = kb_s < kb_l ? kb_l : kb_s;
		cr_expect_leq(kb_l, kb_s + kb_s / 10 + 1024, "-J 2 %s: %ld KiB at 5.2 M instructions "
			      "(the highest of three runs), %ld KiB at 20.9 M (the lower of two): "
			      "more than 10 %% and 1 MiB over", m, kb_s, kb_l);
		cr_expect_leq(hi, kb_1 + 2 * WAIT_AT_KB + 8192, "-J 2 %s: %ld KiB at its peak "
			      "(-J 1: %ld KiB)", m, hi, kb_1);
	}
	free(s);
	free(l);
	temp_dir_remove(dir);
}

/*
 * -J 1: its one worker's chunk is next in line from the start, and the worker takes its
 * turn itself (decode.c), so nothing it writes waits in memory for the merge. Left to the
 * merge, what the worker wrote until the merge's thread ran waited there, up to the mark
 * (16 MiB): on a loaded machine 6 MB more at the peak in some runs. Here the merge is made
 * late every time: both threads on one CPU under SCHED_FIFO, where the worker runs until it
 * waits. ptgen's loop, 5.2 M instructions, --insn (1.3 GB of text): the peak so run is the
 * normal run's (the lower of two) within 4 MiB; before, 16 MiB over.
 */
Test(bounded_memory, one_job_holds_no_output_while_the_merge_waits_for_a_cpu)
{
	char *dir = temp_dir("ptc-j1turn");
	char raw[256], pt[256];
	const char *args[] = { "decode", "-J", "1", "--raw", raw, "--pt", pt, "--insn", NULL };
	long kb, kb_late;
	int status;

	loop(dir, "540000");
	snprintf(raw, sizeof(raw), "%s/prog.bin:0x401000", dir);
	snprintf(pt, sizeof(pt), "%s/trace.pt", dir);
	kb_late = run_measured_on(args, NULL, &status, true);
	if (status == NO_FIFO) {
		temp_dir_remove(dir);
		cr_skip_test("SCHED_FIFO on one CPU is not permitted here (it needs root or "
			     "CAP_SYS_NICE): the merge cannot be made late");
	}
	cr_expect_eq(status, 0);
	kb = peak_rss_kb_low(args, NULL, &status);
	cr_expect_eq(status, 0);
	cr_expect_leq(kb_late, kb + 4096, "-J 1 --insn, the merge late: %ld KiB at its peak, "
		      "%ld KiB when not", kb_late, kb);
	temp_dir_remove(dir);
}

/*
 * What report keeps a function beyond what decode --stats keeps, on many functions called a
 * few times each: a walk over 20,000 blocks (seed 1, 2 M instructions: 17,600 rows, about
 * 8 calls each), report's peak resident set over decode --stats' (the lower of two runs
 * each), per row shown, under ROW_BYTES_MAX. Measured: 932 bytes a row; 1,276 when a row's
 * exact durations took room for 64 at once (12.7 MB on the bench's walk, for 3.5 MB of
 * durations). Under ASan the allocator's red zones are most of a small array: the figure
 * is logged, not bound.
 */
#define ROW_BYTES_MAX 1100

Test(bounded_memory, report_keeps_a_few_hundred_bytes_a_function_called_a_few_times)
{
	char *dir = temp_dir("ptc-reportrows"), *out = temp_path(dir, "report.txt");
	char raw[160], pt[160], line[512];
	long kb_r, kb_s, rows = -3;	/* the three lines of the head */
	int status;
	FILE *f;

	walk_seeded(dir, "20000", "2000000", "1");
	snprintf(raw, sizeof(raw), "%s/prog.bin:0x401000", dir);
	snprintf(pt, sizeof(pt), "%s/trace.pt", dir);
	kb_r = peak_rss_kb_low((const char *[]){ "report", "-J", "1", "--raw", raw, "--pt", pt,
						 NULL }, out, &status);
	cr_assert_eq(status, 0);
	kb_s = peak_rss_kb_low((const char *[]){ "decode", "-J", "1", "--raw", raw, "--pt", pt,
						 "--stats", NULL }, NULL, &status);
	cr_assert_eq(status, 0);
	f = fopen(out, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		rows++;
	fclose(f);
	cr_assert_gt(rows, 15000, "%ld rows: the walk no longer calls most of its functions",
		     rows);
	cr_log_info("report: %ld KiB, decode --stats: %ld KiB, %ld rows: %ld bytes a row",
		    kb_r, kb_s, rows, (kb_r - kb_s) * 1024 / rows);
#if !defined(__SANITIZE_ADDRESS__)
	cr_expect_lt((kb_r - kb_s) * 1024 / rows, ROW_BYTES_MAX, "report peaks at %ld KiB, "
		     "decode --stats at %ld KiB: %ld bytes for each of %ld rows", kb_r, kb_s,
		     (kb_r - kb_s) * 1024 / rows, rows);
#endif
	unlink(out);
	free(out);
	temp_dir_remove(dir);
}
