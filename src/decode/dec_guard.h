/* SPDX-License-Identifier: MIT */
/* dec_guard.c: the mapped trace's pages, dropped behind the reader and guarded. */
#ifndef PTC_DEC_GUARD_H
#define PTC_DEC_GUARD_H

#include "dec.h"

struct guard {
	uintptr_t lo, hi;		/* the pages wholly inside the chunk's range */
	volatile uintptr_t wlo, whi;	/* the window readable in them; whi == 0: none */
};

void drop_behind(struct dec *x, uint64_t off, uint64_t keep);
void guard_begin(struct dec *x, struct guard *g);
void guard_end(struct dec *x, struct guard *g);

#endif
