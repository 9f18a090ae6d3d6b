/* SPDX-License-Identifier: MIT */
/*
 * Instruction text from capstone, in Intel or AT&T syntax, for 16-, 32- and
 * 64-bit code, as the tail of an --insn line: the bytes (padded to the
 * longest instruction) and the text. Programs run the same instructions over
 * and over, so each instruction's text is kept, keyed by address, mode and
 * bytes (the bytes make a hit exact even for code that changed), in a cache of
 * fixed size: 262,144 instructions in a table of 4 MiB (8-way sets), their
 * texts in a ring of 4 MiB; 8 MiB at most, for any trace.
 */
#ifndef PTC_DISASM_H
#define PTC_DISASM_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Where the text starts in a line tail: 15 bytes of " xx", then two blanks. */
#define DISASM_TEXT_AT (15 * 3 + 2)

/* The longest line tail: the bytes, capstone's mnemonic (32) and operands (160), " ", "\n". */
#define DISASM_LINE_MAX (DISASM_TEXT_AT + 32 + 160 + 2)

struct disasm;

int disasm_new(struct disasm **d, bool att, struct error *e);
void disasm_free(struct disasm *d);

/*
 * " b8 01 00 00 00 ...  mov eax, 1\n" for @in: its bytes, blanks up to
 * DISASM_TEXT_AT, capstone's "mnemonic operands" ("(bad)" when it cannot
 * decode them) and a newline; *@len bytes, and 16 more that may be read (not
 * used). Valid until the next call.
 */
const char *disasm_line(struct disasm *d, const struct pt_insn *in, size_t *len);

/*
 * The same line written to @dst, which has room for DISASM_LINE_MAX + 16 bytes (up to 16
 * past the line are written, not used); its length.
 */
size_t disasm_put(struct disasm *d, const struct pt_insn *in, char *dst);

/* The cache's bound: its table's entries and its memory (the table and the text ring). */
size_t disasm_bound_entries(void);
size_t disasm_bound_bytes(void);
/* Entries of the table @d filled. */
size_t disasm_used(const struct disasm *d);

/* libipt's class of the instruction capstone names @id (its X86_INS_*); ptic_other if none. */
enum pt_insn_class disasm_class(unsigned int id);

#endif
