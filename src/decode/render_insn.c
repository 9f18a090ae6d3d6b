// SPDX-License-Identifier: MIT
/* --insn: ptxed's lines: [offset] [tsc] address, bytes, disassembly; events and errors. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "disasm.h"
#include "render.h"

/* "00" to "ff": two hex digits a step. */
static const char pairs[] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

static char *put_hex16(char *p, uint64_t v)
{
	for (int i = 14; i >= 0; i -= 2, v >>= 8)
		memcpy(p + i, pairs + 2 * (v & 0xff), 2);
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

	if (!p) {
		r->sink->err = -ENOMEM;
		return;
	}
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
