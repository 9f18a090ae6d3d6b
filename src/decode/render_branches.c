// SPDX-License-Identifier: MIT
/* --branches: taken branches as perf script --itrace=b -F ip,addr prints them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

static const char hexd[] = "0123456789abcdef";
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

/* perf's %16lx: right-aligned, no leading zeros. */
static char *put_hex_w16(char *p, uint64_t v)
{
	char *e = p + 16;

	memset(p, ' ', 16);
	for (; v >= 16; v >>= 8) {
		e -= 2;
		memcpy(e, pairs + 2 * (v & 0xff), 2);
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
	if (!p) {
		r->sink->err = -ENOMEM;
		return;
	}
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
