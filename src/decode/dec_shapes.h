/* SPDX-License-Identifier: MIT */
/* dec_shapes.c: the block path's instructions, by section, address and mode. */
#ifndef PTC_DEC_SHAPES_H
#define PTC_DEC_SHAPES_H

#include "dec.h"

/*
 * Instructions the block path keeps (size, bytes, class): 2^SHAPE_BITS, 40 bytes each
 * (1.25 MiB): the bench's walk ends 20,000 blocks, and 8192 slots sent half of them back
 * to capstone.
 */
#define SHAPE_BITS 15

/*
 * libipt's blocks say where they start and end and how many instructions they hold, the
 * last one's class only sometimes, its size and bytes never. With end_on_call and
 * end_on_jump, every instruction of a block but the last is not a branch, so a block is
 * what the instruction decoder would have given one by one: its first and last
 * instructions are handled as on_insn() handles them, those between in one step. What
 * the last instruction is (size, bytes, class) comes from its section (image_read()) and
 * capstone, kept by section, address and mode: a section's bytes do not change, so the
 * cache needs no invalidation when the image changes (a new MMAP, another process).
 */
struct shape {
	uint64_t ip;
	int isid;
	uint8_t mode, size, iclass, valid;
	uint8_t raw[pt_max_insn_size];
};

struct shapes {
	struct shape e[1u << SHAPE_BITS];
	uint32_t used;		/* entries filled */
};

const struct shape *shape_of(struct dec *x, int isid, uint64_t ip, enum pt_exec_mode mode);
unsigned last_size(struct dec *x, const struct last *l);

static inline size_t shape_slot(uint64_t ip, int isid, int mode)
{
	uint64_t h = (ip ^ (uint64_t)isid << 40 ^ (uint64_t)mode << 62) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> (64 - SHAPE_BITS));
}

static inline int cs_index(enum pt_exec_mode mode)
{
	return mode == ptem_16bit ? 0 : mode == ptem_32bit ? 1 : 2;
}

#endif
