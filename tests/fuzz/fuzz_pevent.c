// SPDX-License-Identifier: MIT
/* .pevent bytes: the reader never reads past a record or the file, and explains refusals. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sbdump.h"
#include "sideband.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char line[SBDUMP_LINE_MAX];
	struct sbdump_opts o = { .sample_type = SIDEBAND_SAMPLE_TYPE };
	struct error e = { 0 };
	size_t off = 0;

	while (off < size) {
		struct sb_record r;
		struct dump_fields f;
		int n = sideband_parse(data, size, off, SIDEBAND_SAMPLE_TYPE, &r, &e);

		if (n < 0) {
			if (!e.why[0] || !e.usage)
				abort();
			break;
		}
		if ((size_t)n > size - off || r.body + r.body_len > data + size)
			abort();
		sbdump_line(&r, off, &o, line, sizeof(line));
		sbdump_fields(&r, &f);
		sideband_mmap_file(&r);
		{
			char id[2 * SIDEBAND_BUILD_ID_MAX + 1];
			int len = sideband_mmap_build_id(&r, id, sizeof(id));

			if (len < 0 || len > SIDEBAND_BUILD_ID_MAX || (len && strlen(id) != 2u * len))
				abort();
		}
		off += (size_t)n;
	}
	return 0;
}
