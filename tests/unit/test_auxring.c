// SPDX-License-Identifier: MIT
/* The drain engine against a producer that follows the kernel's rules. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auxring.h"
#include "producer.h"
#include "suitewatch.h"

SUITEWATCH(watchdog, 120)

TestSuite(auxring, .init = watchdog);

/* Read a whole fd back from its start. */
static uint8_t *slurp(int fd, uint64_t *len)
{
	struct stat st;
	uint8_t *b;

	cr_assert_eq(fstat(fd, &st), 0);
	*len = (uint64_t)st.st_size;
	b = malloc(*len + 1);
	cr_assert(b);
	cr_assert_eq(pread(fd, b, *len, 0), (ssize_t)*len);
	return b;
}

static uint64_t first_bad_byte(const uint8_t *b, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		if (b[i] != producer_byte(i))
			return i;
	return UINT64_MAX;
}

/* One recording against the producer: its fds, and what the drain returned. */
struct run {
	struct producer p;
	struct auxring r;
	int aux_fd, sb_fd, ret;
};

static void run_start(struct run *x, const struct producer_cfg *cfg, bool slow)
{
	x->aux_fd = memfd_create("aux", 0);
	x->sb_fd = memfd_create("sb", 0);
	cr_assert_eq(producer_init(&x->p, cfg), 0);
	producer_ring(&x->p, &x->r);
	producer_start(&x->p);
	x->ret = producer_consume(&x->p, &x->r, x->aux_fd, x->sb_fd, slow, NULL);
}

static void run_end(struct run *x)
{
	producer_free(&x->p);
	close(x->aux_fd);
	close(x->sb_fd);
}

/* The trace file holds every byte produced, each the right one. */
static void expect_trace_exact(struct run *x)
{
	uint64_t len;
	uint8_t *b = slurp(x->aux_fd, &len);

	cr_expect_eq(len, x->p.produced, "file %lu bytes, produced %lu", (unsigned long)len,
		     (unsigned long)x->p.produced);
	cr_expect_eq(x->r.stats.aux_bytes, len);
	cr_expect_eq(first_bad_byte(b, len), UINT64_MAX, "first wrong byte at %lu",
		     (unsigned long)first_bad_byte(b, len));
	free(b);
}

/* The sideband file is the producer's log, byte for byte. */
static void expect_sideband_exact(struct run *x)
{
	uint64_t len;
	uint8_t *b = slurp(x->sb_fd, &len);

	cr_expect_eq(len, x->p.log_len, "sideband %lu bytes, producer emitted %lu",
		     (unsigned long)len, (unsigned long)x->p.log_len);
	cr_expect_eq(memcmp(b, x->p.log, len < x->p.log_len ? len : x->p.log_len), 0);
	free(b);
}

/* The drain counted every AUX record the producer emitted; together they cover every byte. */
static void expect_aux_records_match(struct run *x)
{
	cr_expect_eq(x->r.stats.aux_records, x->p.aux_records);
	cr_expect_eq(x->r.stats.aux_record_bytes, x->p.produced, "AUX records cover every byte");
	cr_expect_eq(x->r.stats.truncated, x->p.truncated);
}

Test(auxring, full_trace_is_byte_exact_over_a_million_random_chunks)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 22, .aux_size = 1 << 16, .total = 300ull << 20,
		.chunk_min = 1, .chunk_max = 200, .wrap_every = 256, .seed = 12345,
	};
	struct run x;

	run_start(&x, &cfg, false);
	cr_assert_eq(x.ret, 0);
	cr_expect_gt(x.p.chunks, 1000000, "only %lu chunks", (unsigned long)x.p.chunks);
	expect_trace_exact(&x);
	expect_aux_records_match(&x);
	cr_expect_eq(x.r.stats.lost, x.p.lost_records);
	cr_expect_eq(x.p.lost_records, 0, "the data ring is large enough to lose nothing");
	run_end(&x);
}

Test(auxring, chunks_larger_than_half_the_ring_and_at_the_wrap_stay_exact)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 16, .aux_size = 1 << 15, .total = 64ull << 20,
		.chunk_min = (1 << 14) + 1, .chunk_max = (1 << 15) - 1, .wrap_every = 3, .seed = 7,
	};
	struct run x;

	run_start(&x, &cfg, false);
	cr_assert_eq(x.ret, 0);
	expect_trace_exact(&x);
	cr_expect_eq(x.r.stats.truncated, x.p.truncated, "consumer %lu, producer %lu",
		     (unsigned long)x.r.stats.truncated, (unsigned long)x.p.truncated);
	run_end(&x);
}

