// SPDX-License-Identifier: MIT
/* Filter strings: the parser never crashes and always says why; kernel filters resolve. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"

static char ks[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct filter_opts o = { .kernel = true, .task_target = true, .nr_addr_filters = 8,
				 .num_address_ranges = 8 };
	char spec[512], err[2048];
	struct filter_list l;
	char *out = NULL;

	if (!ks[0]) {
		FILE *f;

		snprintf(ks, sizeof(ks), "/tmp/ptc-fuzz-kallsyms-%d", (int)getpid());
		f = fopen(ks, "w");
		if (!f)
			abort();
		fputs("ffffffff81000000 T _stext\nffffffff81000100 t dup\nffffffff81000180 T dup\n"
		      "ffffffff81000200 d data\nffffffff81000300 t f\nffffffff81000300 t g\n"
		      "ffffffff81000400 T last\n", f);
		fclose(f);
	}
	o.kallsyms = ks;
	if (size >= sizeof(spec))
		size = sizeof(spec) - 1;
	memcpy(spec, data, size);
	spec[size] = '\0';
	err[0] = '\0';
	if (filter_parse(spec, &l, err, sizeof(err))) {
		if (!err[0])
			abort();	/* every refusal says why */
	} else {
		filter_list_free(&l);
	}
	/* Files named by fuzzed input are not opened: only kernel filters are resolved. */
	if (memchr(spec, '@', size))
		return 0;
	err[0] = '\0';
	if (filter_build(spec, &o, &out, err, sizeof(err))) {
		if (!err[0] || out)
			abort();
	} else if (!out) {
		abort();
	}
	free(out);
	return 0;
}
