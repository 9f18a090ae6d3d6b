/* SPDX-License-Identifier: MIT */
/*
 * A small JSON reader, for manifest.json: the whole text into a tree of
 * nodes. Strict (RFC 8259): errors say at which byte and why.
 */
#ifndef PTC_JSON_H
#define PTC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json {
	enum json_type type;
	bool boolean;
	double number;
	char *string;		/* JSON_STRING: decoded, NUL-terminated */
	char *key;		/* member name, inside an object */
	struct json *child;	/* first element or member */
	struct json *next;	/* next sibling */
};

/* Parse @len bytes of @text. NULL with @err ("at byte N: ...") on a syntax error. */
struct json *json_parse(const char *text, size_t len, char *err, size_t errlen);
void json_free(struct json *j);

/* Member @key of an object, or NULL. */
const struct json *json_get(const struct json *obj, const char *key);
/* Member as a string (NULL if absent or not a string). */
const char *json_str(const struct json *obj, const char *key);
/* Member as an unsigned integer: a number, or a decimal/"0x" string; @def if neither. */
uint64_t json_u64(const struct json *obj, const char *key, uint64_t def);
/* Member as a bool, @def if absent or not a bool. */
bool json_bool(const struct json *obj, const char *key, bool def);

#endif
