// SPDX-License-Identifier: MIT
/*
 * Filter strings against a fixed kallsyms and this fuzz binary itself as the
 * ELF file: never crash or leak; every refusal says why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter.h"

static char kallsyms[] = "/tmp/ptc-fuzz-kallsyms-XXXXXX";

static void cleanup(void)
{
	unlink(kallsyms);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char k[] = "ffffffff81000000 T _stext\nffffffff81000100 t helper\n"
				"ffffffff81000200 T vfs_read\nffffffff81000300 t helper\n"
				"ffffffff81000400 T last\n";
	int fd = mkstemp(kallsyms);

	(void)argc;
	(void)argv;
	if (fd < 0 || write(fd, k, sizeof(k) - 1) != (ssize_t)(sizeof(k) - 1))
		abort();
	close(fd);
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct filter_opts o = {
		.traces_kernel = true, .task_target = true, .nr_addr_filters = 4,
		.num_address_ranges = 4, .kallsyms = kallsyms,
	};
	struct warnings w = { 0 };
	struct error e = { 0 };
	char spec[512], *out = NULL;

	if (size >= sizeof(spec))
		size = sizeof(spec) - 1;
	memcpy(spec, data, size);
	spec[size] = '\0';
	/* Let inputs name this binary, whatever its path. */
	{
		char *at = strstr(spec, "@SELF");

		if (at && size + 64 < sizeof(spec)) {
			char rest[512];

			snprintf(rest, sizeof(rest), "%s", at + 5);
			snprintf(at, sizeof(spec) - (at - spec), "@ /proc/self/exe%s", rest);
		}
	}
	if (filter_build(spec, &o, &out, &e, &w)) {
		if (!e.why[0] || !e.code)
			abort();	/* every refusal says why */
	} else if (!out) {
		abort();
	}
	free(out);
	return 0;
}
