/* SPDX-License-Identifier: MIT */
/* iptfill.c: libipt's block caches written when libipt allocates them (-J 2 on). */
#ifndef PTC_IPTFILL_H
#define PTC_IPTFILL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * An allocation of libipt's calloc() filled (memfill.h) when it is IPTFILL_LEAST bytes or
 * more and IPTFILL_MOST at most (a block cache: 4 bytes a byte of its section, here of
 * 16 KiB to 1 MiB of code), while the process filled IPTFILL_BUDGET bytes at most: a block
 * cache is as sparse as the code its trace ran, and a large one filled whole would cost its
 * size in memory for the few pages decoding writes.
 */
#define IPTFILL_LEAST (64u << 10)
#define IPTFILL_MOST (4u << 20)
#define IPTFILL_BUDGET (16ull << 20)

/*
 * From now on, libipt's own calloc() (its GOT entry: the rest of the process keeps its
 * allocator) fills what it returns as above. Once a process; false when it cannot be done
 * here (libipt linked into the program, not x86-64, no such entry): nothing is changed.
 */
bool iptfill_hook(void);
/* The bytes filled so far, and the libipt calloc() calls seen (a test's look). */
uint64_t iptfill_filled(void);
uint64_t iptfill_calls(void);

#endif
