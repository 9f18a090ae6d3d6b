/* SPDX-License-Identifier: MIT */
/* memfill.c: a decoder's tables, their pages made resident and writable before use. */
#ifndef PTC_MEMFILL_H
#define PTC_MEMFILL_H

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

#endif
