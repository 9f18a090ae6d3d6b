// SPDX-License-Identifier: MIT
/* Files the tests write for a command to read. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tempfile.h"

char *temp_file(const char *suffix, const void *data, size_t len)
{
	char *path;
	int fd;

	cr_assert(asprintf(&path, "/tmp/ptc-test-XXXXXX%s", suffix) > 0);
	fd = mkstemps(path, (int)strlen(suffix));
	cr_assert_geq(fd, 0, "%s", path);
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
	return path;
}
