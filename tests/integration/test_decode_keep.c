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
Test(decode_keep, a_threads_second_chunk_cuts_no_block_again)
{
	struct decode_keep *keep = NULL;
	struct decode_chunk a, b;
	struct walk w;
	uint64_t built;

	walk_open(&w, "ptc-keep");
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

/*
 * Two threads (-J 2's workers, each with its own keep) on one table of blocks
 * (fastflow_table, decode_run's with -J 2 on): every block is cut once for both (issue 25:
 * each worker cut the walk's blocks again, a tenth of -J 1's CPU time on --stats), one
 * thread after the other and both at once, and both count what one thread counts alone.
 */
Test(decode_keep, two_threads_on_a_shared_table_cut_each_block_once)
{
	struct decode_keep *alone = NULL;
	struct decode_chunk a, b;
	struct walk w;
	uint64_t built;

	walk_open(&w, "ptc-share");

	/* One thread alone, its own table: what every block costs once. */
	chunk_init(&a, &w);
	decode_one(&a, &alone);
	built = decode_keep_built(alone);
	cr_assert_gt(built, 1000, "%llu blocks", (unsigned long long)built);
	decode_keep_free(alone);

	for (int together = 0; together < 2; together++) {
		struct fastflow_table *t = fastflow_table_new();
		struct decode_keep *k1 = NULL, *k2 = NULL;
		struct job j1 = { &a, &k1 }, j2 = { &b, &k2 };
		const char *how = together ? "at once" : "one after the other";

		cr_assert(t);
		chunk_fini(&a);
		chunk_init(&a, &w);
		chunk_init(&b, &w);
		a.blocks = b.blocks = t;
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
		chunk_fini(&b);
		decode_keep_free(k1);
		decode_keep_free(k2);
		fastflow_table_free(t);
	}
	chunk_fini(&a);
	walk_close(&w);
}
