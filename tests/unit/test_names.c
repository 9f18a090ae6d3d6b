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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dec_names.h"
#include "error.h"
#include "memimage.h"

#define GROUP_BYTES ((size_t)sizeof(struct nameset) << NAMES_GROUP_SHIFT)

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

/* Whether the kernel gives transparent huge pages to a mapping that asks (MADV_HUGEPAGE). */
static bool thp_on(void)
{
	char s[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (!fgets(s, sizeof(s), f))
			s[0] = '\0';
		fclose(f);
	}
	return strstr(s, "[always]") || strstr(s, "[madvise]");
}

/* KiB of huge pages in the mapping that holds @p (/proc/self/smaps), -1: not found. */
static long huge_kib(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	long kib = -1;

	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib;
}

static const char *lookup(struct dec *x, int isid, uint64_t ip)
{
	static char buf[1200];
	struct symname *used;
	bool plain;
	size_t n;

	return name_of(x, 1, isid, ip, NULL, &used, buf, sizeof(buf), &plain, &n);
}

/* @x over a raw image of a file of 1 MiB at 0x401000 (made, its path in @path): its section. */
static int raw_image(struct dec *x, char *path)
{
	struct image_store *s;
	struct error e;
	uint64_t end;
	int isid, fd;

	strcpy(path, "/tmp/ptc-names-XXXXXX");
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	cr_assert_eq(image_store_new(&s, NULL, &e), 0);
	cr_assert_eq(image_add_raw(s, NULL, path, 0, 0, 0x401000, &e), 0);
	isid = image_base_find(s, 0x401000, &end);
	cr_assert(isid > 0);
	memset(x, 0, sizeof(*x));
	x->img = s;
	return isid;
}

Test(names, a_group_is_written_before_a_lookup_reads_it)
{
	size_t page = page_size(), table = ((size_t)1 << NAMES_SET_BITS) * sizeof(struct nameset);
	struct dec x;
	struct image_store *s;
	char path[64], want[256];
	uint64_t ip, other = 0;
	size_t slot;
	long f0;
	int isid;

	/* A group's pages 4 KiB each: no huge pages in this process (criterion forks a test). */
	cr_assert_eq(prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0), 0);
	isid = raw_image(&x, path);
	s = x.img;

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

	names_free(x.names);
	image_store_free(s);
	unlink(path);
}

/*
 * The table goes into huge pages where the kernel gives them: aligned to 2 MiB, a half
 * collapsed into one once 8 of its 32 groups are written, not before (a trace of few
 * names keeps its few groups), and the other half left as it was.
 */
Test(names, a_half_goes_into_a_huge_page_once_8_of_its_groups_are_written)
{
	size_t page = page_size(), half = (size_t)2 << 20;
	size_t table = ((size_t)1 << NAMES_SET_BITS) * sizeof(struct nameset);
	struct dec x;
	struct image_store *s;
	char path[64], want[256];
	uint64_t ip = 0x401010, mask;
	uintptr_t mine;
	int isid, n = 1;

	isid = raw_image(&x, path);
	s = x.img;
	image_symbolize_pid(s, 1, isid, ip, want, sizeof(want));
	cr_assert_str_eq(lookup(&x, isid, ip), want);
	cr_assert_eq((uintptr_t)x.names % half, 0, "the table starts at a huge page");
	mine = ((uintptr_t)&x.names[sym_slot(1, isid, ip)]) & ~(uintptr_t)(half - 1);
	mask = (((uint64_t)1 << 32) - 1) << ((mine - (uintptr_t)x.names) / half * 32);
	/* Lookups in further groups of that half, up to 8 written. */
	for (uint64_t a = 0x401000; a < 0x501000 && n < 8; a++) {
		size_t slot = sym_slot(1, isid, a);

		if ((((uintptr_t)&x.names[slot]) & ~(uintptr_t)(half - 1)) != mine ||
		    names_written(&x, slot))
			continue;
		if (n == 7)
			cr_assert_eq(huge_kib((void *)mine), 0, "7 groups: no huge page yet");
		image_symbolize_pid(s, 1, isid, a, want, sizeof(want));
		cr_assert_str_eq(lookup(&x, isid, a), want);
		n++;
	}
	cr_assert_eq(__builtin_popcountll(x.names_filled & mask), 8);
	cr_assert_eq(x.names_filled & ~mask, 0);
	if (!thp_on()) {
		cr_assert_eq(huge_kib((void *)mine), 0);
		goto out;
	}
	if (huge_kib((void *)mine) <= 0)
		cr_skip_test("the kernel gave no huge page (its memory fragmented)");
	cr_assert_eq(huge_kib((void *)mine), 2048, "the half of the 8 groups");
	cr_assert_eq(resident((void *)mine, half), half / page);
	cr_assert_eq(resident(x.names, table), half / page, "the other half untouched");
	/* The groups written before are there as they were: a hit each. */
	image_symbolize_pid(s, 1, isid, ip, want, sizeof(want));
	cr_assert_str_eq(lookup(&x, isid, ip), want);
	cr_assert_eq(x.names_used, 8);
out:
	names_free(x.names);
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

/* A raw section of a file whose name is @stem and padding to make names @want bytes long. */
static int section_named(struct image_store *s, char *path, size_t want, uint64_t base)
{
	char stem[128], name[256];
	struct error e;
	uint64_t end;
	size_t n;
	int fd;

	/* "[unknown] (FILE+0x10)": 17 bytes besides the file's name, its 6 X's included. */
	n = want - 17;
	cr_assert(n >= 16 && n < sizeof(stem));
	memset(stem, 'n', n - 6);
	stem[n - 6] = '\0';
	snprintf(path, 200, "/tmp/%sXXXXXX", stem);
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, 1 << 16), 0);
	close(fd);
	cr_assert_eq(image_add_raw(s, NULL, path, 0, 0, base, &e), 0);
	image_symbolize_pid(s, 1, image_base_find(s, base, &end), base + 0x10, name,
			    sizeof(name));
	cr_assert_eq(strlen(name), want, "\"%s\"", name);
	return image_base_find(s, base, &end);
}

