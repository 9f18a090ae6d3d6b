/* SPDX-License-Identifier: MIT */
/*
 * Instruction text from capstone, in Intel or AT&T syntax, for 16-, 32- and
 * 64-bit code. Loops decode the same instructions over and over, so texts are
 * kept in a fixed-size cache keyed by address, mode and bytes (the bytes make
 * a hit exact even for code that changed): memory is bounded.
 */
#ifndef PTC_DISASM_H
#define PTC_DISASM_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct disasm;

int disasm_new(struct disasm **d, bool att, struct error *e);
void disasm_free(struct disasm *d);

/*
 * "mnemonic operands" of the @size bytes at @raw, executed at @ip in @mode;
 * "(bad)" when capstone cannot decode them. Valid until the next call.
 */
const char *disasm_text(struct disasm *d, uint64_t ip, enum pt_exec_mode mode,
			const uint8_t *raw, uint8_t size, size_t *len);

#endif
