// SPDX-License-Identifier: MIT
/*
 * A decoder's memory as it is used from two CPUs: tables filled before they are read
 * (memfill).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memfill.h"

/* Pages of [p, p + size) that are resident. */
static size_t resident(void *p, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (size + page - 1) / page, r = 0;
	unsigned char *v = malloc(n);

	cr_assert(v);
	cr_assert_eq(mincore(p, size, v), 0);
	for (size_t i = 0; i < n; i++)
		r += v[i] & 1;
	free(v);
	return r;
}

Test(memfill, a_fresh_table_is_resident_and_zero_after)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 256 * page;
	uint8_t *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			  0);

	cr_assert(m != MAP_FAILED);
	cr_assert_eq(resident(m, size), 0, "a fresh mapping has no pages yet");
	/* Not page-aligned at either end: the partial pages are written as well. */
	memfill(m + 100, size - 200);
	cr_assert_eq(resident(m, size), 256);
	for (size_t i = 0; i < size; i++)
		cr_assert_eq(m[i], 0, "byte %zu", i);
	munmap(m, size);
}
