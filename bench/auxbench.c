// SPDX-License-Identifier: MIT
/*
 * auxbench DIR_TMPFS DIR_DISK [MiB]: how fast the AUX drain (auxring_pass(),
 * the record loop's own code) moves bytes, against the one-copy limit (the
 * run's bytes written by a plain write() loop from an ordinary buffer), for
 * several ring sizes, to tmpfs and to the disk; beside it the same loop from
 * a cache-resident buffer (hot_run) and the cross-core limit (crosscore_run);
 * and the highest producer rate a 4 MiB ring sustains with zero loss. The
 * producer plays intel_pt (tests/lib/producer.h). Every run writes a new
 * file, as a recording does.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "auxring.h"
#include "producer.h"

#define MiB (1ull << 20)
#define RUNS 9	/* per figure; the median is printed (this shared VM moves by ~10%) */

static double now(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

struct result {
	double wall, cpu;	/* seconds: the consumer's wall and CPU time */
	double gap;		/* drain: the longest time between two passes of the loop */
	uint64_t bytes, truncated;
};

/*
 * The record loop on one ring against a producer at @rate (0: as fast as it
 * goes): a pass after each wakeup, then the final pass. @generic: the
 * producer publishes every chunk at once (as ptsim) instead of at
 * intel_pt's PMIs. With a rate, the longest time between two passes is
 * measured too (not otherwise: the timing itself would be in the figures).
 */
static int drain_run(const char *dir, uint64_t aux, uint64_t total, uint64_t rate, bool generic,
		     struct result *res)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 20, .aux_size = aux, .total = total,
		.chunk_min = 4096, .chunk_max = 4096, .rate = rate, .fast_fill = true,
		.region = generic ? 0 : auxring_watermark(aux),
	};
	char path[4200], sbpath[4200];
	struct producer p;
	struct auxring r;
	uint64_t gap_ns = 0;
	double w0, c0;
	int fd, sb, ret;

	snprintf(path, sizeof(path), "%s/bench.pt", dir);
	snprintf(sbpath, sizeof(sbpath), "%s/bench.pevent", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	sb = open(sbpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || sb < 0 || producer_init(&p, &cfg)) {
		perror(path);
		return -1;
	}
	producer_ring(&p, &r);
	w0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_THREAD_CPUTIME_ID);
	producer_start(&p);
	ret = producer_consume(&p, &r, fd, sb, false, rate ? &gap_ns : NULL);
	res->cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
	res->wall = now(CLOCK_MONOTONIC) - w0;
	res->bytes = r.stats.aux_bytes;
	res->gap = gap_ns / 1e9;
	res->truncated = r.stats.truncated + p.begin_fail;
	producer_free(&p);
	close(fd);
	close(sb);
	unlink(path);
	unlink(sbpath);
	if (ret)
		fprintf(stderr, "auxbench: writing %s: %s\n", path, strerror(-ret));
	return ret ? -1 : 0;
}

/*
 * The plain write() loop: @total bytes from the ordinary buffer @buf of
 * @size bytes (read round again when it is shorter), in pieces of @piece.
 */
static int write_loop(const char *dir, const uint8_t *buf, uint64_t size, uint64_t piece,
		      uint64_t total, struct result *res)
{
	uint64_t done = 0;
	char path[4200];
	double w0, c0;
	int fd;

	snprintf(path, sizeof(path), "%s/baseline.pt", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		return -1;
	}
	w0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_THREAD_CPUTIME_ID);
	while (done < total) {
		uint64_t off = done % size, n = piece - off % piece;
		ssize_t w;

		if (n > size - off)
			n = size - off;
		if (n > total - done)
			n = total - done;
		w = write(fd, buf + off, n);
		if (w <= 0) {
			perror("write");
			break;
		}
		done += (uint64_t)w;
	}
	res->cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
	res->wall = now(CLOCK_MONOTONIC) - w0;
	res->bytes = done;
	close(fd);
	unlink(path);
	return 0;
}

/*
 * The one-copy limit: the run's bytes written by that loop from one
 * ordinary buffer that holds them all, in pieces of a quarter ring. At the
 * run's size, most of them come from memory, where PT's output puts them.
 */
static int baseline_run(const char *dir, const uint8_t *run_bytes, uint64_t aux, uint64_t total,
			struct result *res)
{
	return write_loop(dir, run_bytes, total, auxring_watermark(aux), total, res);
}

/*
 * The same loop from a buffer of the ring's size, read round and round: at
 * these sizes it stays in the writing core's caches, which is where no
 * consumer of PT output finds its bytes. The bench shows it beside the
 * baseline, for what a copy from the cache would be.
 */
