// SPDX-License-Identifier: MIT
/* CRC-32 (zlib's), table-driven, a byte at a time. */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "crc32.h"

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		table[n] = c;
	}
}

uint32_t crc32_update(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&table_once, make_table);
	/* Pre- and post-inverted, so that a CRC continues where the last call ended. */
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

int crc32_fd(int fd, uint32_t *crc)
{
	uint8_t buf[65536];
	off_t off = 0;

	*crc = 0;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		*crc = crc32_update(*crc, buf, (size_t)n);
		off += n;
	}
}
