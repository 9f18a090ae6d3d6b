// SPDX-License-Identifier: MIT
/* --branches: taken branches as perf script --itrace=b -F ip,addr prints them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

static const char hexd[] = "0123456789abcdef";

/* perf's %16lx: right-aligned, no leading zeros. */
static char *put_hex_w16(char *p, uint64_t v)
{
	char *e = p + 16;

	memset(p, ' ', 16);
	for (; v >= 16; v >>= 8) {
		e -= 2;
		memcpy(e, render_hex_pairs + 2 * (v & 0xff), 2);
	}
	/* The last pair taken was at least 0x10: what is left is one digit, or none. */
	if (v || e == p + 16)
		*--e = hexd[v];
	return p + 16;
}

/* One line: " %16lx => %16lx\n". */
#define LINE_LEN 38

static void put(struct render *r, const struct rrec *rec)
{
	char *p;

	if (rec->kind == RREC_STREAM) {
		render_stream_header(r, rec);
		return;
	}
	/* Straight into the sink: the copy from a line on the stack was a tenth of the time. */
	p = (char *)dsink_room(r->sink, LINE_LEN);
	if (!p)
		return;
	*p++ = ' ';
	p = put_hex_w16(p, rec->from);
	memcpy(p, " => ", 4);
	p = put_hex_w16(p + 4, rec->to);
	*p = '\n';
	dsink_commit(r->sink, LINE_LEN);
}

const struct renderer render_branches = {
	.name = "branches",
	.output = RENDER_OUT,
	.mode = DECODE_BRANCHES,
	.wants = RREC_BIT(RREC_BRANCH) | RREC_BIT(RREC_STREAM),
	.put = put,
};