Test(auxring, truncation_is_counted_exactly_and_nothing_else_is_lost)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 20, .aux_size = 1 << 13, .total = 8ull << 20,
		.chunk_min = 64, .chunk_max = 3000, .seed = 99,
	};
	struct run x;

	run_start(&x, &cfg, true);
	cr_assert_eq(x.ret, 0);
	cr_expect_gt(x.p.truncated, 10, "the slow consumer should have caused truncations");
	cr_expect_eq(x.r.stats.truncated, x.p.truncated, "consumer %lu, producer %lu",
		     (unsigned long)x.r.stats.truncated, (unsigned long)x.p.truncated);
	cr_expect_eq(x.r.stats.lost, 0);
	expect_trace_exact(&x);
	run_end(&x);
}

Test(auxring, records_straddling_the_data_ring_wrap_pass_byte_exact)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 12, .aux_size = 1 << 16, .total = 16ull << 20,
		.chunk_min = 16, .chunk_max = 2000, .sideband_every = 2, .seed = 5,
		.keep_log = true,
	};
	struct run x;

	run_start(&x, &cfg, false);
	cr_assert_eq(x.ret, 0);
	expect_sideband_exact(&x);
	cr_expect_eq(x.r.stats.records, x.p.records + x.p.lost_records);
	cr_expect_eq(x.r.stats.lost, x.p.lost_records);
	cr_expect_eq(x.r.stats.lost_events, x.p.lost_sum);
	run_end(&x);
}

Test(auxring, lost_records_are_counted_with_what_they_dropped)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 12, .aux_size = 1 << 16, .total = 8ull << 20,
		.chunk_min = 16, .chunk_max = 64, .seed = 3, .keep_log = true,
	};
	struct run x;

	run_start(&x, &cfg, true);
	cr_assert_eq(x.ret, 0);
	cr_expect_gt(x.p.lost_records, 0, "a slow reader of a 4 KiB ring must lose records");
	cr_expect_eq(x.r.stats.lost, x.p.lost_records);
	cr_expect_eq(x.r.stats.lost_events, x.p.lost_sum);
	expect_sideband_exact(&x);
	expect_trace_exact(&x);
	run_end(&x);
}

/*
 * Take a snapshot while the producer is stopped: exactly the bytes produced
 * since the previous one (the newest buffer's worth after a lap), so the
 * windows, laid end to end, are the stream with no byte twice.
 */
static void check_snapshot(struct producer *p, struct auxring *r, uint64_t *prev)
{
	int fd = memfd_create("snap", 0);
	uint64_t len, fresh, want, start;
	struct auxring_window w;
	uint8_t *b;

	producer_pause(p);
	cr_assert_eq(auxring_snapshot(r, fd, UINT64_MAX, &w), 0);
	fresh = p->produced - *prev;
	want = fresh < p->cfg.aux_size ? fresh : p->cfg.aux_size;
	start = p->produced - want;
	b = slurp(fd, &len);
	cr_expect_eq(len, want, "window of %lu bytes, expected %lu (%lu new, produced %lu)",
		     (unsigned long)len, (unsigned long)want, (unsigned long)fresh,
		     (unsigned long)p->produced);
	cr_expect_eq(w.bytes, len);
	for (uint64_t i = 0; i < len && i < want; i++) {
		if (b[i] != producer_byte(start + i)) {
			cr_expect_fail("snapshot byte %lu is wrong (produced %lu)",
				       (unsigned long)i, (unsigned long)p->produced);
			break;
		}
	}
	cr_expect_eq(w.wrapped, fresh >= p->cfg.aux_size,
		     "wrapped says %d after %lu new bytes in a %lu-byte buffer", w.wrapped,
		     (unsigned long)fresh, (unsigned long)p->cfg.aux_size);
	*prev = p->produced;
	free(b);
	close(fd);
	producer_resume(p);
}

