// SPDX-License-Identifier: MIT
/* Files the tests write for a command to read. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tempfile.h"
#include "treerm.h"

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

char *temp_dir(const char *prefix)
{
	char *dir;

	cr_assert(asprintf(&dir, "/tmp/%s-XXXXXX", prefix) > 0);
	cr_assert(mkdtemp(dir), "%s", dir);
	return dir;
}

char *temp_path(const char *dir, const char *name)
{
	char *p;

	cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

void temp_dir_remove(char *dir)
{
	cr_assert_eq(tree_remove(dir), 0, "%s: %s", dir, strerror(errno));
	free(dir);
}

bool file_has(const char *path, const char *word)
{
	char buf[8192] = "";
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return strstr(buf, word);
}
