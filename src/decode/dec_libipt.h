/* SPDX-License-Identifier: MIT */
/* dec_libipt.c: the chunk through libipt's decoders. */
#ifndef PTC_DEC_LIBIPT_H
#define PTC_DEC_LIBIPT_H

#include "dec.h"

/* A search for the next PSB over a mapped trace goes in steps of this many bytes. */
#define PSB_STEP (1u << 20)

void setup_config(const struct dec *x, struct pt_config *pc);
struct pt_block_decoder *blk_new(const struct dec *x, uint64_t end);
struct pt_insn_decoder *insn_new(const struct dec *x, uint64_t end);
void dec_run(struct dec *x, uint64_t from);

#endif
