// SPDX-License-Identifier: MIT
/*
 * The dump printers on any bytes: the same input read as an Intel PT trace
 * (ptdump's lines, with and without options) and as .pevent sideband
 * (ptdump --sb:compact lines), with the typed fields of every item. Each
 * line is NUL-terminated within its buffer, offsets stay inside the input,
 * and a refused record comes with its reason.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptdump_walk.h"
#include "ptpacket.h"
#include "ptpacket_print.h"
#include "sbdump.h"

static int pt_line(const struct ptdump_line *l, void *ctx)
{
	size_t size = *(const size_t *)ctx;
	struct dump_fields f;

	if (l->offset > size || strlen(l->text) >= PTDUMP_LINE_MAX)
		abort();
	if (l->kind == PTDUMP_PACKET) {
		/* libipt's SKZ84 <invalid> TMA is 8 bytes even where fewer are left */
		if (l->offset + l->pkt->size > size && l->pkt->pkt.type != ppt_invalid)
			abort();
		ptpacket_fields(l->pkt, &f);
		if (f.n > DUMP_FIELDS_MAX || !ptpacket_name(l->pkt))
			abort();
	}
	return 0;
}

static int sb_item(const struct sbdump_item *it, void *ctx)
{
	size_t size = *(const size_t *)ctx;
	struct dump_fields f;

	if (it->offset + it->rec->size > size || strlen(it->text) >= SBDUMP_LINE_MAX)
		abort();
	sbdump_fields(it->rec, &f);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ptdump_opts plain = { 0 }, all = {
		.raw = true, .lastip = true, .exec_mode = true, .no_sync = true,
	}, timed = {
		.time = true, .time_delta = true, .keep_tcal_on_ovf = true, .mtc_freq = 3,
		.nom_freq = 24, .cpuid_0x15_eax = 2, .cpuid_0x15_ebx = 168, .has_cpu = true,
		.cpu = { .vendor = pcv_intel, .family = 6, .model = 85 },
	}, tcal = { .tcal = true, .mtc_freq = 8, .nom_freq = 1 };
	struct sbdump_opts sb = { .sample_type = 0x10086 };
	struct ptdump_stats st;
	struct error e = { 0 };
	uint64_t records;

	ptdump_walk(data, size, &plain, pt_line, &size, &st, &e);
	ptdump_walk(data, size, &all, pt_line, &size, &st, &e);
	ptdump_walk(data, size, &timed, pt_line, &size, &st, &e);
	ptdump_walk(data, size, &tcal, pt_line, &size, &st, &e);
	if (sbdump_walk(data, size, &sb, sb_item, &size, &records, &e) == -EINVAL && !e.why[0])
		abort();
	return 0;
}
