// SPDX-License-Identifier: MIT
/* --insn: ptxed's lines: [offset] [tsc] address, bytes, disassembly; events and errors. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "disasm.h"
#include "render.h"


static char *put_hex16(char *p, uint64_t v)
{
	for (int i = 14; i >= 0; i -= 2, v >>= 8)
		memcpy(p + i, render_hex_pairs + 2 * (v & 0xff), 2);
	return p + 16;
}

_Static_assert(RENDER_INSN_ROOM >= 2 * 18 + 2 + 16 + DISASM_LINE_MAX + 16,
	       "RENDER_INSN_ROOM");

static size_t insn_text(struct render *r, const struct pt_insn *in, uint64_t offset,
			uint64_t tsc, char *dst)
{
	char *p = dst;

	if (r->cfg->show_offset) {
		p = put_hex16(p, offset);
		*p++ = ' ';
		*p++ = ' ';
	}
	if (r->cfg->show_time) {
		p = put_hex16(p, tsc);
		*p++ = ' ';
		*p++ = ' ';
	}
	if (in->speculative) {
		*p++ = '?';
		*p++ = ' ';
	}
	p = put_hex16(p, in->ip);
	return (size_t)(p - dst) + disasm_put(r->dis, in, p);
}

static void insn_line(struct render *r, const struct pt_insn *in, uint64_t offset, uint64_t tsc)
{
	uint8_t *p = dsink_room(r->sink, RENDER_INSN_ROOM);

	if (!p)
		return;
	dsink_commit(r->sink, insn_text(r, in, offset, tsc, (char *)p));
}

static void put(struct render *r, const struct rrec *rec)
{
	char text[320], line[400], off[20] = "", tsc[20] = "";

	switch (rec->kind) {
	case RREC_STREAM:
		render_stream_header(r, rec);
		return;
	case RREC_EVENT:
		render_event_text(rec->event, r->cfg->event_ip ? RENDER_EV_IP : 0, text,
				  sizeof(text));
		if (!text[0])
			return;
		/* ptxed puts the offset in front of events too, and with --event:time the TSC. */
		if (r->cfg->show_offset)
			snprintf(off, sizeof(off), "%016" PRIx64 "  ", rec->offset);
		if (r->cfg->event_time && rec->event->has_tsc)
			snprintf(tsc, sizeof(tsc), "%016" PRIx64 "  ", rec->event->tsc);
		snprintf(line, sizeof(line), "[%s%s%s]\n", off, tsc, text);
		break;
	case RREC_EOT:
		snprintf(line, sizeof(line), "[end of trace]\n");
		break;
	case RREC_ERROR:
		snprintf(line, sizeof(line), "[%" PRIx64 ", %" PRIx64 ": %s]\n", rec->offset,
			 rec->to, rec->name);
		break;
	default:
		return;
	}
	render_text(r->sink, line);
}

const struct renderer render_insn = {
	.name = "insn",
	.output = RENDER_OUT,
	.mode = DECODE_INSN,
	.wants = RREC_BIT(RREC_INSN) | RREC_BIT(RREC_STREAM) | RREC_BIT(RREC_EVENT) |
		 RREC_BIT(RREC_EOT) | RREC_BIT(RREC_ERROR),
	.flags = RENDER_DISASM,
	.put = put,
	.insn = insn_line,
	.insn_text = insn_text,
};