Test(auxring, snapshot_windows_are_exact_before_and_after_a_wrap_with_no_byte_twice)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 16, .aux_size = 1 << 16, .overwrite = true, .total = 1ull << 30,
		.chunk_min = 100, .chunk_max = 900, .rate = 16ull << 20, .seed = 11,
	};
	/* New bytes before each snapshot: short ones, across the wrap, laps. */
	static const uint64_t gaps[] = { 20000, 30000, 40000, 300000, 5000, 60000, 70000, 9000 };
	uint64_t prev = 0;
	struct producer p;
	struct auxring r;

	cr_assert_eq(producer_init(&p, &cfg), 0);
	producer_ring(&p, &r);
	producer_start(&p);
	for (size_t i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++) {
		uint64_t target = prev + gaps[i];

		while (__atomic_load_n(&p.produced, __ATOMIC_ACQUIRE) < target)
			sched_yield();
		check_snapshot(&p, &r, &prev);
	}
	cr_expect_eq(r.stats.snapshots, 8);
	__atomic_store_n(&p.stop, 1, __ATOMIC_RELEASE);
	producer_join(&p);
	/* One PERF_RECORD_AUX with OVERWRITE per stop, as intel_pt. */
	auxring_read_data(&r, memfd_create("sb", 0));
	cr_expect_eq(r.stats.overwrite, 8);
	auxring_unmap(&r);
	producer_free(&p);
}

/* Run @fn in a child (it may change mounts or limits); its exit status. */
static int in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(fn());
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/*
 * A full disk: a 1 MiB tmpfs in a private mount namespace (needs root, as CI
 * is). The drain must stop with ENOSPC, the file keep every byte the stats
 * count, and the sideband file end on a whole record.
 */
static int full_disk_child(void)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 16, .aux_size = 1 << 16, .total = 8ull << 20,
		.chunk_min = 100, .chunk_max = 5000, .sideband_every = 1, .seed = 21,
	};
	struct producer p;
	struct auxring r;
	int aux_fd, sb_fd, ret;
	uint64_t alen, slen, off;
	uint8_t *b;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 10;
	if (mount("ptc-full", "/mnt", "tmpfs", 0, "size=1m"))
		return 11;
	aux_fd = open("/mnt/cpu0.pt", O_RDWR | O_CREAT | O_TRUNC, 0644);
	sb_fd = open("/mnt/cpu0.pevent", O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (aux_fd < 0 || sb_fd < 0 || producer_init(&p, &cfg))
		return 12;
	producer_ring(&p, &r);
	producer_start(&p);
	ret = producer_consume(&p, &r, aux_fd, sb_fd, false, NULL);
	if (ret != -ENOSPC)
		return 13;
	b = slurp(aux_fd, &alen);
	if (alen != r.stats.aux_bytes || first_bad_byte(b, alen) != UINT64_MAX || alen < 1000)
		return 14;
	free(b);
	b = slurp(sb_fd, &slen);
	for (off = 0; off + 8 <= slen; off += ((struct perf_event_header *)(b + off))->size)
		if (((struct perf_event_header *)(b + off))->size < 8)
			return 15;
	if (off != slen || slen != r.stats.sideband_bytes)
		return 16;
	free(b);
	producer_free(&p);
	return 0;
}

Test(auxring, a_full_disk_stops_cleanly_and_keeps_every_counted_byte)
{
	int st;

	if (geteuid() != 0)
		cr_skip_test("needs root to mount a small tmpfs (CI runs as root)");
	st = in_child(full_disk_child);
	cr_expect_eq(st, 0, "full-disk check %d failed (10-12 setup, 13 no ENOSPC, "
		     "14 trace bytes, 15-16 sideband records)", st);
}

Test(auxring, batched_sideband_counts_at_once_and_writes_later)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *base = aligned_alloc((size_t)pg, (size_t)pg * 2), aux[4096];
	struct perf_event_mmap_page *pc = (void *)base;
	struct perf_event_header h = { .type = PERF_RECORD_AUX, .size = 64 };
	uint64_t body[3] = { 0, 100, PERF_AUX_FLAG_TRUNCATED }, len;
	int fd = memfd_create("sb", 0);
	struct auxring r;
	uint8_t *b;

	memset(base, 0, (size_t)pg * 2);
	memcpy(base + pg, &h, 8);
	memcpy(base + pg + 8, body, sizeof(body));
	pc->data_head = 64;
	auxring_attach(&r, base, (uint64_t)pg, aux, sizeof(aux), false);
	cr_assert_eq(auxring_read_data_batched(&r, fd, 1024), 0);
	cr_expect_eq(r.stats.truncated, 1, "a TRUNCATED is seen at once, written or not");
	cr_expect_eq(r.stats.sideband_bytes, 0);
	cr_expect_eq(pc->data_tail, 0, "nothing written, nothing released");
	cr_assert_eq(auxring_read_data_batched(&r, fd, 1024), 0);
	cr_expect_eq(r.stats.truncated, 1, "counted once");
	cr_assert_eq(auxring_read_data(&r, fd), 0);
	b = slurp(fd, &len);
	cr_expect_eq(len, 64);
	cr_expect_eq(r.stats.sideband_bytes, 64);
	cr_expect_eq(pc->data_tail, 64);
	cr_expect_eq(r.stats.truncated, 1);
	free(b);
	free(base);
	close(fd);
}

