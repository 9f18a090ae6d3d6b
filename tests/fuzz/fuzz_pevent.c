// SPDX-License-Identifier: MIT
/* .pevent bytes: the reader never reads past a record or the file, and explains refusals. */
#include <stdint.h>
#include <stdlib.h>

#include "sideband.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct error e = { 0 };
	char desc[4400];
	size_t off = 0;

	while (off < size) {
		struct sb_record r;
		int n = sideband_parse(data, size, off, SIDEBAND_SAMPLE_TYPE, &r, &e);

		if (n < 0) {
			if (!e.why[0] || !e.usage)
				abort();	/* a refusal says why, as bad input */
			break;
		}
		if ((size_t)n > size - off || r.body + r.body_len > data + size)
			abort();
		sideband_describe(&r, desc, sizeof(desc));
		sideband_mmap_file(&r);
		off += (size_t)n;
	}
	return 0;
}
