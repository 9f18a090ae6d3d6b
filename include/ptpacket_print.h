/* SPDX-License-Identifier: MIT */
/* An Intel PT packet printed: ptdump's line for it, or its payload as typed fields. */
#ifndef PTC_PTPACKET_PRINT_H
#define PTC_PTPACKET_PRINT_H

#include <stddef.h>

#include "dumpfield.h"
#include "ptpacket.h"

#define PTDUMP_LINE_MAX 160

/*
 * ptdump's line for @p into @line (at least PTDUMP_LINE_MAX bytes). @lastip
 * is the text of the last-IP column (--lastip), or NULL; @time_id and @time
 * those of the time column (--time: "tsc", --tcal: "fcr"), or NULL.
 */
void ptpacket_line(const struct ptpkt *p, const struct ptdump_opts *o, const char *lastip,
		   const char *time_id, const char *time,
		   char *line, size_t len);

/* The packet's payload as typed fields (not its offset, name or size). */
void ptpacket_fields(const struct ptpkt *p, struct dump_fields *f);

#endif
