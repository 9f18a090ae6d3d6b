// SPDX-License-Identifier: MIT
/* Decoder records, and the --calls filter that keeps the call depth at the merge. */
#include <errno.h>
#include <string.h>

#include "decode_rec.h"

#define NAME_MAX_LEN 1024

void drec_put(struct dsink *s, const struct drec *hdr, const char *s1, const char *s2)
{
	drec_put_max(s, hdr, s1, s2, NAME_MAX_LEN);
}

void drec_put_max(struct dsink *s, const struct drec *hdr, const char *s1, const char *s2,
		  size_t max)
{
	drec_put_len(s, hdr, s1, s1 ? strnlen(s1, max) : 0, s2, s2 ? strnlen(s2, max) : 0);
}

void drec_put_len(struct dsink *s, const struct drec *hdr, const char *s1, size_t l1,
		  const char *s2, size_t l2)
{
	size_t len = (sizeof(*hdr) + l1 + 1 + l2 + 1 + 7) & ~(size_t)7;
	uint8_t *p = dsink_room(s, len);
	struct drec *r = (struct drec *)p;

	if (!p)
		return;
	*r = *hdr;
	r->len = (uint16_t)len;
	r->len1 = (uint16_t)l1;
	r->len2 = (uint16_t)l2;
	memcpy(p + sizeof(*r), s1 ? s1 : "", l1);
	p[sizeof(*r) + l1] = '\0';
	memcpy(p + sizeof(*r) + l1 + 1, s2 ? s2 : "", l2);
	memset(p + sizeof(*r) + l1 + 1 + l2, 0, len - sizeof(*r) - l1 - 1 - l2);
	dsink_commit(s, len);
}

/*
 * How far ahead drec_each() asks for records: some forty records of the walk's --calls
 * (bench/decode). At -J 2 the merge makes the lines of the records a worker handed over
 * before its turn, written on the other CPU tens of MiB ago: from memory, at a line in
 * some 30 ns, a request four records (384 bytes) ahead came too late, and the merge took
 * 20 % more CPU (the walk's, where the workers cannot guess the depth: 43 against 34 ms).
 */
#define DREC_AHEAD 4096

void drec_each(struct dout *o, const uint8_t *data, size_t len, drec_fn *fn)
{
	const struct drec *r;
	size_t off = 0;

	while ((r = drec_next(data, len, &off))) {
		/*
		 * At -J 2 the merge reads records a worker wrote on the other CPU a while ago:
		 * asked for well ahead (a prefetch past the end does not fault).
		 */
		__builtin_prefetch((const uint8_t *)r + DREC_AHEAD);
		fn(o, r);
	}
}

static void calls_one(struct dout *o, const struct drec *r)
{
	struct calls_state *st = o->state;

	if (r->kind == DREC_STREAM)
		st->depth = 0;
	/* A return lines up with its call: the depth drops before it is shown. */
	if (r->kind == DREC_RET && st->depth)
		st->depth--;
	st->line(o, st, r);
	if (r->kind == DREC_CALL)
		st->depth++;
}

void decode_calls_filter(struct dout *o, const uint8_t *data, size_t len)
{
	drec_each(o, data, len, calls_one);
}

const char *decode_how_word(unsigned how)
{
	switch (how) {
	case DREC_HOW_CALL: return "call";
	case DREC_HOW_INTR: return "interrupt";
	case DREC_HOW_INT: return "int";
	case DREC_HOW_VMEXIT: return "vmexit";
	case DREC_HOW_OFF: return "trace off";
	case DREC_HOW_RET: return "ret";
	case DREC_HOW_IRET: return "iret";
	case DREC_HOW_VMENTRY: return "vmentry";
	case DREC_HOW_ON: return "trace on";
	default: return "?";
	}
}
