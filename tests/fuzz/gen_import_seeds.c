// SPDX-License-Identifier: MIT
/*
 * The seeds of fuzz_import (tests/fuzz/corpus/import/): the tests' standard
 * perf.data (tests/lib/perfgen.c) in file and pipe mode, per-CPU, per-thread
 * and with differing sample_id trailers. Regenerate with:
 *
 *	cc -Iinclude -Itests/lib -o /tmp/gen tests/fuzz/gen_import_seeds.c \
 *		tests/lib/perfgen.c && /tmp/gen tests/fuzz/corpus/import
 */
#include <stdio.h>
#include <stdlib.h>

#include "perfgen.h"

static void save(const char *dir, const char *name, uint8_t *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
	free(p);
}

int main(int argc, char **argv)
{
	static const struct { const char *name; bool per_thread, mixed; } kinds[] = {
		{ "percpu", false, false }, { "mixed", false, true }, { "perthread", true, false },
	};
	char name[64];
	struct pgen g;
	uint8_t *p;
	size_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		pgen_standard(&g, kinds[i].per_thread, kinds[i].mixed);
		snprintf(name, sizeof(name), "%s.file", kinds[i].name);
		p = pgen_file(&g, &n);
		save(argv[1], name, p, n);
		snprintf(name, sizeof(name), "%s.pipe", kinds[i].name);
		p = pgen_pipe(&g, &n);
		save(argv[1], name, p, n);
		pgen_free(&g);
	}
	return 0;
}