/* An AUX area by hand (8 KiB unless @size), bytes producer_byte(ring offset), [tail, head) pending. */
static void hand_ring_size(struct auxring *r, uint8_t *base, uint8_t *aux, uint64_t size,
			   uint64_t tail, uint64_t head)
{
	long pg = sysconf(_SC_PAGESIZE);

	memset(base, 0, (size_t)pg * 2);
	for (uint64_t i = 0; i < size; i++)
		aux[i] = producer_byte(i);
	auxring_attach(r, base, (uint64_t)pg, aux, size, false);
	r->pc->aux_tail = tail;
	r->pc->aux_head = head;
}

static void hand_ring(struct auxring *r, uint8_t *base, uint8_t *aux, uint64_t tail,
		      uint64_t head)
{
	hand_ring_size(r, base, aux, 8192, tail, head);
}

/* The file's bytes are the ring's from absolute offset @from on. */
static bool file_is_ring(int fd, uint64_t from, uint64_t len)
{
	uint64_t n;
	uint8_t *b = slurp(fd, &n);
	bool ok = n == len;

	for (uint64_t i = 0; ok && i < n; i++)
		ok = b[i] == producer_byte((from + i) & 8191);
	free(b);
	return ok;
}

Test(auxring, drain_max_frees_at_most_that_much_and_the_rest_follows)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *base = aligned_alloc((size_t)pg, (size_t)pg * 2), *aux = malloc(8192);
	int fd = memfd_create("aux", 0);
	struct auxring r;

	cr_assert_eq(pg, 4096, "the figures below assume 4 KiB pages");
	hand_ring(&r, base, aux, 6000, 14000);	/* 2192 bytes before the wrap, 5808 after */
	cr_assert_eq(auxring_drain_aux_max(&r, fd, 5000), 0);
	cr_expect_eq(r.pc->aux_tail, 10096, "room for the hardware: max, down to a page of the file");
	cr_expect_eq(r.stats.aux_bytes, 4096);
	cr_assert_eq(auxring_drain_aux(&r, fd), 0);
	cr_expect_eq(r.pc->aux_tail, 14000);
	cr_expect(file_is_ring(fd, 6000, 8000), "both pieces, in order, across the wrap");
	cr_assert_eq(auxring_drain_aux_max(&r, fd, 100), 0, "nothing pending: nothing to do");
	cr_expect_eq(r.pc->aux_tail, 14000);
	free(aux);
	free(base);
	close(fd);
}

/*
 * A write cut short inside the piece after the wrap (a file size limit, as
 * a quota would): the file keeps exactly what reached it, aux_tail covers
 * exactly that, and the error is returned.
 */
static int short_write_child(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *base = aligned_alloc((size_t)pg, (size_t)pg * 2), *aux = malloc(8192);
	struct rlimit lim = { 3000, 3000 };
	int fd = memfd_create("aux", 0);
	struct auxring r;

	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &lim))
		return 10;
	hand_ring(&r, base, aux, 6000, 10000);
	if (auxring_drain_aux(&r, fd) != -EFBIG)
		return 11;
	if (r.pc->aux_tail != 9000 || r.stats.aux_bytes != 3000)
		return 12;
	if (!file_is_ring(fd, 6000, 3000))
		return 13;
	return 0;
}

Test(auxring, a_short_write_across_the_wrap_releases_only_what_reached_the_file)
{
	int st = in_child(short_write_child);

	cr_expect_eq(st, 0, "short-write check %d failed (10 setup, 11 no EFBIG, "
		     "12 tail or count, 13 file bytes)", st);
}

