// SPDX-License-Identifier: MIT
/*
 * perf map text (/tmp/perf-PID.map, a JIT's word): the reader keeps only
 * entries within its bounds, and a lookup names an address only when exactly
 * one entry covers it and that entry overlaps no other, that entry's name
 * (checked against a scan of all).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap.h"

static size_t covering(const struct perfmap *m, uint64_t addr, size_t *which)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nr; i++)
		if (addr - m->syms[i].start < m->syms[i].size) {
			*which = i;
			n++;
		}
	return n;
}

static void check(const struct perfmap *m, uint64_t addr)
{
	const struct perfmap_sym *s = perfmap_find(m, addr);
	size_t which = 0, n = covering(m, addr, &which);

	if (s && (n != 1 || s != &m->syms[which] || s->overlaps))
		abort();	/* a name where entries overlap, or the wrong one */
	if (!s && n == 1 && !m->syms[which].overlaps)
		abort();	/* the one entry covering it was not found */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap m;

	if (perfmap_parse(&m, (const char *)data, size))
		return 0;
	for (size_t i = 0; i < m.nr; i++) {
		const struct perfmap_sym *s = &m.syms[i];

		if (!s->size || s->size > PERFMAP_MAX_SIZE || s->start + s->size < s->start ||
		    !s->name[0] || strchr(s->name, '\n') || strlen(s->name) >= PERFMAP_MAX_LINE)
			abort();
		if (i && m.syms[i - 1].start > s->start)
			abort();	/* sorted by start */
		if (m.nr < 64) {
			check(&m, s->start);
			check(&m, s->start + s->size - 1);
			check(&m, s->start + s->size);
			check(&m, s->start - 1);
		}
	}
	perfmap_free(&m);
	return 0;
}
