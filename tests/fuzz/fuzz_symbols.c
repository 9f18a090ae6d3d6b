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
	char path[] = "/tmp/ptc-fuzz-elf-XXXXXX", err[1024];
	struct symtab t;
	int fd = mkstemp(path);

	if (fd < 0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	err[0] = '\0';
	if (symbols_load(&t, path, err, sizeof(err))) {
		if (!err[0])
			abort();
	} else {
		for (size_t i = 0; i < t.nr; i++)
			if (!t.syms[i].name || t.syms[i].offset + t.syms[i].size < t.syms[i].offset)
				abort();
		symbols_free(&t);
	}
	unlink(path);
	return 0;
}