Test(auxring, while_tracing_writes_end_on_a_page_of_the_file)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint8_t *base = aligned_alloc(pg, pg * 2), *aux = malloc(8192);
	int fd = memfd_create("aux", 0);
	struct auxring r;

	cr_assert_eq(pg, 4096, "the figures below assume 4 KiB pages");
	hand_ring(&r, base, aux, 6000, 14000);	/* 8000 pending, across the wrap */
	cr_assert_eq(auxring_drain_aux_max(&r, fd, UINT64_MAX), 0);
	cr_expect_eq(r.stats.aux_bytes, 4096, "the file ends on a page; the rest waits");
	cr_expect_eq(r.pc->aux_tail, 10096);
	cr_assert_eq(auxring_drain_aux_max(&r, fd, UINT64_MAX), 0);
	cr_expect_eq(r.stats.aux_bytes, 4096, "less than a page of the file: it waits");
	r.pc->aux_head = 18096;
	cr_assert_eq(auxring_drain_aux_max(&r, fd, UINT64_MAX), 0);
	cr_expect_eq(r.stats.aux_bytes, 8192);
	cr_assert_eq(auxring_drain_aux(&r, fd), 0);
	cr_expect_eq(r.stats.aux_bytes, 12096, "the final drain takes everything");
	cr_expect_eq(r.pc->aux_tail, 18096);
	cr_expect(file_is_ring(fd, 6000, 12096));
	free(aux);
	free(base);
	close(fd);
}

Test(auxring, a_one_page_ring_still_gets_room_while_tracing)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint8_t *base = aligned_alloc(pg, pg * 2), *aux = malloc(pg);
	int fd = memfd_create("aux", 0);
	struct auxring r;

	hand_ring_size(&r, base, aux, pg, 0, pg - 1);	/* full: CIRC_SPACE leaves one byte */
	cr_assert_eq(auxring_drain_aux_max(&r, fd, auxring_watermark(pg)), 0);
	cr_expect_eq(r.pc->aux_tail, pg - 1, "the hardware would wait forever for a page");
	free(aux);
	free(base);
	close(fd);
}

/* ---- intel_pt's PMIs, and stops the sideband could not report ---------- */

/*
 * Every PERF_RECORD_AUX in a sideband file: @fn(offset, size, flags, arg).
 * One assertion for the whole file: Criterion reports each one to its runner.
 */
static void each_aux_record(int fd, void (*fn)(const uint64_t *body, void *arg), void *arg)
{
	uint64_t len, off;
	uint8_t *b = slurp(fd, &len);

	for (off = 0; off + 8 <= len; off += ((struct perf_event_header *)(b + off))->size) {
		const struct perf_event_header *h = (const void *)(b + off);
		uint64_t body[3];

		if (h->size < 8)
			break;
		if (h->type != PERF_RECORD_AUX)
			continue;
		memcpy(body, b + off + 8, sizeof(body));
		fn(body, arg);
	}
	cr_expect_eq(off, len, "the sideband file breaks at %lu of %lu bytes", (unsigned long)off,
		     (unsigned long)len);
	free(b);
}

struct pmi_check {
	uint64_t region, records, unaligned, last_end;
};

static void check_pmi_record(const uint64_t *body, void *arg)
{
	struct pmi_check *c = arg;

	c->records++;
	c->unaligned += (body[0] + body[1]) % c->region != 0;
	c->last_end = body[0] + body[1];
}

Test(auxring, intel_pt_model_is_byte_exact_and_publishes_whole_regions)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 22, .aux_size = 1 << 16, .total = 200ull << 20,
		.chunk_min = 1, .chunk_max = 400, .wrap_every = 256, .seed = 4321,
		.region = 1 << 14,
	};
	struct pmi_check c = { .region = 1 << 14 };
	struct run x;

	run_start(&x, &cfg, false);
	cr_assert_eq(x.ret, 0);
	cr_expect_gt(x.p.chunks, 400000, "only %lu chunks", (unsigned long)x.p.chunks);
	expect_trace_exact(&x);
	expect_aux_records_match(&x);
	cr_expect_eq(x.r.stats.lost, 0);
	each_aux_record(x.sb_fd, check_pmi_record, &c);
	cr_expect_eq(c.records, x.p.aux_records);
	/* Only the event's final stop publishes inside a region. */
	cr_expect_leq(c.unaligned, 1, "%lu of %lu records end inside a region",
		      (unsigned long)c.unaligned, (unsigned long)c.records);
	cr_expect_eq(c.last_end, x.p.produced);
	run_end(&x);
}

