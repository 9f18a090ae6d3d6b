// SPDX-License-Identifier: MIT
/*
 * make bench, hostile inputs (issue 22): files cheap to make (sparse) that used to make
 * ptcollect's memory or time grow with them.
 *
 *	hostile_gen pt FILE BYTES        BYTES of PAD (a hole), then PSB, PSBEND
 *	hostile_gen padafter FILE BYTES  PSB, PSBEND, BYTES of PAD (a hole), PSB, PSBEND
 *	hostile_gen sideband FILE BYTES  records of an unknown type, 65528 bytes each, sparse
 *	hostile_gen mmaps FILE N         MMAP2 records of N files, each its own path
 */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void put(int fd, const void *p, size_t n, off_t at)
{
	if (pwrite(fd, p, n, at) != (ssize_t)n) {
		perror("pwrite");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static const uint8_t psb[18] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					 2, 0x82, 2, 0x82, 2, 0x23 };
	unsigned long long n;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: hostile_gen pt|padafter|sideband|mmaps FILE N\n");
		return 2;
	}
	n = strtoull(argv[3], NULL, 0);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "pt")) {
		put(fd, psb, sizeof(psb), (off_t)n);
	} else if (!strcmp(argv[1], "padafter")) {
		put(fd, psb, sizeof(psb), 0);
		put(fd, psb, sizeof(psb), (off_t)(n + sizeof(psb)));
	} else if (!strcmp(argv[1], "sideband")) {
		struct perf_event_header h = { .type = 80, .size = 65528 };
		unsigned long long off;

		for (off = 0; off + h.size <= n; off += h.size)
			put(fd, &h, sizeof(h), (off_t)off);
		if (ftruncate(fd, (off_t)off))
			return 1;
	} else if (!strcmp(argv[1], "mmaps")) {
		off_t off = 0;

		for (unsigned long long i = 0; i < n; i++) {
			uint8_t rec[8 + 64 + 40 + 32] = { 0 };
			struct perf_event_header h = { .type = PERF_RECORD_MMAP2,
						       .misc = PERF_RECORD_MISC_USER,
						       .size = sizeof(rec) };
			uint32_t tid[2] = { 1, 1 };

			memcpy(rec, &h, 8);
			snprintf((char *)rec + 72, 40, "/nonexistent/ptc-bench/lib%08u.so",
				 (unsigned int)(i % 100000000));
			memcpy(rec + 112, tid, 8);
			put(fd, rec, sizeof(rec), off);
			off += sizeof(rec);
		}
	} else {
		fprintf(stderr, "hostile_gen: %s: not pt, padafter, sideband or mmaps\n", argv[1]);
		return 2;
	}
	close(fd);
	return 0;
}
