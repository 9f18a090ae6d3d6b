// SPDX-License-Identifier: MIT
/* Instruction lines from capstone, cached by address, mode and bytes. */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disasm.h"

#define CACHE_BITS 14
#define LINE_MAX_LEN 176	/* a longer line is not cached */

struct entry {
	uint64_t ip;
	uint64_t raw[2];	/* the 15 bytes, zero-padded */
	uint8_t mode, size, len;
	char line[LINE_MAX_LEN + 16];	/* slack: readers copy in blocks of 16 */
};

struct disasm {
	csh cs[3];		/* 16-, 32-, 64-bit */
	cs_insn *insn[3];
	struct entry *cache;
	char out[DISASM_TEXT_AT + sizeof(((cs_insn *)0)->mnemonic) +
		 sizeof(((cs_insn *)0)->op_str) + 2 + 16];
};

static int mode_index(enum pt_exec_mode mode)
{
	switch (mode) {
	case ptem_16bit: return 0;
	case ptem_32bit: return 1;
	default: return 2;
	}
}

int disasm_new(struct disasm **dp, bool att, struct error *e)
{
	static const cs_mode modes[3] = { CS_MODE_16, CS_MODE_32, CS_MODE_64 };
	struct disasm *d = calloc(1, sizeof(*d));
	int i;

	*dp = NULL;
	if (!d || !(d->cache = calloc(1u << CACHE_BITS, sizeof(*d->cache)))) {
		free(d);
		return err_runtime(e, -ENOMEM, "out of memory for the disassembler");
	}
	for (i = 0; i < 3; i++) {
		cs_err err = cs_open(CS_ARCH_X86, modes[i], &d->cs[i]);

		if (err != CS_ERR_OK) {
			disasm_free(d);
			return err_runtime(e, -ENOTSUP, "capstone: %s", cs_strerror(err));
		}
		if (att)
			cs_option(d->cs[i], CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
		d->insn[i] = cs_malloc(d->cs[i]);
		if (!d->insn[i]) {
			disasm_free(d);
			return err_runtime(e, -ENOMEM, "out of memory for the disassembler");
		}
	}
	*dp = d;
	return 0;
}

void disasm_free(struct disasm *d)
{
	if (!d)
		return;
	for (int i = 0; i < 3; i++) {
		if (d->insn[i])
			cs_free(d->insn[i], 1);
		if (d->cs[i])
			cs_close(&d->cs[i]);
	}
	free(d->cache);
	free(d);
}

static size_t slot(uint64_t ip, int mode)
{
	uint64_t h = (ip ^ (uint64_t)mode << 62) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> (64 - CACHE_BITS));
}

/* Format the line of @in into d->out; its length. */
static size_t format(struct disasm *d, const struct pt_insn *in, int m)
{
	static const char hexd[] = "0123456789abcdef";
	const uint8_t *code = in->raw;
	size_t n = in->size > sizeof(in->raw) ? sizeof(in->raw) : in->size, i;
	uint64_t addr = in->ip;
	cs_insn *ci = d->insn[m];
	char *p = d->out;
	int w;

	for (i = 0; i < n; i++) {
		*p++ = ' ';
		*p++ = hexd[in->raw[i] >> 4];
		*p++ = hexd[in->raw[i] & 15];
	}
	memset(p, ' ', DISASM_TEXT_AT - 3 * n);
	p += DISASM_TEXT_AT - 3 * n;
	if (!cs_disasm_iter(d->cs[m], &code, &n, &addr, ci))
		w = sprintf(p, "(bad)\n");
	else if (ci->op_str[0])
		w = sprintf(p, "%s %s\n", ci->mnemonic, ci->op_str);
	else
		w = sprintf(p, "%s\n", ci->mnemonic);
	return (size_t)(p - d->out) + (size_t)(w > 0 ? w : 0);
}

const char *disasm_line(struct disasm *d, const struct pt_insn *in, size_t *len)
{
	int m = mode_index(in->mode);
	struct entry *en = &d->cache[slot(in->ip, m)];
	uint64_t raw[2] = { 0, 0 };

	/* libipt zeroes an instruction before filling it: the bytes past its size are 0. */
	memcpy(raw, in->raw, sizeof(in->raw));
	if (en->len && en->ip == in->ip && en->raw[0] == raw[0] && en->raw[1] == raw[1] &&
	    en->mode == m && en->size == in->size) {
		*len = en->len;
		return en->line;
	}
	*len = format(d, in, m);
	if (*len <= LINE_MAX_LEN) {
		en->ip = in->ip;
		en->raw[0] = raw[0];
		en->raw[1] = raw[1];
		en->mode = (uint8_t)m;
		en->size = in->size;
		en->len = (uint8_t)*len;
		memcpy(en->line, d->out, *len);
	}
	return d->out;
}

/* libipt's class of an instruction capstone decoded (pt_ild.c's table, by capstone's ids). */
enum pt_insn_class disasm_class(unsigned int id)
{
	switch (id) {
	case X86_INS_CALL: return ptic_call;
	case X86_INS_RET: return ptic_return;
	case X86_INS_JMP: return ptic_jump;
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JE: case X86_INS_JGE:
	case X86_INS_JG: case X86_INS_JLE: case X86_INS_JL: case X86_INS_JNE:
	case X86_INS_JNO: case X86_INS_JNP: case X86_INS_JNS: case X86_INS_JO:
	case X86_INS_JP: case X86_INS_JRCXZ: case X86_INS_JS:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return ptic_cond_jump;
	case X86_INS_LCALL: case X86_INS_INT: case X86_INS_INT1: case X86_INS_INT3:
	case X86_INS_INTO: case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_VMCALL:
		return ptic_far_call;
	case X86_INS_RETF: case X86_INS_RETFQ: case X86_INS_IRET: case X86_INS_IRETD:
	case X86_INS_IRETQ: case X86_INS_SYSEXIT: case X86_INS_SYSRET:
	case X86_INS_VMLAUNCH: case X86_INS_VMRESUME:
		return ptic_far_return;
	case X86_INS_LJMP: return ptic_far_jump;
	default: return ptic_other;
	}
}