static int hot_run(const char *dir, uint64_t aux, uint64_t total, struct result *res)
{
	uint8_t *buf = malloc(aux);
	int ret;

	if (!buf) {
		perror("malloc");
		return -1;
	}
	for (uint64_t i = 0; i < aux; i++)
		buf[i] = producer_byte(i);
	ret = write_loop(dir, buf, aux, auxring_watermark(aux), total, res);
	free(buf);
	return ret;
}

/*
 * The cross-core limit: the same write() loop, but from a ring another
 * thread fills 4 KiB at a time as room appears, with no perf protocol (no
 * records, no truncation). The filler stores as PT does, around the caches
 * (producer_store_wc()), and its stores compete with the reads for memory
 * as PT's do: reading trace bytes from memory while they are written, with
 * nothing else.
 */
struct xring {
	uint8_t *buf;
	uint64_t size, total, head, tail;
};

static void *xfill(void *arg)
{
	struct xring *x = arg;
	uint8_t piece[4096];

	for (size_t i = 0; i < sizeof(piece); i++)
		piece[i] = producer_byte(i);
	for (uint64_t h = 0; h < x->total;) {
		if (h + sizeof(piece) - __atomic_load_n(&x->tail, __ATOMIC_ACQUIRE) > x->size) {
			sched_yield();
			continue;
		}
		producer_store_wc(x->buf + h % x->size, piece, sizeof(piece));
		h += sizeof(piece);
		producer_fence();
		__atomic_store_n(&x->head, h, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * vmsplice() the bytes into a pipe, splice() the pipe into the file: the
 * kernel still copies once (into the page cache), after pinning the pages.
 */
static ssize_t splice_out(int fd, int pipe[2], uint8_t *p, uint64_t n)
{
	struct iovec v = { .iov_base = p, .iov_len = n < (1 << 20) ? n : (1 << 20) };
	ssize_t in = vmsplice(pipe[1], &v, 1, 0), out = 0;

	while (in > 0 && out < in) {
		ssize_t k = splice(pipe[0], NULL, fd, NULL, (size_t)(in - out), SPLICE_F_MOVE);

		if (k <= 0)
			return -1;
		out += k;
	}
	return in;
}

static int crosscore_run(const char *dir, uint64_t aux, uint64_t total, bool use_splice,
			 struct result *res)
{
	struct xring x = { .buf = aligned_alloc(4096, aux), .size = aux, .total = total };
	uint64_t t = 0;
	char path[4200];
	pthread_t th;
	double w0, c0;
	int fd, pp[2] = { -1, -1 };

	snprintf(path, sizeof(path), "%s/crosscore.pt", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || !x.buf || (use_splice && (pipe(pp) || fcntl(pp[1], F_SETPIPE_SZ, 1 << 20) < 0))) {
		perror(path);
		if (fd >= 0)
			close(fd);
		free(x.buf);
		return -1;
	}
	memset(x.buf, 0, aux);
	w0 = now(CLOCK_MONOTONIC);
	c0 = now(CLOCK_THREAD_CPUTIME_ID);
	if (pthread_create(&th, NULL, xfill, &x))
		abort();
	while (t < total) {
		uint64_t h = __atomic_load_n(&x.head, __ATOMIC_ACQUIRE), n;
		ssize_t w;

		if (h - t < auxring_watermark(aux) && h < total) {
			sched_yield();
			continue;
		}
		n = h - t < aux - t % aux ? h - t : aux - t % aux;
		w = use_splice ? splice_out(fd, pp, x.buf + t % aux, n) :
				 write(fd, x.buf + t % aux, n);
		if (w <= 0) {
			perror(use_splice ? "vmsplice/splice" : "write");
			abort();
		}
		t += (uint64_t)w;
		__atomic_store_n(&x.tail, t, __ATOMIC_RELEASE);
	}
	pthread_join(th, NULL);
	res->cpu = now(CLOCK_THREAD_CPUTIME_ID) - c0;
	res->wall = now(CLOCK_MONOTONIC) - w0;
	res->bytes = t;
	close(fd);
	if (use_splice) {
		close(pp[0]);
		close(pp[1]);
	}
	unlink(path);
	free(x.buf);
	return 0;
}

static double gbps(const struct result *r)
{
	return r->bytes / r->wall / 1e9;
}

static double cpu_per_gb(const struct result *r)
{
	return r->cpu / (r->bytes / 1e9);
}

static int by_speed(const void *a, const void *b)
{
	double x = gbps(a), y = gbps(b);

	return x < y ? -1 : x > y;
}

/* The median of RUNS results, by speed. */
static struct result median(struct result *r)
{
	qsort(r, RUNS, sizeof(r[0]), by_speed);
	return r[RUNS / 2];
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One configuration's figures: the median run of each kind, and the ratios. */
struct figures {
	struct result drain, base, hot, cross;
	double ratio, ratio_min, ratio_max;	/* drain/base, the median and the spread */
	double hot_ratio, cross_ratio;		/* drain/hot and drain/cross, the medians */
};

/* The median of RUNS ratios @r, sorted in place (r[0] and r[RUNS - 1]: the range). */
static double median_ratio(double *r)
{
	qsort(r, RUNS, sizeof(r[0]), by_value);
	return r[RUNS / 2];
}

/*
 * RUNS rounds of runs (drain, baseline, hot, cross-core), interleaved so
 * that all of them see the same machine, and the ratios taken within each
 * round: this VM's stalls last longer than a run and slow a whole round,
 * which a ratio of medians taken apart would mix into the figure. One
 * untimed round comes first: a VM may back guest memory only when it is
 * first touched, and here it even takes freed memory back at once (free
 * page reporting), so a run that touches new memory measures the
 * hypervisor. A run is timed until its last write() returns: the disk's
 * writeback happens in the sync() before the next run, untimed, because
 * this VM's disk speed moves between runs by more than the drain's whole
 * cost, and it is the same for every writer.
 */
static int measure(const char *dir, const uint8_t *run_bytes, uint64_t aux, uint64_t total,
		   bool generic, struct figures *f)
{
	struct result d[RUNS], b[RUNS], h[RUNS], x[RUNS];
	double rb[RUNS], rh[RUNS], rx[RUNS];

	if (drain_run(dir, aux, total, 0, generic, &d[0]) ||
	    baseline_run(dir, run_bytes, aux, total, &b[0]) || hot_run(dir, aux, total, &h[0]) ||
	    crosscore_run(dir, aux, total, false, &x[0]))
		return -1;
	for (int i = 0; i < RUNS; i++) {
		sync();
		if (drain_run(dir, aux, total, 0, generic, &d[i]))
			return -1;
		sync();
		if (baseline_run(dir, run_bytes, aux, total, &b[i]))
			return -1;
		sync();
		if (hot_run(dir, aux, total, &h[i]))
			return -1;
		sync();
		if (crosscore_run(dir, aux, total, false, &x[i]))
			return -1;
		rb[i] = gbps(&d[i]) / gbps(&b[i]);
		rh[i] = gbps(&d[i]) / gbps(&h[i]);
		rx[i] = gbps(&d[i]) / gbps(&x[i]);
	}
	f->drain = median(d);
	f->base = median(b);
	f->hot = median(h);
	f->cross = median(x);
	f->ratio = median_ratio(rb);
	f->ratio_min = rb[0];
	f->ratio_max = rb[RUNS - 1];
	f->hot_ratio = median_ratio(rh);
	f->cross_ratio = median_ratio(rx);
	return 0;
}

static void print_figures(const char *target, uint64_t aux, const struct figures *f)
{
	printf("%-6s %6lluK | %5.2f %5.3f %5llu | %5.2f %5.3f | %4.2f %4.2f-%4.2f | %5.2f %4.2f |"
	       " %5.2f %4.2f\n", target, (unsigned long long)(aux >> 10), gbps(&f->drain),
	       cpu_per_gb(&f->drain), (unsigned long long)f->drain.truncated, gbps(&f->base),
	       cpu_per_gb(&f->base), f->ratio, f->ratio_min, f->ratio_max, gbps(&f->hot),
	       f->hot_ratio, gbps(&f->cross), f->cross_ratio);
}

/*
 * Another copy path, measured before anyone adopts it: vmsplice + splice
 * against write(), both from the cross-core ring (median of RUNS each).
 */
static void splice_vs_write(const char *dir, const char *name, uint64_t aux, uint64_t total)
{
	struct result w[RUNS], sp[RUNS], wm, spm;

	for (int i = 0; i < RUNS; i++) {
		sync();
		if (crosscore_run(dir, aux, total, false, &w[i]))
			return;
		sync();
		if (crosscore_run(dir, aux, total, true, &sp[i]))
			return;
	}
	wm = median(w);
	spm = median(sp);
	printf("%-6s %7lluK | write() %5.2f GB/s %6.3f CPU s/GB | vmsplice+splice %5.2f GB/s "
	       "%6.3f CPU s/GB | %5.2f\n", name, (unsigned long long)(aux >> 10), gbps(&wm),
	       cpu_per_gb(&wm), gbps(&spm), cpu_per_gb(&spm), gbps(&spm) / gbps(&wm));
}

/*
 * Highest producer rate a 4 MiB ring takes with zero loss (tmpfs, 0.5 s
 * runs): three runs per rate, and all three must lose nothing (a VM stalls).
 */
static void zero_loss_rate(const char *dir)
{
	uint64_t best = 0;

	for (uint64_t rate = 256 * MiB; rate <= 64ull * 1024 * MiB; rate = rate * 3 / 2) {
		int lossy = 0;
		double gap = 0;
		struct result warm;

		/* Untimed, to touch the memory this rate's files need (see measure()). */
		if (drain_run(dir, 4 * MiB, rate / 2, 0, false, &warm))
			return;
		for (int i = 0; i < 3; i++) {
			struct result r;

			if (drain_run(dir, 4 * MiB, rate / 2, rate, false, &r))
				return;
			lossy += r.truncated > 0;
			if (r.gap > gap)
				gap = r.gap;
		}
		printf("producer %5.2f GB/s into a 4 MiB ring (%.1f ms of room): losses in %d of 3"
		       " runs; the drain loop was away up to %.1f ms\n", rate / 1e9,
		       4.0 * MiB / rate * 1e3, lossy, gap * 1e3);
		if (lossy)
			break;
		best = rate;
	}
	printf("highest zero-loss producer rate at a 4 MiB ring: %.2f GB/s\n", best / 1e9);
}

/* Append " TARGET SIZEK" to the list @list of @len bytes. */
static void add_config(char *list, size_t len, const char *target, uint64_t aux)
{
	size_t used = strlen(list);

	snprintf(list + used, len - used, " %s %lluK", target, (unsigned long long)(aux >> 10));
}

int main(int argc, char **argv)
{
	/* perf's AUX defaults are 128 KiB (unprivileged) and 4 MiB (root). */
	static const uint64_t sizes[] = { 64 << 10, 128 << 10, 1 * MiB, 4 * MiB, 16 * MiB };
	const char *dirs[2], *names[2] = { "tmpfs", "disk" };
	uint64_t total = argc > 3 ? strtoull(argv[3], NULL, 0) * MiB : 256 * MiB;
	char missed[256] = "", hot_missed[256] = "";
	uint8_t *run_bytes;
	int ret = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: auxbench TMPFS_DIR DISK_DIR [MiB]\n");
		return 2;
	}
	dirs[0] = argv[1];
	dirs[1] = argv[2];
	/* The baseline's buffer: a byte for every byte of the run. */
	run_bytes = malloc(total);
	if (!run_bytes) {
		perror("malloc");
		return 1;
	}
	for (uint64_t i = 0; i < total; i++)
		run_bytes[i] = producer_byte(i);
	printf("AUX drain vs the one-copy baseline (the run's bytes written by a write() loop from"
	       " an ordinary buffer\nthat holds them all), %llu MiB per run, %d runs of each\n",
	       (unsigned long long)(total / MiB), RUNS);
	printf("producer: intel_pt's PMIs (aux_head moves a watermark region at a time),"
	       " write-combining stores as PT's output\n");
	printf("hot: the same loop from a buffer of the ring's size, which stays in this core's"
	       " caches\n");
	printf("cross: the same loop from a ring another thread fills with the producer's stores,"
	       " no perf protocol\n");
	printf("GB/s and CPU s/GB: the median run; stops: its TRUNCATED records; ratios: drain/base,"
	       " drain/hot and\ndrain/cross within each round of runs, the median (and the range of"
	       " drain/base)\n");
	printf("%-6s %7s | %5s %5s %5s | %5s %5s | %14s | %5s %4s | %5s %4s\n", "target", "ring",
	       "drain", "CPU", "stops", "base", "CPU", "ratio (range)", "hot", "rat.", "cross",
	       "rat.");
	for (int d = 0; d < 2; d++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			struct figures f;

			if (measure(dirs[d], run_bytes, sizes[i], total, false, &f))
				goto out;
			print_figures(names[d], sizes[i], &f);
			if (f.ratio < 0.9)
				add_config(missed, sizeof(missed), names[d], sizes[i]);
			if (f.hot_ratio < 0.9)
				add_config(hot_missed, sizeof(hot_missed), names[d], sizes[i]);
		}
	}
	printf("drain/base below the 0.90 target at:%s\n", missed[0] ? missed : " none");
	printf("drain/hot below 0.90 at:%s\n", hot_missed[0] ? hot_missed : " none");
	printf("the same with a producer that publishes every 4 KiB chunk at once (as ptsim):\n");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i += 3) {
		struct figures f;

		if (measure(dirs[0], run_bytes, sizes[i], total, true, &f))
			goto out;
		print_figures(names[0], sizes[i], &f);
	}
	printf("vmsplice+splice against write(), from the cross-core ring:\n");
	for (int d = 0; d < 2; d++) {
		splice_vs_write(dirs[d], names[d], 64 << 10, total);
		splice_vs_write(dirs[d], names[d], 4 * MiB, total);
	}
	zero_loss_rate(dirs[0]);
	ret = 0;
out:
	free(run_bytes);
	return ret;
}
