// SPDX-License-Identifier: MIT
/*
 * Snapshot windows step by step: a buffer written as intel_pt's snapshot
 * mode does (the head an offset inside it, moved only at a stop), with the
 * exact number of bytes between snapshots chosen by the test, including the
 * cases a reader gets wrong: nothing new, exactly a lap, a lap and a bit,
 * nearly a lap (the head inside the reference), a window cut by SIZE, and a
 * head that only grows.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auxring.h"
#include "producer.h"

struct hw {
	uint8_t *base;		/* control page + one data page */
	uint8_t *aux;
	uint64_t size;
	uint64_t written;	/* absolute: the stream's next byte */
	bool grows;		/* aux_head counts bytes instead of wrapping */
	struct auxring r;
};

static void hw_init(struct hw *h, uint64_t size, bool grows)
{
	long pg = sysconf(_SC_PAGESIZE);

	memset(h, 0, sizeof(*h));
	h->base = calloc(2, (size_t)pg);
	h->aux = calloc(1, size);	/* zeroed, as the kernel allocates it */
	cr_assert(h->base && h->aux);
	h->size = size;
	h->grows = grows;
	auxring_attach(&h->r, h->base, (uint64_t)pg, h->aux, size, true);
}

static void hw_free(struct hw *h)
{
	auxring_unmap(&h->r);
	free(h->base);
	free(h->aux);
}

/* The hardware writes @n bytes of the stream, then stops (publishing the head). */
static void hw_write(struct hw *h, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++, h->written++)
		h->aux[h->written & (h->size - 1)] = producer_byte(h->written);
	h->r.pc->aux_head = h->grows ? h->written : h->written & (h->size - 1);
}

/* A snapshot of at most @max bytes: it must be the stream's bytes [@from, written). */
static struct auxring_window snap(struct hw *h, uint64_t max, uint64_t from)
{
	int fd = memfd_create("win", 0);
	struct auxring_window w;
	struct stat st;
	uint8_t *b;

	cr_assert_eq(auxring_snapshot(&h->r, fd, max, &w), 0);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_expect_eq((uint64_t)st.st_size, h->written - from, "window of %lld bytes, expected "
		     "%llu", (long long)st.st_size, (unsigned long long)(h->written - from));
	cr_expect_eq(w.bytes, (uint64_t)st.st_size);
	b = malloc((size_t)st.st_size + 1);
	cr_assert_eq(pread(fd, b, (size_t)st.st_size, 0), st.st_size);
	for (off_t i = 0; i < st.st_size; i++) {
		if (b[i] != producer_byte(from + (uint64_t)i)) {
			cr_expect_fail("byte %lld of the window is not the stream's byte %llu",
				       (long long)i, (unsigned long long)(from + (uint64_t)i));
			break;
		}
	}
	free(b);
	close(fd);
	return w;
}

#define SZ (64u << 10)

Test(snapshot_window, first_windows_before_the_wrap_continue_each_other)
{
	struct hw h;
	struct auxring_window w;

	hw_init(&h, SZ, false);
	hw_write(&h, 1000);
	w = snap(&h, UINT64_MAX, 0);
	cr_expect(!w.wrapped);
	hw_write(&h, 20000);
	w = snap(&h, UINT64_MAX, 1000);
	cr_expect(!w.wrapped);
	/* Across the end of the buffer: two pieces, still nothing twice. */
	hw_write(&h, SZ - 5000);
	w = snap(&h, UINT64_MAX, 21000);
	cr_expect(!w.wrapped);
	cr_expect_eq(h.r.stats.snapshots, 3);
	hw_free(&h);
}

Test(snapshot_window, nothing_new_is_an_empty_window)
{
	struct hw h;
	struct auxring_window w;

	hw_init(&h, SZ, false);
	w = snap(&h, UINT64_MAX, 0);
	cr_expect(!w.wrapped);
	hw_write(&h, 3000);
	snap(&h, UINT64_MAX, 0);
	w = snap(&h, UINT64_MAX, 3000);
	cr_expect_eq(w.bytes, 0);
	cr_expect(!w.wrapped);
	hw_free(&h);
}

