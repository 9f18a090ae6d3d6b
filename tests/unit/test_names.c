// SPDX-License-Identifier: MIT
/*
 * The names of call and return addresses (dec_names.h): the table is written a group at a
 * time before a lookup reads it, so that no insert copies the zero page (a TLB flush of
 * the other workers' CPUs each at -J 2), and a trace of few names writes few groups.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dec_names.h"
#include "error.h"
#include "memimage.h"

#define GROUP_BYTES ((size_t)sizeof(struct symname) << NAMES_GROUP_SHIFT)

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* Pages of [p, p + size) that are resident. */
static size_t resident(const void *p, size_t size)
{
	size_t page = page_size(), n = (size + page - 1) / page, r = 0;
	unsigned char *v = malloc(n);

	cr_assert(v);
	cr_assert_eq(mincore((void *)p, size, v), 0);
	for (size_t i = 0; i < n; i++)
		r += v[i] & 1;
	free(v);
	return r;
}

/*
 * Pages of [p, p + size) mapped and this process's own (pagemap: present, exclusively
 * mapped): a page written. The zero page, mapped by a read, is present but not exclusive.
 */
static size_t written(const void *p, size_t size)
{
	size_t page = page_size(), r = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	cr_assert(fd >= 0);
	for (uintptr_t a = (uintptr_t)p; a < (uintptr_t)p + size; a += page) {
		uint64_t e;

		cr_assert_eq(pread(fd, &e, sizeof(e), (off_t)(a / page * sizeof(e))),
			     (ssize_t)sizeof(e));
		r += (e >> 63 & 1) && (e >> 56 & 1);
	}
	close(fd);
	return r;
}

/* Faults a loaded machine may add to a thread's count (pages it took back meanwhile). */
#define FAULTS_NOT_OURS 4

static long faults(void)
{
	struct rusage u;

	cr_assert_eq(getrusage(RUSAGE_THREAD, &u), 0);
	return u.ru_minflt;
}

/* Whether transparent huge pages may back the table (then pages come 2 MiB at a time). */
static bool thp_always(void)
{
	char s[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (!fgets(s, sizeof(s), f))
			s[0] = '\0';
		fclose(f);
	}
	return strstr(s, "[always]");
}

static const char *lookup(struct dec *x, int isid, uint64_t ip)
{
	static char buf[1200];
	struct symname *used;
	bool plain;
	size_t n;

	return name_of(x, 1, isid, ip, NULL, &used, buf, sizeof(buf), &plain, &n);
}

