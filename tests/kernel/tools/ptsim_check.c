// SPDX-License-Identifier: MIT
/*
 * ptsim_check FILE [START]: check that every byte of a captured trace is the
 * byte ptsim writes at its absolute AUX offset (pattern 0), the file's first
 * byte being at START (default 0). Prints the count; exit 1 on a mismatch.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	uint64_t off, n = 0, bad = 0;
	unsigned char buf[65536];
	size_t got;
	FILE *f;

	if (argc < 2) {
		fprintf(stderr, "usage: ptsim_check FILE [START]\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	off = argc > 2 ? strtoull(argv[2], NULL, 0) : 0;
	while ((got = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (size_t i = 0; i < got; i++, off++, n++) {
			uint8_t want = (uint8_t)(((uint32_t)off * 2654435761u) >> 24);

			if (buf[i] != want && bad++ < 3)
				printf("%s: byte at offset %llu is %02x, expected %02x\n", argv[1],
				       (unsigned long long)off, buf[i], want);
		}
	}
	fclose(f);
	printf("%s: %llu bytes, %llu wrong\n", argv[1], (unsigned long long)n,
	       (unsigned long long)bad);
	return bad ? 1 : 0;
}
