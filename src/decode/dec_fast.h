/* SPDX-License-Identifier: MIT */
/* dec_fast.c: the chunk's PSB segments through fastflow where they may be. */
#ifndef PTC_DEC_FAST_H
#define PTC_DEC_FAST_H

#include "dec.h"

void fast_insn(void *ctx, uint64_t ip, unsigned n);
/* Whether the run's shared lines are many enough for references (x->lines_many). */
void fast_insn_lines(struct dec *x);
void run_fast(struct dec *x);

#endif
