/* SPDX-License-Identifier: MIT */
/*
 * Text that comes from outside (a COMM, a file name, an argument, a CPU's
 * vendor string) need not be UTF-8, but a JSON string must be, and jansson
 * refuses anything else. One rule for every JSON string ptcollect writes:
 * a byte that starts no valid UTF-8 sequence becomes U+FFFD.
 */
#ifndef PTC_UTF8_H
#define PTC_UTF8_H

#include <jansson.h>
#include <stddef.h>

/* The length (1 to 4) of the valid UTF-8 sequence at @s (not at its NUL), or 0. */
size_t utf8_seq(const char *s);

/* A JSON string of @s, invalid bytes replaced by U+FFFD. NULL only when out of memory. */
json_t *utf8_json_string(const char *s);

#endif