Test(auxring, intel_pt_model_stops_at_region_boundaries_and_resumes)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 20, .aux_size = 1 << 15, .total = 16ull << 20,
		.chunk_min = 64, .chunk_max = 3000, .seed = 77, .region = 1 << 13,
	};
	struct pmi_check c = { .region = 1 << 13 };
	struct run x;

	run_start(&x, &cfg, true);
	cr_assert_eq(x.ret, 0);
	cr_expect_gt(x.p.truncated, 10, "the slow consumer should have stopped the hardware");
	cr_expect_eq(x.r.stats.truncated, x.p.truncated, "consumer %lu, producer %lu",
		     (unsigned long)x.r.stats.truncated, (unsigned long)x.p.truncated);
	cr_expect_eq(x.p.begin_fail, 0, "every restart had room");
	expect_trace_exact(&x);
	each_aux_record(x.sb_fd, check_pmi_record, &c);
	cr_expect_leq(c.unaligned, 1, "%lu stops or PMIs inside a region",
		      (unsigned long)c.unaligned);
	run_end(&x);
}

/*
 * Regions larger than the watermark (the core could not allocate them at
 * the watermark's order): the first restart after a full buffer finds less
 * than a region free, and intel_pt answers with a zero-size TRUNCATED
 * record. The drain takes that as a stop like any other, and the next
 * restart, with the rest written, succeeds.
 */
Test(auxring, a_restart_short_of_a_region_is_refused_and_the_drain_recovers)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 20, .aux_size = 1 << 15, .total = 16ull << 20,
		.chunk_min = 64, .chunk_max = 3000, .seed = 78, .region = 1 << 14,
		.watermark = 1 << 13,
	};
	struct run x;

	run_start(&x, &cfg, true);
	cr_assert_eq(x.ret, 0);
	cr_expect_gt(x.p.start_truncated, 0, "no restart was refused: the case is not covered");
	cr_expect_eq(x.r.stats.truncated, x.p.truncated);
	cr_expect_eq(x.p.begin_fail, 0);
	expect_trace_exact(&x);
	run_end(&x);
}

/*
 * The stop's record seen before its aux_head: perf_aux_output_end() writes
 * the record first, and a pass running in between finds aux_head a PMI
 * behind. Room counted from that head is room the hardware has already
 * filled; a restart into a full ring fails without a record (the event is
 * disabled) and nothing would restart it again.
 */
Test(auxring, a_stop_seen_before_its_aux_head_moved_still_restarts_with_room)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 20, .aux_size = 1 << 16, .total = 8ull << 20,
		.chunk_min = 4096, .chunk_max = 4096, .seed = 79, .region = 1 << 14,
		.head_lag_us = 1000,
	};
	struct run x;

	run_start(&x, &cfg, true);
	cr_assert_eq(x.ret, 0);
	cr_expect_gt(x.p.truncated, 20, "only %lu stops", (unsigned long)x.p.truncated);
	cr_expect_eq(x.p.begin_fail, 0, "%lu restarts found the ring full",
		     (unsigned long)x.p.begin_fail);
	cr_expect_eq(x.p.offered, cfg.total, "the producer stopped short");
	expect_trace_exact(&x);
	expect_aux_records_match(&x);
	run_end(&x);
}

/*
 * A data ring too small for the sideband: the kernel drops records, among
 * them TRUNCATED ones, and the hardware stops without a record saying so.
 * The drain must still restart it (waiting on wakeups, as poll() does, it
 * would otherwise wait forever) and keep every byte.
 */
static void dropped_truncated_case(uint64_t region, uint32_t seed)
{
	struct producer_cfg cfg = {
		.data_size = 1 << 12, .aux_size = 1 << 14, .total = 16ull << 20,
		.chunk_min = 16, .chunk_max = 256, .sideband_every = 2, .seed = seed,
		.region = region, .keep_log = true,
	};
	struct run x;

	run_start(&x, &cfg, true);
	cr_assert_eq(x.ret, 0);
	cr_expect_gt(x.p.dropped_truncated, 0, "no TRUNCATED record was dropped: not covered");
	cr_expect_gt(x.r.stats.data_full, 0);
	cr_expect_eq(x.r.stats.lost, x.p.lost_records);
	cr_expect_eq(x.r.stats.truncated, x.p.truncated - x.p.dropped_truncated);
	expect_trace_exact(&x);
	expect_sideband_exact(&x);
	cr_expect_eq(x.p.offered, cfg.total, "the producer stopped short");
	run_end(&x);
}

