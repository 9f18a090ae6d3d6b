/* SPDX-License-Identifier: MIT */
/*
 * Instruction text from capstone, in Intel or AT&T syntax, for 16-, 32- and
 * 64-bit code, as the tail of an --insn line: the bytes (padded to the
 * longest instruction) and the text. Loops decode the same instructions over
 * and over, so lines are kept in a fixed-size cache keyed by address, mode
 * and bytes (the bytes make a hit exact even for code that changed): memory
 * is bounded.
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

/* libipt's class of the instruction capstone names @id (its X86_INS_*); ptic_other if none. */
enum pt_insn_class disasm_class(unsigned int id);

#endif
