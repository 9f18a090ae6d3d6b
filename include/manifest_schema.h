/* SPDX-License-Identifier: MIT */
/*
 * manifest.json's schema, once: a table of fields per structure (key, type,
 * offset, flags) that the writer (manifest_write.c) and the reader
 * (manifest_read.c) both walk. Adding a field to the manifest is adding a
 * line to a table in manifest_schema.c. Inside the manifest module only.
 */
#ifndef PTC_MANIFEST_SCHEMA_H
#define PTC_MANIFEST_SCHEMA_H

#include <stddef.h>

#include "manifest.h"

enum mtype {
	MT_CONST,	/* a constant string (cval), written only */
	MT_CONST_INT,	/* a constant number (lo), written only; the reader checks it first */
	MT_STR,		/* char *, any string */
	MT_RELPATH,	/* char *, a path inside the bundle */
	MT_ABSPATH,	/* char *, an absolute path */
	MT_BUILD_ID,	/* char *, lowercase hex, 1 to 20 bytes */
	MT_INT,		/* int, in lo..hi */
	MT_UINT,	/* unsigned int, in lo..hi */
	MT_U16,		/* uint16_t, in lo..hi */
	MT_U32,		/* uint32_t, in lo..hi */
	MT_U64,		/* uint64_t as a decimal string */
	MT_HEX,		/* uint64_t as a "0x" hex string */
	MT_S64,		/* int64_t as a decimal string */
	MT_BOOL,	/* bool */
	MT_ARGV,	/* char ** with its int count at count_off; null when NULL */
	MT_PIDS,	/* pid_t * with its int count at count_off: positive numbers */
	MT_TIME,	/* struct timespec as "YYYY-MM-DDTHH:MM:SS.uuuuuuZ", null when 0 */
	MT_ENUM,	/* enum target_kind, by its name */
	MT_MODE,	/* "mode": per_thread and no_trace, two bools at off and count_off */
	MT_DEVICE,	/* "MAJ:MIN" in hex: unsigned ints at off and count_off */
	MT_OBJECT,	/* an object of sub's fields; offsets from the same base */
	MT_ARRAY,	/* sub's elements: pointer at off, int count at count_off */
};

#define MF_NULLABLE	0x01	/* the reader takes null or absence: the field keeps its default */
#define MF_NULL_ZERO	0x02	/* 0 is written as null, and null read as 0 */
#define MF_NULL_NEG	0x04	/* below 0 is written as null, and null read as -1 */
#define MF_IF_BOOL	0x08	/* written only when the bool at cond_off is set (null else); read
				 * sets it; fields of one bool are all present or all null */
#define MF_IF_PTR	0x10	/* written only when the pointer at cond_off is not NULL (null else) */
#define MF_TRIGGER_IDX	0x20	/* an index into the manifest's triggers: hi is their count - 1 */
#define MF_OPTIONAL	0x40	/* MF_NULLABLE, and also absent in bundles older than the field */

struct mschema;

struct mfield {
	const char *key;
	enum mtype type;
	size_t off;
	unsigned int flags;
	long long lo, hi;		/* MT_INT, MT_UINT, MT_U16, MT_U32 */
	size_t count_off;		/* MT_ARGV, MT_PIDS, MT_ARRAY; MT_MODE, MT_DEVICE's second */
	size_t cond_off;		/* MF_IF_BOOL, MF_IF_PTR */
	const char *cval;		/* MT_CONST */
	const struct mschema *sub;	/* MT_OBJECT, MT_ARRAY */
};

/*
 * A structure's fields, in the order they are written. An array's elements:
 * @size bytes each, a new one from @add (zeroed, its defaults set) given the
 * structure that holds the array.
 */
struct mschema {
	const struct mfield *fields;
	size_t nr;
	size_t size;
	void *(*add)(void *parent);
};

extern const struct mschema mschema_manifest, mschema_stream, mschema_image, mschema_snapshot,
	mschema_window, mschema_trigger, mschema_fire, mschema_mark, mschema_perf_map,
	mschema_perf_map_refused;

/* Write @base as @s describes it: a new JSON object, or NULL on ENOMEM. */
json_t *mschema_write(const struct mschema *s, const void *base);

extern const char *const manifest_target_names[];

#endif
