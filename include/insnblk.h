/* SPDX-License-Identifier: MIT */
/*
 * --insn's lines of whole blocks of the fast flow path (fastflow.h), kept by the block's
 * first address and its number of instructions: a block printed before is printed again
 * with one copy, without a disassembler or a formatter per instruction. The lines are the
 * renderer's (struct renderer's insn_text), made once on a miss. The texts lie in a ring
 * of INSNBLK_RING bytes, found through a table of INSNBLK_SETS sets of 4 (16 bytes an
 * entry): 9 MiB at most for any trace (touched as used). The caller empties it with the
 * fast path's block table (fastflow_epoch()).
 */
#ifndef PTC_INSNBLK_H
#define PTC_INSNBLK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INSNBLK_RING (8u << 20)
#define INSNBLK_SETS (1u << 14)
#define INSNBLK_ENTRIES (INSNBLK_SETS * 4)
/* The bound: the ring and the table of 16-byte entries. */
#define INSNBLK_BYTES ((uint64_t)INSNBLK_RING + (uint64_t)INSNBLK_ENTRIES * 16)
/* The most a block's text may take (insnblk_room()). */
#define INSNBLK_TEXT_MAX (96u << 10)

struct insnblk;

/* NULL when memory runs out. */
struct insnblk *insnblk_new(void);
void insnblk_free(struct insnblk *c);

/* Forget every text. */
void insnblk_clear(struct insnblk *c);

/* The entries filled (of INSNBLK_ENTRIES) since the last clear. */
uint32_t insnblk_used(const struct insnblk *c);

/* The text of the block of @n instructions from @ip, *@len bytes; NULL: not kept. */
const char *insnblk_find(struct insnblk *c, uint64_t ip, unsigned n, size_t *len);

/*
 * Where to write a block's text of up to @max bytes (at most INSNBLK_TEXT_MAX), then kept
 * by insnblk_keep(); valid until the next call.
 */
char *insnblk_room(struct insnblk *c, size_t max);

/* The @len bytes written at insnblk_room()'s pointer: the text of @n from @ip. */
void insnblk_keep(struct insnblk *c, uint64_t ip, unsigned n, size_t len);

/*
 * Blocks' lines shared by the threads of a run (any -J; their images hold the same code,
 * as fastflow_table's): each block's text is kept once, by the first thread that made it,
 * and read by all without a lock (issue 25: each worker made the lines of all the walk's
 * blocks and held them in a table of its own). Found through an index of 4-byte slots
 * (256 KiB, where insnblk's sets take 1 MiB): faster than insnblk at -J 1 too. Kept under
 * its lock: a record is written before its index slot says it is there (release, read with
 * acquire) and never changes nor goes. Bounded as a thread's insnblk (INSNBLK_BYTES):
 * INSNBLK_RING bytes of records, INSNBLK_SHARED_ENTRIES of them; when full, nothing more is
 * kept and a thread keeps the rest in its own insnblk.
 */
#define INSNBLK_SHARED_ENTRIES (1u << 15)
struct insnblk_shared;

/* NULL when memory runs out. */
struct insnblk_shared *insnblk_shared_new(void);
void insnblk_shared_free(struct insnblk_shared *s);

/* The text of the block of @n instructions from @ip, *@len bytes; NULL: not kept. */
const char *insnblk_shared_find(const struct insnblk_shared *s, uint64_t ip, unsigned n,
				size_t *len);

/*
 * Keep @len bytes of @text (at most INSNBLK_TEXT_MAX) as the lines of @n from @ip, unless
 * another thread kept them first. Returns false when full (then never true again).
 */
bool insnblk_shared_add(struct insnblk_shared *s, uint64_t ip, unsigned n, const char *text,
			size_t len);

/* Whether it is full (nothing more is kept). */
bool insnblk_shared_full(const struct insnblk_shared *s);

/* The blocks kept. */
uint32_t insnblk_shared_used(const struct insnblk_shared *s);

/* The bytes of lines kept (any thread may ask while others keep more). */
uint64_t insnblk_shared_bytes(const struct insnblk_shared *s);

#endif
