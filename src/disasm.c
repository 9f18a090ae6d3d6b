// SPDX-License-Identifier: MIT
/* Instruction text from capstone, cached by address, mode and bytes. */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disasm.h"

#define CACHE_BITS 14
#define TEXT_MAX 110

struct entry {
	uint64_t ip;
	uint8_t mode, size, len;
	uint8_t raw[15];
	char text[TEXT_MAX + 1];
};

struct disasm {
	csh cs[3];		/* 16-, 32-, 64-bit */
	cs_insn *insn[3];
	struct entry *cache;
	char out[sizeof(((cs_insn *)0)->mnemonic) + sizeof(((cs_insn *)0)->op_str) + 2];
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

const char *disasm_text(struct disasm *d, uint64_t ip, enum pt_exec_mode mode,
			const uint8_t *raw, uint8_t size, size_t *len)
{
	int m = mode_index(mode);
	struct entry *en = &d->cache[slot(ip, m)];
	const uint8_t *code = raw;
	size_t n = size > 15 ? 15 : size;
	uint64_t addr = ip;
	cs_insn *in = d->insn[m];
	int w;

	if (en->len && en->ip == ip && en->mode == m && en->size == n && !memcmp(en->raw, raw, n)) {
		*len = en->len;
		return en->text;
	}
	if (!cs_disasm_iter(d->cs[m], &code, &n, &addr, in))
		w = snprintf(d->out, sizeof(d->out), "(bad)");
	else if (in->op_str[0])
		w = snprintf(d->out, sizeof(d->out), "%s %s", in->mnemonic, in->op_str);
	else
		w = snprintf(d->out, sizeof(d->out), "%s", in->mnemonic);
	if (w < 0)
		w = 0;
	*len = (size_t)w < sizeof(d->out) ? (size_t)w : sizeof(d->out) - 1;
	if (*len && *len <= TEXT_MAX) {
		en->ip = ip;
		en->mode = (uint8_t)m;
		en->size = (uint8_t)(size > 15 ? 15 : size);
		memcpy(en->raw, raw, en->size);
		memcpy(en->text, d->out, *len + 1);
		en->len = (uint8_t)*len;
	}
	return d->out;
}