/*
 * A name is kept in its way's line up to 45 bytes, in the way's cold part (the set's
 * second pair of lines) up to 63, and spelled at each use when longer; the ways' lines
 * lie in one aligned pair. Each lookup, miss or hit, gives the name and its length.
 */
Test(names, a_name_lies_in_its_line_its_cold_part_or_is_spelled)
{
	static const size_t lens[] = { 45, 46, 63, 64, 77 };
	char paths[5][200], want[256], buf[256];
	struct image_store *s;
	struct error e;
	struct dec x;

	cr_assert_eq(image_store_new(&s, NULL, &e), 0);
	memset(&x, 0, sizeof(x));
	x.img = s;
	for (size_t i = 0; i < 5; i++) {
		uint64_t base = 0x400000 + i * 0x100000, ip = base + 0x10;
		int isid = section_named(s, paths[i], lens[i], base);

		image_symbolize_pid(s, 1, isid, ip, want, sizeof(want));
		for (int pass = 0; pass < 2; pass++) {
			struct symname *used;
			const char *name;
			uint32_t missed = x.names_missed;
			uintptr_t pair;
			bool plain;
			size_t n;

			memset(buf, 0, sizeof(buf));
			name = name_of(&x, 1, isid, ip, NULL, &used, buf, sizeof(buf), &plain, &n);
			cr_assert_str_eq(name, want);
			cr_assert_eq(n, lens[i]);
			cr_assert(plain);
			cr_assert(used);
			cr_assert_eq(x.names_missed, missed + !pass, "a miss the first time only");
			if (lens[i] < sizeof(used->name))
				cr_assert_eq(name, used->name, "%zu bytes: in its line", lens[i]);
			else if (lens[i] < sizeof(sym_cold(used)->name))
				cr_assert_eq(name, sym_cold(used)->name, "%zu: in its cold part",
					     lens[i]);
			else
				cr_assert_eq(name, buf, "%zu bytes: spelled each time", lens[i]);
			/* Both ways' lines in one aligned pair; the cold parts after them. */
			cr_assert_eq((uintptr_t)used & 63, 0);
			pair = (uintptr_t)used & ~(uintptr_t)127;
			cr_assert_eq((uintptr_t)sym_cold(used) - pair, 128 + ((uintptr_t)used & 64));
		}
	}
	names_free(x.names);
	image_store_free(s);
	for (size_t i = 0; i < 5; i++)
		unlink(paths[i]);
}

/*
 * A third address of a set takes the way used less lately, unless that holds the other
 * end's name (busy): then the other way; the name it keeps survives a neighbour's
 * insert, cold part included.
 */
Test(names, a_miss_keeps_the_busy_way_and_its_cold_name)
{
	char path[200], buf[256], want[256];
	uint64_t base = 0x400000, ip[3];
	struct symname *a, *b, *c;
	struct image_store *s;
	struct error e;
	struct dec x;
	size_t n, set;
	bool plain;
	int isid, k = 1;

	cr_assert_eq(image_store_new(&s, NULL, &e), 0);
	memset(&x, 0, sizeof(x));
	x.img = s;
	isid = section_named(s, path, 50, base);	/* names of 50 or so: the cold part */
	ip[0] = base + 0x10;
	set = sym_slot(1, isid, ip[0]);
	for (uint64_t a2 = base + 0x11; a2 < base + 0x10000 && k < 3; a2++)
		if (sym_slot(1, isid, a2) == set)
			ip[k++] = a2;
	cr_assert_eq(k, 3, "three addresses of one set");
	name_of(&x, 1, isid, ip[0], NULL, &a, buf, sizeof(buf), &plain, &n);
	name_of(&x, 1, isid, ip[1], NULL, &b, buf, sizeof(buf), &plain, &n);
	cr_assert_neq(a, b);
	/* @a is the way used less lately, but busy: @b's goes. */
	name_of(&x, 1, isid, ip[2], a, &c, buf, sizeof(buf), &plain, &n);
	cr_assert_eq(c, b);
	image_symbolize_pid(s, 1, isid, ip[0], want, sizeof(want));
	cr_assert_eq(a->ip, ip[0]);
	cr_assert_str_eq(sym_cold(a)->name, want, "its cold name kept");
	/* Not busy: the way used less lately goes, @a now. */
	name_of(&x, 1, isid, ip[1], NULL, &b, buf, sizeof(buf), &plain, &n);
	cr_assert_eq(b, a);
	cr_assert_eq(x.names_missed, 4);
	names_free(x.names);
	image_store_free(s);
	unlink(path);
}
