// SPDX-License-Identifier: MIT
/* CRC-32 against the standard check values, in pieces and from a file. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32.h"

Test(crc32, standard_check_values)
{
	cr_expect_eq(crc32_update(0, "123456789", 9), 0xcbf43926u, "the CRC-32 check value");
	cr_expect_eq(crc32_update(0, "", 0), 0);
	cr_expect_eq(crc32_update(0, "The quick brown fox jumps over the lazy dog", 43),
		     0x414fa339u);
}

Test(crc32, pieces_continue_where_the_last_ended)
{
	uint32_t c = crc32_update(0, "1234", 4);

	cr_expect_eq(crc32_update(c, "56789", 5), 0xcbf43926u);
}

Test(crc32, a_file_larger_than_one_read)
{
	char path[] = "/tmp/ptc-unit-crc-XXXXXX";
	size_t len = 200000;
	uint8_t *buf = malloc(len);
	uint32_t crc;
	int fd = mkstemp(path);

	cr_assert(buf && fd >= 0);
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 9));
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	cr_assert_eq(crc32_fd(fd, &crc), 0);
	cr_expect_eq(crc, crc32_update(0, buf, len));
	close(fd);
	unlink(path);
	free(buf);
	cr_expect_lt(crc32_fd(-1, &crc), 0, "a bad descriptor is an error");
}