Test(auxring, the_hardware_is_restarted_after_a_stop_whose_record_was_dropped)
{
	dropped_truncated_case(0, 31);
}

Test(auxring, intel_pt_model_the_hardware_is_restarted_after_a_dropped_stop)
{
	dropped_truncated_case(1 << 12, 32);
}

/* A restart callback that notes how much trace had reached the file by then. */
struct restart_note {
	const struct auxring *r;
	int calls;
	uint64_t bytes_at_restart;
};

static void note_restart(void *arg)
{
	struct restart_note *n = arg;

	n->calls++;
	n->bytes_at_restart = n->r->stats.aux_bytes;
}

/* A data ring of one page holding @used bytes of records, the first a PERF_RECORD_AUX. */
static void put_records(uint8_t *base, uint64_t used, uint64_t flags)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *pc = (void *)base;
	struct perf_event_header h = { .type = PERF_RECORD_AUX, .size = 64 };
	uint64_t body[3] = { 0, 100, flags };

	for (uint64_t off = 0; off < used; off += h.size) {
		h.size = (uint16_t)(used - off < 64 ? used - off : 64);
		memcpy(base + pg + off, &h, 8);
		memcpy(base + pg + off + 8, body, sizeof(body));
		h.type = PERF_RECORD_COMM;	/* only the first is an AUX record */
	}
	pc->data_head = used;
}

/* Make the first record say the hardware wrote [@off, @off + @size). */
static void set_aux_record(uint8_t *base, uint64_t off, uint64_t size)
{
	long pg = sysconf(_SC_PAGESIZE);

	memcpy(base + pg + 8, &off, 8);
	memcpy(base + pg + 16, &size, 8);
}

/* A hand-built 8 KiB ring with [@tail, @head) pending, and its two output files. */
struct hand {
	struct auxring r;
	uint8_t *base, *aux;
	int fd, sb;
};

static void hand_open(struct hand *h, uint64_t tail, uint64_t head)
{
	long pg = sysconf(_SC_PAGESIZE);

	h->base = aligned_alloc((size_t)pg, (size_t)pg * 2);
	h->aux = malloc(8192);
	h->fd = memfd_create("aux", 0);
	h->sb = memfd_create("sb", 0);
	cr_assert(h->base && h->aux && h->fd >= 0 && h->sb >= 0);
	hand_ring(&h->r, h->base, h->aux, tail, head);
}

static void hand_close(struct hand *h)
{
	h->r.pc = NULL;
	free(h->aux);
	free(h->base);
	close(h->fd);
	close(h->sb);
}

/* Run one pass over an 8 KiB AUX area with [@tail, @head) pending. */
static void pass_case(uint64_t tail, uint64_t head, uint64_t used, uint64_t flags,
		      struct restart_note *n, struct auxring *r)
{
	struct hand h;

	hand_open(&h, tail, head);
	put_records(h.base, used, flags);
	n->r = &h.r;
	cr_assert_eq(auxring_pass(&h.r, h.fd, h.sb, false, note_restart, n), 0);
	cr_expect(file_is_ring(h.fd, tail, h.r.stats.aux_bytes), "the file holds the ring's bytes");
	hand_close(&h);
	n->r = r;
	*r = h.r;
}

Test(auxring, after_a_stop_in_a_full_ring_the_pass_frees_a_watermark_then_restarts)
{
	struct restart_note n = { 0 };
	struct auxring r;

	cr_assert_eq(sysconf(_SC_PAGESIZE), 4096, "the figures below assume 4 KiB pages");
	/* 8 KiB full (intel_pt fills to the tail), watermark 4 KiB. */
	pass_case(8192, 16384, 64, PERF_AUX_FLAG_TRUNCATED, &n, &r);
	cr_expect_eq(n.calls, 1);
	cr_expect_eq(n.bytes_at_restart, 4096, "room for one region before the restart");
	cr_expect_eq(r.stats.aux_bytes, 8192, "then the rest");
	cr_expect_eq(r.stats.restarts, 1);
}

