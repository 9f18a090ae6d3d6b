// SPDX-License-Identifier: MIT
/*
 * The block path's cache of instructions (size, bytes, class), read from their section
 * and decoded by capstone: libipt's blocks do not say what their last instruction is.
 * Apart because the records (a run's next address) read it as well as the block path.
 */
#include <string.h>

#include "csopen.h"
#include "dec_shapes.h"
#include "disasm.h"

/* The instruction at @ip of section @isid, or NULL when it cannot be read. */
const struct shape *shape_of(struct dec *x, int isid, uint64_t ip, enum pt_exec_mode mode)
{
	struct shape *s = &x->shapes->e[shape_slot(ip, isid, mode)];
	int m = cs_index(mode), n;
	uint8_t raw[pt_max_insn_size];
	const uint8_t *code = raw;
	uint64_t addr = ip;
	size_t len;
	cs_insn *ci;

	if (s->valid && s->ip == ip && s->isid == isid && s->mode == mode)
		return s;
	n = image_read(x->img, isid, ip, raw, sizeof(raw));
	if (n <= 0)
		return NULL;
	if (!x->cs[m]) {
		static const cs_mode modes[3] = { CS_MODE_16, CS_MODE_32, CS_MODE_64 };

		if (csopen(modes[m], &x->cs[m]) != CS_ERR_OK) {
			x->cs[m] = 0;
			return NULL;
		}
	}
	len = (size_t)n;
	ci = cs_malloc(x->cs[m]);
	if (!ci)
		return NULL;
	if (!cs_disasm_iter(x->cs[m], &code, &len, &addr, ci)) {
		cs_free(ci, 1);
		return NULL;
	}
	x->shapes->used += !s->valid;
	memset(s, 0, sizeof(*s));
	s->ip = ip;
	s->isid = isid;
	s->mode = (uint8_t)mode;
	s->size = (uint8_t)ci->size;
	s->iclass = (uint8_t)disasm_class(ci->id);
	memcpy(s->raw, raw, s->size);
	s->valid = 1;
	cs_free(ci, 1);
	return s;
}

/* The size of @l read from its section (the block path), 0: it cannot be read. */
unsigned last_size(struct dec *x, const struct last *l)
{
	const struct shape *s = shape_of(x, l->isid, l->ip, (enum pt_exec_mode)l->mode);

	return s ? s->size : 0;
}
