// SPDX-License-Identifier: MIT
/* Mutated ELF files: symbols_load and the filter lookup never crash and say why they refuse. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"
#include "symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const specs[] = {
		"filter main @ %s", "filter * @ %s", "tracestop ft_static / ft_last @ %s",
		"filter ft_dup #2 @ %s", "filter ft_global #g /0x10 @ %s",
	};
	struct filter_opts o = { .task_target = true, .nr_addr_filters = 2,
				 .num_address_ranges = 2 };
	char path[64], spec[160], err[4200];
	struct symbols s;
	FILE *f;

	/* Keep debug-file lookups away from the system's /usr/lib/debug. */
	setenv("PTCOLLECT_DEBUG_ROOT", "/nonexistent", 1);
	snprintf(path, sizeof(path), "/tmp/ptc-fuzz-elf-%d", (int)getpid());
	f = fopen(path, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	err[0] = '\0';
	if (!symbols_load(path, &s, err, sizeof(err))) {
		for (int i = 0; i < s.nr; i++)
			if (!s.syms[i].name || s.syms[i].offset >= s.syms[i].seg_end ||
			    (symbols_size(&s, i) == 0 && s.syms[i].size))
				abort();
		symbols_free(&s);
	} else if (!err[0]) {
		abort();
	}
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		char *out = NULL;

		snprintf(spec, sizeof(spec), specs[i], path);
		err[0] = '\0';
		if (filter_build(spec, &o, &out, err, sizeof(err)) && !err[0])
			abort();
		free(out);
	}
	unlink(path);
	return 0;
}
