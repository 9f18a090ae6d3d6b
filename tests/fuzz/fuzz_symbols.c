// SPDX-License-Identifier: MIT
/* ELF files mutated from real ones: symbols_load never crashes, leaks or lies about errors. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/ptc-fuzz-elf-XXXXXX";
	struct warnings w = { 0 };
	struct error e = { 0 };
	struct symtab t;
	int fd = mkstemp(path);

	if (fd < 0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	if (symbols_load(&t, path, &e, &w)) {
		if (!e.why[0] || !e.code)
			abort();	/* every refusal says why */
	} else {
		/* Sizes are the file's word (a corrupt one may be absurd); names must exist. */
		for (size_t i = 0; i < t.nr; i++)
			if (!t.syms[i].name || t.syms[i].offset >= t.syms[i].seg_end)
				abort();
		symbols_free(&t);
	}
	unlink(path);
	return 0;
}