Test(snapshot_window, a_lap_gives_the_whole_buffer_and_says_wrapped)
{
	struct hw h;
	struct auxring_window w;

	hw_init(&h, SZ, false);
	/* First snapshot after more than a buffer: the zeroed buffer's end is written. */
	hw_write(&h, SZ + 777);
	w = snap(&h, UINT64_MAX, h.written - SZ);
	cr_expect(w.wrapped && w.lapped);
	/* Exactly a lap: the head is where it was, yet everything is new. */
	hw_write(&h, SZ);
	w = snap(&h, UINT64_MAX, h.written - SZ);
	cr_expect(w.wrapped);
	/* Three laps and a bit. */
	hw_write(&h, 3 * SZ + 123);
	w = snap(&h, UINT64_MAX, h.written - SZ);
	cr_expect(w.wrapped);
	/* Then short again: continues the lap's window. */
	hw_write(&h, 4096);
	w = snap(&h, UINT64_MAX, h.written - 4096);
	cr_expect(!w.wrapped);
	hw_free(&h);
}

/* The new head lands inside the reference: only the part not written over is compared. */
Test(snapshot_window, nearly_a_lap_is_told_from_a_lap)
{
	static const uint64_t near[] = { SZ - 1, SZ - 10, SZ - 4096, SZ - AUXRING_SNAP_REF_MAX / 2,
					 SZ / 2 + 1 };
	struct hw h;

	hw_init(&h, SZ, false);
	hw_write(&h, 5000);
	snap(&h, UINT64_MAX, 0);
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
		uint64_t from = h.written;
		struct auxring_window w;

		hw_write(&h, near[i]);
		w = snap(&h, UINT64_MAX, from);
		cr_expect(!w.wrapped, "%llu bytes in a %u-byte buffer are not a lap",
			  (unsigned long long)near[i], SZ);
		hw_write(&h, SZ + near[i]);
		w = snap(&h, UINT64_MAX, h.written - SZ);
		cr_expect(w.lapped, "%llu bytes are a lap", (unsigned long long)(SZ + near[i]));
	}
	hw_free(&h);
}

Test(snapshot_window, size_keeps_the_newest_bytes_and_says_so)
{
	struct hw h;
	struct auxring_window w;

	hw_init(&h, SZ, false);
	hw_write(&h, 10000);
	w = snap(&h, 4096, 10000 - 4096);
	cr_expect(w.wrapped && !w.lapped, "older new bytes were left out");
	hw_write(&h, 3000);
	w = snap(&h, 4096, 10000);
	cr_expect(!w.wrapped);
	hw_write(&h, 2 * SZ);
	w = snap(&h, 4096, h.written - 4096);
	cr_expect(w.wrapped && w.lapped);
	hw_free(&h);
}

Test(snapshot_window, a_head_that_grows_counts_exactly)
{
	struct hw h;
	struct auxring_window w;

	hw_init(&h, SZ, true);
	hw_write(&h, 40000);
	w = snap(&h, UINT64_MAX, 0);
	cr_expect(!w.wrapped);
	hw_write(&h, 40000);
	w = snap(&h, UINT64_MAX, 40000);
	cr_expect(!w.wrapped);
	/* Exactly a buffer: all of it, nothing lost. */
	hw_write(&h, SZ);
	w = snap(&h, UINT64_MAX, 80000);
	cr_expect(!w.wrapped);
	hw_write(&h, SZ + 1);
	w = snap(&h, UINT64_MAX, h.written - SZ);
	cr_expect(w.wrapped && w.lapped);
	hw_free(&h);
}

/* The smallest AUX area perf allows in snapshot mode: the reference is half of it. */
Test(snapshot_window, one_page_buffer)
{
	struct hw h;
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	hw_init(&h, pg, false);
	for (uint64_t n = 1; n < 3 * pg; n = n * 3 + 7) {
		uint64_t from = h.written, keep;
		struct auxring_window w;

		hw_write(&h, n);
		keep = n < pg ? from : h.written - pg;
		w = snap(&h, UINT64_MAX, keep);
		cr_expect_eq(w.lapped, n >= pg, "%llu bytes in a %llu-byte buffer",
			     (unsigned long long)n, (unsigned long long)pg);
	}
	hw_free(&h);
}