Test(auxring, after_a_stop_with_room_already_free_the_pass_restarts_first)
{
	struct restart_note n = { 0 };
	struct auxring r;

	/* 4 KiB pending of 8 KiB: a watermark is free already. */
	pass_case(8192, 12288, 64, PERF_AUX_FLAG_TRUNCATED, &n, &r);
	cr_expect_eq(n.calls, 1);
	cr_expect_eq(n.bytes_at_restart, 0, "nothing written before the restart");
	cr_expect_eq(r.stats.aux_bytes, 4096, "the pending bytes are written after it");
}

/* The kernel, late: aux_head moves to the stop's record end after a while. */
struct late_head {
	struct perf_event_mmap_page *pc;
	uint64_t head;
};

static void *publish_late(void *arg)
{
	struct late_head *l = arg;

	usleep(20000);
	__atomic_store_n(&l->pc->aux_head, l->head, __ATOMIC_RELEASE);
	return NULL;
}

Test(auxring, the_room_for_a_restart_counts_from_the_stops_record_not_an_older_aux_head)
{
	struct restart_note n = { 0 };
	struct late_head l;
	struct hand h;
	pthread_t th;

	cr_assert_eq(sysconf(_SC_PAGESIZE), 4096, "the figures below assume 4 KiB pages");
	/* The record says the ring is full; aux_head still shows it empty. */
	hand_open(&h, 8192, 8192);
	put_records(h.base, 64, PERF_AUX_FLAG_TRUNCATED);
	set_aux_record(h.base, 8192, 8192);
	l.pc = h.r.pc;
	l.head = 16384;
	n.r = &h.r;
	/* The publisher's 20 ms can become more than the default wait on a loaded machine. */
	h.r.head_wait_ns = 10000000000ull;
	cr_assert_eq(pthread_create(&th, NULL, publish_late, &l), 0);
	cr_assert_eq(auxring_pass(&h.r, h.fd, h.sb, false, note_restart, &n), 0);
	pthread_join(th, NULL);
	cr_expect_eq(n.calls, 1);
	cr_expect_eq(n.bytes_at_restart, 4096, "a watermark freed behind the record's end");
	cr_expect_eq(h.r.stats.aux_bytes, 8192);
	cr_expect(file_is_ring(h.fd, 8192, 8192));
	hand_close(&h);
}

Test(auxring, without_a_stop_the_pass_does_not_restart)
{
	struct restart_note n = { 0 };
	struct auxring r;

	pass_case(8192, 16384, 64, 0, &n, &r);
	cr_expect_eq(n.calls, 0);
	cr_expect_eq(r.stats.aux_bytes, 8192);
	cr_expect_eq(r.stats.data_full, 0);
}

Test(auxring, a_data_ring_too_full_for_an_aux_record_counts_as_a_stop)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct restart_note n = { 0 };
	struct auxring r;

	/* Room for exactly the largest AUX record: the kernel needs one byte more. */
	pass_case(8192, 12288, (uint64_t)pg - AUXRING_AUX_RECORD_MAX, 0, &n, &r);
	cr_expect_eq(r.stats.data_full, 1);
	cr_expect_eq(n.calls, 1, "a TRUNCATED record may have been dropped: restart");
	/* 8 bytes more room: any AUX record fits, nothing can have been dropped. */
	memset(&n, 0, sizeof(n));
	pass_case(8192, 12288, (uint64_t)pg - AUXRING_AUX_RECORD_MAX - 8, 0, &n, &r);
	cr_expect_eq(r.stats.data_full, 0);
	cr_expect_eq(n.calls, 0);
}

Test(auxring, the_final_pass_writes_everything_and_restarts_nothing)
{
	struct hand h;

	hand_open(&h, 6000, 14000);
	put_records(h.base, 64, PERF_AUX_FLAG_TRUNCATED);
	cr_assert_eq(auxring_pass(&h.r, h.fd, h.sb, true, NULL, NULL), 0);
	cr_expect_eq(h.r.stats.aux_bytes, 8000, "not only whole pages: every byte");
	cr_expect_eq(h.r.stats.sideband_bytes, 64, "the sideband is not held back for a batch");
	cr_expect_eq(h.r.stats.restarts, 0);
	cr_expect(file_is_ring(h.fd, 6000, 8000));
	hand_close(&h);
}
