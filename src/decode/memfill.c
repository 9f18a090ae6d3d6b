// SPDX-License-Identifier: MIT
/*
 * A decoder's tables, written before they are read. A table fresh from calloc() is the
 * kernel's zero page until written: a lookup reads it (the zero page is mapped), the
 * insert that follows writes it (copy on write). With two workers of one process on two
 * CPUs, each such write also flushes the other CPU's TLB (an IPI, a VM exit on a VM):
 * the walk's -J 2 --stats took 1.23 times -J 1's CPU, a third of that in those flushes.
 * A page written first is mapped once and needs no flush.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memfill.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

void memfill(void *p, size_t size)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)p + size) & ~(page - 1);

	if (!size)
		return;
#ifndef __SANITIZE_ADDRESS__
	/* The whole pages in one call; the partial ones at the ends are the allocator's. */
	if (hi > lo && !madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE)) {
		if (lo > (uintptr_t)p)
			memset(p, 0, lo - (uintptr_t)p);
		if ((uintptr_t)p + size > hi)
			memset((void *)hi, 0, (uintptr_t)p + size - hi);
		return;
	}
#else
	(void)lo;
	(void)hi;
#endif
	memset(p, 0, size);
}

void memresident(void *p, size_t size)
{
#ifndef __SANITIZE_ADDRESS__
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p & ~(page - 1);
	uintptr_t hi = ((uintptr_t)p + size + page - 1) & ~(page - 1);

	if (size)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)size;
#endif
}

int memfill_lock_init(pthread_mutex_t *lock)
{
	pthread_mutexattr_t a;
	int ret;

	if (pthread_mutexattr_init(&a))
		return -1;
	ret = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP) ||
	      pthread_mutex_init(lock, &a);
	pthread_mutexattr_destroy(&a);
	return ret ? -1 : 0;
}
