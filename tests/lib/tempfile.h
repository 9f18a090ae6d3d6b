/* SPDX-License-Identifier: MIT */
/* Files the tests write for a command to read. */
#ifndef PTC_TEST_TEMPFILE_H
#define PTC_TEST_TEMPFILE_H

#include <stdbool.h>
#include <stddef.h>

/* A new /tmp file named ...@suffix holding @len bytes of @data; its path, malloc'd. */
char *temp_file(const char *suffix, const void *data, size_t len);

/* A new directory /tmp/@prefix-XXXXXX; its path, malloc'd. */
char *temp_dir(const char *prefix);
/* @dir/@name, malloc'd. */
char *temp_path(const char *dir, const char *name);
/* Remove @dir and all below it, and free @dir. */
void temp_dir_remove(char *dir);
/* Whether the first 8 KiB of @path hold @word (false when it cannot be read). */
bool file_has(const char *path, const char *word);

#endif
