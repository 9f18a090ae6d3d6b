/* SPDX-License-Identifier: MIT */
/*
 * Perf sideband records (.pevent) as libipt's ptdump prints them with
 * --sb:compact: "PERF_RECORD_MMAP2  pid/tid, addr, len, pgoff, maj, min,
 * ino, ino_generation, prot, flags, file  { pid/tid time cpu-N id }", every
 * number in hex, the sample_id fields that sample_type holds in braces.
 * Records are read by libipt's rules (sideband.h). Where ptdump says
 * "UNKNOWN (type, misc)", for the records libipt steps over, the line names
 * the type when perf does ("PERF_RECORD_TIME_CONV (4f, 0)  { }"), else it is
 * ptdump's.
 */
#ifndef PTC_SBDUMP_H
#define PTC_SBDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dumpfield.h"
#include "error.h"
#include "sideband.h"

/* Room for any record's line: a record has at most 64 KiB. */
#define SBDUMP_LINE_MAX (65536 + 512)

struct sbdump_opts {
	uint64_t sample_type;	/* the sample_id trailer's layout (0x10086 in ptcollect's files) */
	bool no_offset;		/* without ptdump's --sb:offset column */
	bool mapped;		/* buf maps a file privately: pages behind may be dropped */
};

struct sbdump_item {
	uint64_t offset;
	const char *text;	/* the line, without newline */
	const struct sb_record *rec;
};

/* Returns 0 to go on; anything else stops the walk and is returned by it. */
typedef int sbdump_fn(const struct sbdump_item *item, void *ctx);

/*
 * Report every record of @buf (@len bytes) to @fn, to the end. A record that
 * breaks libipt's rules stops the walk: -EINVAL with @e saying where and why
 * (the records before it were reported). *@records counts the reported ones.
 * Returns 0, @fn's non-zero return, or a negative errno with @e.
 */
int sbdump_walk(const uint8_t *buf, size_t len, const struct sbdump_opts *o, sbdump_fn *fn,
		void *ctx, uint64_t *records, struct error *e);

/* ptdump's compact line for @r (with "%016x  " of @offset first unless o->no_offset). */
void sbdump_line(const struct sb_record *r, uint64_t offset, const struct sbdump_opts *o,
		 char *line, size_t len);

/* The record's body as typed fields (the sample_id is in r->sid). */
void sbdump_fields(const struct sb_record *r, struct dump_fields *f);

#endif
