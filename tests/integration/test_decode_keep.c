// SPDX-License-Identifier: MIT
/*
 * What a decoder thread keeps from one chunk to its next (decode_chunk.h:
 * decode_chunk_kept()): the image of the files given by hand and the fast path's
 * blocks cut from it. -J 2 built them again for every chunk (issue 25: the walk of
 * bench/decode took twice -J 1's CPU time).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode_chunk.h"
#include "decode_config.h"
#include "fastflow.h"
#include "insnblk.h"
#include "run.h"
#include "suitewatch.h"
#include "tempfile.h"

SUITEWATCH(watchdog, 120)
TestSuite(decode_keep, .init = watchdog, .fini = free_owned);

struct job {
	struct decode_chunk *c;
	struct decode_keep **keep;
};

/* On a decoder thread's stack, as decode_run's workers. */
static void *run_job(void *arg)
{
	struct job *j = arg;

	decode_chunk_kept(j->c, j->keep);
	return NULL;
}

static void decode_one(struct decode_chunk *c, struct decode_keep **keep)
{
	struct job j = { c, keep };
	pthread_attr_t attr;
	pthread_t t;

	cr_assert_eq(pthread_attr_init(&attr), 0);
	cr_assert_eq(pthread_attr_setstacksize(&attr, 4 * (size_t)DECODE_CHUNK_STACK), 0);
	cr_assert_eq(pthread_create(&t, &attr, run_job, &j), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	pthread_attr_destroy(&attr);
	cr_assert_eq(c->ret, 0, "the chunk failed: %d", c->ret);
}

/*
 * ptwalk's walk over 2,000 blocks (300,000 instructions) in a new directory, its trace
 * mapped, and a configuration that decodes it (--stats, the fast path).
 */
struct walk {
	char *dir;
	char raw[256], pt[256];
	struct decode_file file;
	struct decode_stream st;
	struct decode_config cfg;
	struct symcache *syms;
	uint8_t *map;
	uint64_t size;
	int fd;
};

static void walk_open(struct walk *w, const char *tmpl)
{
	char *prog = own(run_testprog("ptwalk"));
	struct run_result r;
	struct stat sb;

	memset(w, 0, sizeof(*w));
	w->dir = temp_dir(tmpl);
	cr_assert(w->dir);
	char *argv[] = { prog, "-b", "2000", "-s", "1", "-n", "300000", w->dir, NULL };
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	snprintf(w->raw, sizeof(w->raw), "%s/prog.bin", w->dir);
	snprintf(w->pt, sizeof(w->pt), "%s/trace.pt", w->dir);
	w->fd = open(w->pt, O_RDONLY);
	cr_assert_geq(w->fd, 0);
	cr_assert_eq(fstat(w->fd, &sb), 0);
	w->size = (uint64_t)sb.st_size;
	w->map = mmap(NULL, (size_t)w->size, PROT_READ, MAP_PRIVATE, w->fd, 0);
	cr_assert_neq(w->map, MAP_FAILED);
	w->file = (struct decode_file){ .raw = true, .path = w->raw, .addr = 0x401000 };
	w->st = (struct decode_stream){ .name = "walk", .pt = w->pt };
	decode_config_init(&w->cfg);
	w->cfg.mode = DECODE_NONE;
	w->cfg.files = &w->file;
	w->cfg.nr_files = 1;
	w->cfg.streams = &w->st;
	w->cfg.nr_streams = 1;
	w->syms = symcache_new();
	cr_assert(w->syms);
}

static void walk_close(struct walk *w)
{
	symcache_free(w->syms);
	munmap(w->map, (size_t)w->size);
	close(w->fd);
	temp_dir_remove(w->dir);
}

/* A chunk of the whole walk, its first and last. */
static void chunk_init(struct decode_chunk *c, const struct walk *w)
{
	memset(c, 0, sizeof(*c));
	c->cfg = &w->cfg;
	c->pt = w->map;
	c->fd = -1;
	c->end = w->size;
	c->first = c->last = true;
	c->tsc_hi = UINT64_MAX;
	c->syms = w->syms;
	dsink_init(&c->out, NULL);
	dsink_init(&c->tl, NULL);
}

static void chunk_fini(struct decode_chunk *c)
{
	dsink_destroy(&c->out);
	dsink_destroy(&c->tl);
	free(c->diags);
	free(c->error);
}

/*
 * A walk of 2,000 blocks decoded (--stats, the fast path) as two chunks by one thread:
 * the second finds every block the first cut (none is cut again) and counts what the
 * first counted; a thread that keeps nothing cuts them again for each chunk.
 */
static void a_threads_second_chunk(enum decode_mode mode)
{
	struct decode_keep *keep = NULL;
	struct decode_chunk a, b;
	struct walk w;
	uint64_t built;

	walk_open(&w, "ptc-keep");
	w.cfg.mode = mode;
	chunk_init(&a, &w);
	decode_one(&a, &keep);
	built = decode_keep_built(keep);
	cr_assert_gt(built, 1000, "the first chunk cut %llu blocks", (unsigned long long)built);
	chunk_init(&b, &w);
	decode_one(&b, &keep);
	cr_expect_eq(decode_keep_built(keep), built, "the second chunk cut %llu blocks more",
		     (unsigned long long)(decode_keep_built(keep) - built));
	cr_expect_gt(a.stats.insns, 0);
	cr_expect_eq(b.stats.insns, a.stats.insns);
	cr_expect_eq(b.stats.branches, a.stats.branches);
	/* --insn: the text cache is the first chunk's (a new one would hold nothing). */
	if (mode == DECODE_INSN) {
		cr_expect_gt(a.stats.cache_used[DECODE_CACHE_TEXT], 1000);
		cr_expect_eq(b.stats.cache_used[DECODE_CACHE_TEXT],
			     a.stats.cache_used[DECODE_CACHE_TEXT], "the second chunk's text cache: "
			     "%llu entries, the first's %llu",
			     (unsigned long long)b.stats.cache_used[DECODE_CACHE_TEXT],
			     (unsigned long long)a.stats.cache_used[DECODE_CACHE_TEXT]);
	}
	chunk_fini(&a);
	chunk_fini(&b);

	/* Without a keep, nothing is kept: each chunk starts again. */
	chunk_init(&a, &w);
	decode_one(&a, NULL);
	cr_expect_eq(a.stats.insns, b.stats.insns);
	chunk_fini(&a);

	decode_keep_free(keep);
	walk_close(&w);
}

Test(decode_keep, a_threads_second_chunk_cuts_no_block_again)
{
	a_threads_second_chunk(DECODE_NONE);
}

/* The same with --insn: the blocks, their lines and the instructions' text cache kept. */
Test(decode_keep, a_threads_second_chunk_with_insn_keeps_the_text_cache)
{
	a_threads_second_chunk(DECODE_INSN);
}

/*
 * Two threads (-J 2's workers, each with its own keep) on one table of blocks
 * (fastflow_table, decode_run's with -J 2 on): every block is cut once for both (issue 25:
 * each worker cut the walk's blocks again, a tenth of -J 1's CPU time on --stats), one
 * thread after the other and both at once, and both count what one thread counts alone.
 */
static void two_threads_on_a_shared_table(enum decode_mode mode)
{
	struct decode_keep *alone = NULL;
	struct decode_chunk a, b;
	struct walk w;
	uint64_t built, lines_alone;

	walk_open(&w, "ptc-share");
	w.cfg.mode = mode;

	/* One thread alone, its own table: what every block costs once. */
	chunk_init(&a, &w);
	decode_one(&a, &alone);
	built = decode_keep_built(alone);
	cr_assert_gt(built, 1000, "%llu blocks", (unsigned long long)built);
	lines_alone = a.stats.cache_used[DECODE_CACHE_LINES];
	if (mode == DECODE_INSN)
		cr_assert_gt(lines_alone, 1000, "%llu blocks' lines",
			     (unsigned long long)lines_alone);
	decode_keep_free(alone);

	for (int together = 0; together < 2; together++) {
		struct fastflow_table *t = fastflow_table_new();
		struct insnblk_shared *lines = mode == DECODE_INSN ? insnblk_shared_new() : NULL;
		struct decode_keep *k1 = NULL, *k2 = NULL;
		struct job j1 = { &a, &k1 }, j2 = { &b, &k2 };
		const char *how = together ? "at once" : "one after the other";

		cr_assert(t);
		chunk_fini(&a);
		chunk_init(&a, &w);
		chunk_init(&b, &w);
		a.blocks = b.blocks = t;
		a.lines = b.lines = lines;
		if (together) {
			pthread_attr_t attr;
			pthread_t t1, t2;

			cr_assert_eq(pthread_attr_init(&attr), 0);
			cr_assert_eq(pthread_attr_setstacksize(&attr, 4 * (size_t)DECODE_CHUNK_STACK),
				     0);
			cr_assert_eq(pthread_create(&t1, &attr, run_job, &j1), 0);
			cr_assert_eq(pthread_create(&t2, &attr, run_job, &j2), 0);
			cr_assert_eq(pthread_join(t1, NULL), 0);
			cr_assert_eq(pthread_join(t2, NULL), 0);
			pthread_attr_destroy(&attr);
			cr_assert_eq(a.ret, 0);
			cr_assert_eq(b.ret, 0);
		} else {
			decode_one(&a, &k1);
			decode_one(&b, &k2);
			cr_expect_eq(decode_keep_built(k2), 0, "%s: the second thread cut %llu blocks",
				     how, (unsigned long long)decode_keep_built(k2));
		}
		cr_expect_eq(decode_keep_built(k1) + decode_keep_built(k2), built,
			     "%s: the threads cut %llu and %llu blocks, one alone %llu", how,
			     (unsigned long long)decode_keep_built(k1),
			     (unsigned long long)decode_keep_built(k2), (unsigned long long)built);
		cr_expect_gt(a.stats.insns, 0);
		cr_expect_eq(b.stats.insns, a.stats.insns, "%s", how);
		cr_expect_eq(b.stats.branches, a.stats.branches, "%s", how);
		cr_expect_eq(b.stats.fast, a.stats.fast, "%s", how);
		/* --insn: each block's lines made once, as many as one thread alone keeps. */
		if (lines)
			cr_expect_eq(insnblk_shared_used(lines), lines_alone,
				     "%s: %u blocks' lines shared, one alone keeps %llu", how,
				     insnblk_shared_used(lines), (unsigned long long)lines_alone);
		chunk_fini(&b);
		decode_keep_free(k1);
		decode_keep_free(k2);
		fastflow_table_free(t);
		insnblk_shared_free(lines);
	}
	chunk_fini(&a);
	walk_close(&w);
}

Test(decode_keep, two_threads_on_a_shared_table_cut_each_block_once)
{
	two_threads_on_a_shared_table(DECODE_NONE);
}

/* The same with --insn (fast_insn()): the blocks and their lines shared (issue 25). */
Test(decode_keep, two_threads_with_insn_cut_each_block_and_make_its_lines_once)
{
	two_threads_on_a_shared_table(DECODE_INSN);
}

/* ---- --insn's block lines, shared by the threads of a run (insnblk_shared) ---- */

#define LINES_BLOCKS 6000

/* Block @i's key and its lines (as many as its instructions, of lengths that vary). */
static size_t lines_of(unsigned i, uint64_t *ip, unsigned *n, char *text)
{
	size_t len = 0;

	*ip = 0x401000 + (uint64_t)i * 24;
	*n = 1 + i % 11;
	for (unsigned k = 0; k < *n; k++)
		len += (size_t)sprintf(text + len, "%016llx  block %u line %u%.*s\n",
				       (unsigned long long)(*ip + k), i, k, (int)(i % 23),
				       "..........................");
	return len;
}

struct lines_job {
	struct insnblk_shared *s;
	int dir;		/* the order it goes through the blocks: 1 up, -1 down */
	unsigned found;		/* blocks found kept by the other (or by itself before) */
	unsigned wrong;		/* a text found that is not the block's */
};

/* As fast_insn(): look, make on a miss, keep; then the text found must be the block's. */
static void *lines_job(void *arg)
{
	struct lines_job *j = arg;
	static __thread char text[64 * 11];

	for (unsigned round = 0; round < 2; round++)
		for (unsigned k = 0; k < LINES_BLOCKS; k++) {
			unsigned i = j->dir > 0 ? k : LINES_BLOCKS - 1 - k, n;
			size_t len = 0, want;
			const char *t;
			uint64_t ip;

			want = lines_of(i, &ip, &n, text);
			t = insnblk_shared_find(j->s, ip, n, &len);
			if (t)
				j->found++;
			else if (!insnblk_shared_add(j->s, ip, n, text, want))
				j->wrong++;
			t = insnblk_shared_find(j->s, ip, n, &len);
			if (!t || len != want || memcmp(t, text, want))
				j->wrong++;
			/* Another block's count at the same address is another block. */
			if (insnblk_shared_find(j->s, ip, n + 100, &len))
				j->wrong++;
		}
	return NULL;
}

/*
 * Two threads (-J 2's workers) on one table of block lines, one after the other and both at
 * once: each block's lines are kept once (its entries are the blocks, not twice them), each
 * thread finds every block's own text, the second thread alone makes none.
 */
Test(decode_keep, two_threads_on_shared_lines_keep_each_block_once)
{
	for (int together = 0; together < 2; together++) {
		struct insnblk_shared *s = insnblk_shared_new();
		struct lines_job a = { s, 1, 0, 0 }, b = { s, -1, 0, 0 };
		const char *how = together ? "at once" : "one after the other";
		pthread_t t1, t2;

		cr_assert(s);
		if (together) {
			cr_assert_eq(pthread_create(&t1, NULL, lines_job, &a), 0);
			cr_assert_eq(pthread_create(&t2, NULL, lines_job, &b), 0);
			cr_assert_eq(pthread_join(t1, NULL), 0);
			cr_assert_eq(pthread_join(t2, NULL), 0);
		} else {
			lines_job(&a);
			lines_job(&b);
			cr_expect_eq(b.found, 2 * LINES_BLOCKS, "%s: the second made %u blocks' lines",
				     how, 2 * LINES_BLOCKS - b.found);
		}
		cr_expect_eq(a.wrong + b.wrong, 0, "%s: %u wrong texts", how, a.wrong + b.wrong);
		/* The second round finds all of them. */
		cr_expect_geq(a.found, LINES_BLOCKS, "%s", how);
		cr_expect_geq(b.found, LINES_BLOCKS, "%s", how);
		cr_expect_eq(insnblk_shared_used(s), LINES_BLOCKS, "%s: %u entries for %u blocks",
			     how, insnblk_shared_used(s), LINES_BLOCKS);
		cr_expect_not(insnblk_shared_full(s), "%s", how);
		insnblk_shared_free(s);
	}
}

/*
 * A full index (half its slots taken) is searched through runs of other keys' slots, which
 * their tags pass over without reading their records: every key is found with its own
 * text, and no key kept with another count or at another address is found for it.
 */
Test(decode_keep, shared_lines_found_past_other_keys_slots)
{
	struct insnblk_shared *s = insnblk_shared_new();
	char text[32];
	size_t len;
	unsigned wrong = 0;

	cr_assert(s);
	for (unsigned i = 0; i < INSNBLK_SHARED_ENTRIES; i++) {
		int n = snprintf(text, sizeof(text), "%u\n", i);

		cr_assert(insnblk_shared_add(s, 0x400000 + 16 * (uint64_t)i, 1 + i % 3, text,
					     (size_t)n), "block %u", i);
	}
	for (unsigned i = 0; i < INSNBLK_SHARED_ENTRIES; i++) {
		uint64_t ip = 0x400000 + 16 * (uint64_t)i;
		int n = snprintf(text, sizeof(text), "%u\n", i);
		const char *t = insnblk_shared_find(s, ip, 1 + i % 3, &len);

		if (!t || len != (size_t)n || memcmp(t, text, len))
			wrong++;
		if (insnblk_shared_find(s, ip, 4 + i % 3, &len) ||
		    insnblk_shared_find(s, ip + 8, 1 + i % 3, &len))
			wrong++;
	}
	cr_expect_eq(wrong, 0, "%u keys found wrong", wrong);
	insnblk_shared_free(s);
}

/*
 * Bounded whatever the program: past INSNBLK_SHARED_ENTRIES blocks, or INSNBLK_RING bytes
 * of lines, nothing more is kept (the thread keeps the rest in its own insnblk), and what
 * was kept is still found.
 */
Test(decode_keep, shared_lines_stop_at_their_bound)
{
	struct insnblk_shared *s = insnblk_shared_new();
	char *big = malloc(INSNBLK_TEXT_MAX + 1);
	unsigned kept = 0;
	size_t len;

	cr_assert(s && big);
	for (unsigned i = 0; i < INSNBLK_SHARED_ENTRIES; i++)
		cr_assert(insnblk_shared_add(s, 0x1000 + i, 1, "x\n", 2), "block %u", i);
	cr_expect_not(insnblk_shared_full(s));
	cr_expect_not(insnblk_shared_add(s, 0x1000 + INSNBLK_SHARED_ENTRIES, 1, "x\n", 2));
	cr_expect(insnblk_shared_full(s));
	cr_expect_eq(insnblk_shared_used(s), INSNBLK_SHARED_ENTRIES);
	cr_expect_not(insnblk_shared_find(s, 0x1000 + INSNBLK_SHARED_ENTRIES, 1, &len));
	cr_expect(insnblk_shared_find(s, 0x1000, 1, &len) && len == 2);
	cr_expect(insnblk_shared_find(s, 0x1000 + INSNBLK_SHARED_ENTRIES - 1, 1, &len));
	insnblk_shared_free(s);

	/* The bytes: blocks of the most text each, until the ring is full. */
	s = insnblk_shared_new();
	cr_assert(s);
	memset(big, 'y', INSNBLK_TEXT_MAX + 1);
	cr_expect_not(insnblk_shared_add(s, 0x2000, 1, big, INSNBLK_TEXT_MAX + 1),
		      "a text past INSNBLK_TEXT_MAX");
	cr_expect_not(insnblk_shared_full(s), "(which does not fill it)");
	while (kept < 1000 && insnblk_shared_add(s, 0x3000 + kept, 256, big, INSNBLK_TEXT_MAX))
		kept++;
	cr_expect_eq(kept, INSNBLK_RING / (INSNBLK_TEXT_MAX + 16), "%u blocks of %u bytes", kept,
		     INSNBLK_TEXT_MAX);
	cr_expect(insnblk_shared_full(s));
	cr_expect(insnblk_shared_find(s, 0x3000, 256, &len) && len == INSNBLK_TEXT_MAX);
	cr_expect(insnblk_shared_find(s, 0x3000 + kept - 1, 256, &len));
	insnblk_shared_free(s);
	free(big);
}