Test(names, a_group_is_written_before_a_lookup_reads_it)
{
	size_t page = page_size(), table = ((size_t)1 << NAMES_BITS) * sizeof(struct symname);
	struct dec x;
	struct image_store *s;
	struct error e;
	char path[64], want[256];
	uint64_t end, ip, other = 0;
	size_t slot;
	long f0;
	int isid, fd;

	if (thp_always())
		cr_skip_test("transparent huge pages [always]: a group's pages are not 4 KiB each");
	strcpy(path, "/tmp/ptc-names-XXXXXX");
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	cr_assert_eq(image_store_new(&s, NULL, &e), 0);
	cr_assert_eq(image_add_raw(s, NULL, path, 0, 0, 0x401000, &e), 0);
	isid = image_base_find(s, 0x401000, &end);
	cr_assert(isid > 0);
	memset(&x, 0, sizeof(x));
	x.img = s;

	/* The first lookup makes the table: its group written whole, no other group. */
	ip = 0x401010;
	image_symbolize_pid(s, 1, isid, ip, want, sizeof(want));
	cr_assert_str_eq(lookup(&x, isid, ip), want);
	cr_assert(x.names);
	cr_assert_eq((uintptr_t)x.names % page, 0, "the table starts at a page");
	slot = sym_slot(1, isid, ip);
	cr_assert_eq(x.names_filled, (uint64_t)1 << (slot >> NAMES_GROUP_SHIFT));
	cr_assert_eq(written(&x.names[slot >> NAMES_GROUP_SHIFT << NAMES_GROUP_SHIFT],
			     GROUP_BYTES), GROUP_BYTES / page);
	cr_assert_eq(resident(x.names, table), GROUP_BYTES / page, "one group of 64");
	/*
	 * Again, a hit: no fault of its own. (A loaded machine may take back a page the
	 * lookup reads, the file's or the heap's, and fault it in again: a few are not ours.)
	 */
	f0 = faults();
	lookup(&x, isid, ip);
	cr_assert_leq(faults() - f0, FAULTS_NOT_OURS);

	/* An address of a group not written yet. */
	for (uint64_t a = 0x401000; a < 0x501000 && !other; a++)
		if (!names_written(&x, sym_slot(1, isid, a)))
			other = a;
	cr_assert(other);
	slot = sym_slot(1, isid, other);
	cr_assert_eq(resident(&x.names[slot >> NAMES_GROUP_SHIFT << NAMES_GROUP_SHIFT],
			      GROUP_BYTES), 0);
	image_symbolize_pid(s, 1, isid, other, want, sizeof(want));
	f0 = faults();
	cr_assert_str_eq(lookup(&x, isid, other), want);
#ifndef __SANITIZE_ADDRESS__
	/*
	 * A fault a page of the group as it is written, and no read before (the zero page
	 * mapped, then copied on the insert's write: one fault more, twice as many).
	 */
	cr_assert_geq(faults() - f0, (long)(GROUP_BYTES / page));
	cr_assert_leq(faults() - f0, (long)(GROUP_BYTES / page) + FAULTS_NOT_OURS);
#endif
	cr_assert_eq(written(&x.names[slot >> NAMES_GROUP_SHIFT << NAMES_GROUP_SHIFT],
			     GROUP_BYTES), GROUP_BYTES / page);
	cr_assert_eq(resident(x.names, table), 2 * GROUP_BYTES / page, "two groups of 64");
	cr_assert_eq(x.names_used, 2);

	free(x.names_mem);
	image_store_free(s);
	unlink(path);
}

/*
 * A name's spelling gives its length (symbolize() keeps it without measuring the name
 * again): strlen() of what it wrote, the same bytes as snprintf() writes, whole or cut
 * at the buffer's end.
 */
Test(names, a_spelling_gives_its_length_whole_or_cut)
{
	static const struct image_sym ys[] = {
		{ .name = "main", .object = "/bin/x", .file = "x", .off = 0x1f },
		{ .name = "a_rather_longer_symbol_name", .object = "/b", .file = "b", .off = 0 },
		{ .object = NULL },
		{ .object = "/usr/lib/libfoo.so.1", .file = "libfoo.so.1", .off = 0xdeadbeef },
		{ .object = "//anon", .file = "//anon", .off = 0x10 },
	};
	char want[128], got[128];

	for (size_t i = 0; i < sizeof(ys) / sizeof(ys[0]); i++) {
		const struct image_sym *y = &ys[i];

		if (y->name)
			snprintf(want, sizeof(want), "%s+0x%" PRIx64, y->name, y->off);
		else if (!y->object)
			snprintf(want, sizeof(want), "[unknown]");
		else
			snprintf(want, sizeof(want), "[unknown] (%s+0x%" PRIx64 ")", y->file,
				 y->off);
		for (size_t len = 0; len <= strlen(want) + 2; len++) {
			size_t n;

			memset(got, 'z', sizeof(got));
			n = image_sym_format(y, got, len);
			if (!len) {
				cr_assert_eq(n, 0);
				cr_assert_eq(got[0], 'z', "nothing written into no room");
				continue;
			}
			cr_assert_eq(n, strlen(got), "%zu for \"%s\" (room %zu)", n, got, len);
			cr_assert_eq(n, strlen(want) < len ? strlen(want) : len - 1);
			cr_assert(!strncmp(got, want, n), "\"%s\" for \"%s\"", got, want);
		}
	}
}
