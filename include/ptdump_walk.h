/* SPDX-License-Identifier: MIT */
/*
 * ptdump's walk over a trace: the lines libipt's ptdump prints for it, one
 * per packet, "[offset: what: why]" for a decoding error, after which the
 * walk resynchronizes at the next PSB.
 */
#ifndef PTC_PTDUMP_WALK_H
#define PTC_PTDUMP_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ptpacket.h"

enum ptdump_kind {
	PTDUMP_PACKET,
	PTDUMP_ERROR,
	PTDUMP_TIME,	/* a hidden timing packet's time update (sideband due): no text */
};

/* One line of the dump, as the walker reports it. */
struct ptdump_line {
	enum ptdump_kind kind;
	uint64_t offset;
	const char *text;		/* the line as ptdump prints it, without newline */
	const struct ptpkt *pkt;	/* PTDUMP_PACKET */
	const char *context;		/* PTDUMP_ERROR: "error decoding packet", ... */
	int code;			/* PTDUMP_ERROR: libipt's error code (negative), or 0 */
	bool sb_due;			/* sideband up to @tsc is due before this line */
	uint64_t tsc;
};

/* Returns 0 to go on; anything else stops the walk and is returned by it. */
typedef int ptdump_line_fn(const struct ptdump_line *line, void *ctx);

struct ptdump_stats {
	uint64_t packets;	/* packets reported (after the options' filters) */
	uint64_t errors;	/* error lines */
	uint64_t resyncs;	/* PSBs found again after an error */
	bool synced;		/* a PSB was found (or --no-sync) */
	int status;		/* ptdump's exit status for this stream */
};

/*
 * Dump the trace in @buf (@len bytes) as ptdump does, reporting each line
 * to @fn. Returns 0, @fn's non-zero return, or a negative errno with @e
 * (only when memory runs out). @st gets the counts.
 */
int ptdump_walk(const uint8_t *buf, size_t len, const struct ptdump_opts *o,
		ptdump_line_fn *fn, void *ctx, struct ptdump_stats *st, struct error *e);

#endif
