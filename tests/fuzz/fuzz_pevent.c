// SPDX-License-Identifier: MIT
/* .pevent bytes: the reader never reads past a record or the file, and explains refusals. */
#include <stdint.h>
#include <stdlib.h>

#include "sideband.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], desc[4400];
	size_t off = 0;

	while (off < size) {
		struct sb_record r;
		int n = sideband_parse(data, size, off, SIDEBAND_SAMPLE_TYPE, &r, err, sizeof(err));

		if (n < 0) {
			if (!err[0])
				abort();
			break;
		}
		if ((size_t)n > size - off || r.body + r.body_len > data + size)
			abort();
		(void)desc;
		sideband_mmap_file(&r);
		off += (size_t)n;
	}
	return 0;
}
