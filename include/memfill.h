/* SPDX-License-Identifier: MIT */
/*
 * memfill.c: a decoder's tables, their pages made resident and writable before use, and
 * the locks of those the workers share.
 */
#ifndef PTC_MEMFILL_H
#define PTC_MEMFILL_H

#include <pthread.h>
#include <stddef.h>

/*
 * Makes the pages of [@p, @p + @size) resident and writable, in one call where the
 * kernel can (MADV_POPULATE_WRITE), else by writing zeroes: the memory must hold zeroes
 * or nothing yet (calloc(), or a table written before it is read).
 */
void memfill(void *p, size_t size);
/*
 * Makes the pages [@p, @p + @size) touches (mapped, writable) resident and written where
 * the kernel can (MADV_POPULATE_WRITE) and changes no byte, so other threads may be writing
 * there; else (and under ASan) does nothing.
 */
void memresident(void *p, size_t size);
/*
 * A shared table's lock, adaptive (it spins a while before it sleeps): each holder keeps it
 * for a lookup and one entry's stores, and the workers add together at the start (the
 * walk's 20,000 blocks). A plain mutex slept there, each wake a futex call and an IPI to the
 * other CPU (-J 2 on the walk: 4-7 % of the samples). 0, or -1 as pthread_mutex_init().
 */
int memfill_lock_init(pthread_mutex_t *lock);

#endif
