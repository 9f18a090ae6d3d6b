// SPDX-License-Identifier: MIT
/*
 * ptsim_check: verify a captured AUX stream (.pt file) byte by byte against the
 * pattern ptsim.ko writes, so kernel test cases can check a recording byte-exact.
 *
 *   ptsim_check [-P PATTERN | -R STREAM] [-s BUFSIZE] [-q] FILE [START]
 *
 * START is the absolute AUX offset of the file's first byte (default 0; C syntax,
 * e.g. 0x10000).  With -s, FILE is a snapshot window from a BUFSIZE-byte buffer:
 * START is then only known modulo BUFSIZE (its buffer index), and the lap is
 * searched (pattern 0 identifies it; patterns 1 and 2 repeat every 4 KiB).
 * -R STREAM: pattern 3, the module replaying STREAM (what was written to sim/replay).
 * Prints "ptsim_check: FILE: N bytes match pattern P at absolute A-B".
 * An empty file passes (a CPU that traced nothing); check sizes separately.
 * Exit status: 0 every byte matches, 1 a mismatch, 2 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptsim_pattern.h"

static int usage(void)
{
	fprintf(stderr, "usage: ptsim_check [-P 0|1|2 | -R STREAM] [-s BUFSIZE] [-q] FILE [START]\n");
	return 2;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

static int matches(const uint8_t *d, uint64_t n, int pattern, uint64_t start)
{
	for (uint64_t i = 0; i < n; i++)
		if (d[i] != ptsim_byte(pattern, start + i))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	uint64_t start = 0, bufsize = 0, nbad = 0;
	int opt, pattern = 0, quiet = 0;
	size_t len;
	uint8_t *d;

	while ((opt = getopt(argc, argv, "P:R:s:qh")) != -1) {
		switch (opt) {
		case 'P':
			pattern = atoi(optarg);
			if (pattern < 0 || pattern > 2 || strlen(optarg) != 1)
				return usage();
			break;
		case 'R':
			if (ptsim_load_replay(optarg)) {
				fprintf(stderr, "ptsim_check: -R %s: %s\n", optarg, strerror(errno));
				return 2;
			}
			pattern = 3;
			break;
		case 's':
			if (parse_u64(optarg, &bufsize) || !bufsize || (bufsize & (bufsize - 1))) {
				fprintf(stderr, "ptsim_check: -s %s: not a power of two\n", optarg);
				return 2;
			}
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			return usage();
		}
	}
	if (optind >= argc || argc - optind > 2)
		return usage();
	if (argc - optind == 2 && parse_u64(argv[optind + 1], &start)) {
		fprintf(stderr, "ptsim_check: START '%s' is not a number\n", argv[optind + 1]);
		return 2;
	}
	d = ptsim_read_file(argv[optind], &len);
	if (!d) {
		fprintf(stderr, "ptsim_check: %s: %s\n", argv[optind], strerror(errno));
		return 2;
	}
	if (bufsize && len) {
		uint64_t k, probe = len < 256 ? len : 256;

		start &= bufsize - 1;
		for (k = 0; k <= (1ULL << 32) / bufsize; k++)
			if (matches(d, probe, pattern, start + k * bufsize))
				break;
		if (k <= (1ULL << 32) / bufsize)
			start += k * bufsize;
	}
	for (uint64_t i = 0; i < len; i++) {
		uint8_t want = ptsim_byte(pattern, start + i);

		if (d[i] == want)
			continue;
		if (nbad++ < 5)
			fprintf(stderr, "ptsim_check: %s: byte at file offset %#llx (absolute %#llx) "
				"is 0x%02x, expected 0x%02x\n", argv[optind], (unsigned long long)i,
				(unsigned long long)(start + i), d[i], want);
	}
	free(d);
	if (nbad) {
		fprintf(stderr, "ptsim_check: %s: %llu of %llu bytes differ from pattern %d\n",
			argv[optind], (unsigned long long)nbad, (unsigned long long)len, pattern);
		return 1;
	}
	if (!quiet)
		printf("ptsim_check: %s: %llu bytes match pattern %d at absolute %#llx-%#llx\n",
		       argv[optind], (unsigned long long)len, pattern, (unsigned long long)start,
		       (unsigned long long)(start + len));
	return 0;
}
