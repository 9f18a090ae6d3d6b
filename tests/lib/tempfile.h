/* SPDX-License-Identifier: MIT */
/* Files the tests write for a command to read. */
#ifndef PTC_TEST_TEMPFILE_H
#define PTC_TEST_TEMPFILE_H

#include <stddef.h>

/* A new /tmp file named ...@suffix holding @len bytes of @data; its path, malloc'd. */
char *temp_file(const char *suffix, const void *data, size_t len);

#endif
