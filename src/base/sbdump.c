// SPDX-License-Identifier: MIT
/* Perf sideband records as libipt's ptdump prints them (--sb:compact), and as typed fields. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "sbdump.h"

static uint64_t u64_at(const struct sb_record *r, size_t off)
{
	uint64_t v = 0;

	if (off + 8 <= r->body_len)
		memcpy(&v, r->body + off, 8);
	return v;
}

static uint32_t u32_at(const struct sb_record *r, size_t off)
{
	uint32_t v = 0;

	if (off + 4 <= r->body_len)
		memcpy(&v, r->body + off, 4);
	return v;
}

/* The NUL-terminated name at @off (the reader checked that it is there). */
static const char *str_at(const struct sb_record *r, size_t off)
{
	if (off >= r->body_len || !memchr(r->body + off, 0, r->body_len - off))
		return "";
	return (const char *)r->body + off;
}

/* pid/tid, ppid/ptid, time of EXIT and FORK (body: pid, ppid, tid, ptid, time). */
static void task_text(const struct sb_record *r, char *line, size_t len, size_t *n)
{
	dump_appendf(line, len, n, "  %x/%x, %x/%x, %" PRIx64, u32_at(r, 0), u32_at(r, 8),
		     u32_at(r, 4), u32_at(r, 12), u64_at(r, 16));
}

static void mmap_text(const struct sb_record *r, char *line, size_t len, size_t *n)
{
	dump_appendf(line, len, n, "  %x/%x, %" PRIx64 ", %" PRIx64 ", %" PRIx64,
		     u32_at(r, 0), u32_at(r, 4), u64_at(r, 8), u64_at(r, 16), u64_at(r, 24));
	if (r->type == PERF_RECORD_MMAP2)
		dump_appendf(line, len, n, ", %x, %x, %" PRIx64 ", %" PRIx64 ", %x, %x, %s",
			     u32_at(r, 32), u32_at(r, 36), u64_at(r, 40), u64_at(r, 48),
			     u32_at(r, 56), u32_at(r, 60), str_at(r, 64));
	else
		dump_appendf(line, len, n, ", %s", str_at(r, 32));
}

/* COMM, AUX and the switches: a suffix on the name from misc or flags. */
static void suffixed_text(const struct sb_record *r, char *line, size_t len, size_t *n)
{
	const char *dir = r->misc & PERF_RECORD_MISC_SWITCH_OUT ? "OUT" : "IN";

	switch (r->type) {
	case PERF_RECORD_COMM:
		dump_appendf(line, len, n, "PERF_RECORD_COMM%s  %x/%x, %s",
			     r->misc & PERF_RECORD_MISC_COMM_EXEC ? ".EXEC" : "", u32_at(r, 0),
			     u32_at(r, 4), str_at(r, 8));
		break;
	case PERF_RECORD_AUX:
		dump_appendf(line, len, n, "PERF_RECORD_AUX%s  %" PRIx64 ", %" PRIx64 ", %" PRIx64,
			     u64_at(r, 16) & PERF_AUX_FLAG_TRUNCATED ? ".TRUNCATED" : "",
			     u64_at(r, 0), u64_at(r, 8), u64_at(r, 16));
		break;
	case PERF_RECORD_SWITCH:
		dump_appendf(line, len, n, "PERF_RECORD_SWITCH.%s", dir);
		break;
	default:
		dump_appendf(line, len, n, "PERF_RECORD_SWITCH_CPU_WIDE.%s  %x/%x", dir,
			     u32_at(r, 0), u32_at(r, 4));
		break;
	}
}

/* The record's own part of the line, as libipt's pt_sb_pevent_print_event() has it. */
static void record_text(const struct sb_record *r, char *line, size_t len, size_t *n)
{
	const char *name = sideband_type_name(r->type);

	if (!r->has_sample_id) {
		/* libipt steps over it and says UNKNOWN; perf's name says more. */
		dump_appendf(line, len, n, "%s%s (%x, %x)", name ? "PERF_RECORD_" : "UNKNOWN",
			     name ? name : "", r->type, r->misc);
		return;
	}
	switch (r->type) {
	case PERF_RECORD_COMM:
	case PERF_RECORD_AUX:
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		suffixed_text(r, line, len, n);
		return;
	}
	dump_appendf(line, len, n, "PERF_RECORD_%s", name);
	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		mmap_text(r, line, len, n);
		break;
	case PERF_RECORD_LOST:
		dump_appendf(line, len, n, "  %" PRIx64 ", %" PRIx64, u64_at(r, 0), u64_at(r, 8));
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		task_text(r, line, len, n);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		dump_appendf(line, len, n, "  %" PRIx64 ", %" PRIx64 ", %" PRIx64, u64_at(r, 0),
			     u64_at(r, 8), u64_at(r, 16));
		break;
	case PERF_RECORD_ITRACE_START:
		dump_appendf(line, len, n, "  %x/%x", u32_at(r, 0), u32_at(r, 4));
		break;
	case PERF_RECORD_LOST_SAMPLES:
		dump_appendf(line, len, n, "  %" PRIx64, u64_at(r, 0));
		break;
	}
}

/* "  { pid/tid time id cpu-N stream_id identifier }": libipt's order, which is not the file's. */
static void sample_text(const struct sb_sample_id *s, char *line, size_t len, size_t *n)
{
	uint64_t st = s->sample_type;

	dump_appendf(line, len, n, "  {");
	if (st & PERF_SAMPLE_TID)
		dump_appendf(line, len, n, " %x/%x", s->pid, s->tid);
	if (st & PERF_SAMPLE_TIME)
		dump_appendf(line, len, n, " %" PRIx64, s->time);
	if (st & PERF_SAMPLE_ID)
		dump_appendf(line, len, n, " %" PRIx64, s->id);
	if (st & PERF_SAMPLE_CPU)
		dump_appendf(line, len, n, " cpu-%x", s->cpu);
	if (st & PERF_SAMPLE_STREAM_ID)
		dump_appendf(line, len, n, " %" PRIx64, s->stream_id);
	if (st & PERF_SAMPLE_IDENTIFIER)
		dump_appendf(line, len, n, " %" PRIx64, s->identifier);
	dump_appendf(line, len, n, " }");
}

void sbdump_line(const struct sb_record *r, uint64_t offset, const struct sbdump_opts *o,
		 char *line, size_t len)
{
	size_t n = 0;

	line[0] = '\0';
	if (!o->no_offset)
		dump_appendf(line, len, &n, "%016" PRIx64 "  ", offset);
	record_text(r, line, len, &n);
	sample_text(&r->sid, line, len, &n);
}

/* ---- typed fields ------------------------------------------------------------ */

/* MMAP2 holds either the device and inode or, with MMAP_BUILD_ID, the file's build-id. */
static void mmap2_file_fields(const struct sb_record *r, struct dump_fields *f)
{
	if (r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		size_t n = r->body_len > 32 ? r->body[32] : 0;

		n = n > 20 ? 20 : n;
		for (size_t i = 0; i < n; i++)
			snprintf(f->buf + 2 * i, 3, "%02x", r->body[36 + i]);
		f->buf[2 * n] = '\0';
		dump_field_put(f, "build_id", DF_STR, 0, f->buf);
	} else {
		dump_field_put(f, "maj", DF_U64, u32_at(r, 32), NULL);
		dump_field_put(f, "min", DF_U64, u32_at(r, 36), NULL);
		dump_field_put(f, "ino", DF_U64, u64_at(r, 40), NULL);
		dump_field_put(f, "ino_generation", DF_U64, u64_at(r, 48), NULL);
	}
	dump_field_put(f, "prot", DF_U64, u32_at(r, 56), NULL);
	dump_field_put(f, "flags", DF_U64, u32_at(r, 60), NULL);
}

static void mmap_fields(const struct sb_record *r, struct dump_fields *f)
{
	dump_field_put(f, "pid", DF_U64, u32_at(r, 0), NULL);
	dump_field_put(f, "tid", DF_U64, u32_at(r, 4), NULL);
	dump_field_put(f, "addr", DF_HEX, u64_at(r, 8), NULL);
	dump_field_put(f, "len", DF_HEX, u64_at(r, 16), NULL);
	dump_field_put(f, "pgoff", DF_HEX, u64_at(r, 24), NULL);
	if (r->type == PERF_RECORD_MMAP2)
		mmap2_file_fields(r, f);
	dump_field_put(f, "filename", DF_STR, 0, sideband_mmap_file(r));
}

static void aux_fields(const struct sb_record *r, struct dump_fields *f)
{
	uint64_t flags = u64_at(r, 16);

	dump_field_put(f, "aux_offset", DF_HEX, u64_at(r, 0), NULL);
	dump_field_put(f, "aux_size", DF_HEX, u64_at(r, 8), NULL);
	dump_field_put(f, "flags", DF_U64, flags, NULL);
	dump_field_put(f, "truncated", DF_BOOL, !!(flags & PERF_AUX_FLAG_TRUNCATED), NULL);
	dump_field_put(f, "overwrite", DF_BOOL, !!(flags & PERF_AUX_FLAG_OVERWRITE), NULL);
	dump_field_put(f, "partial", DF_BOOL, !!(flags & PERF_AUX_FLAG_PARTIAL), NULL);
	dump_field_put(f, "collision", DF_BOOL, !!(flags & PERF_AUX_FLAG_COLLISION), NULL);
}

static void task_fields(const struct sb_record *r, struct dump_fields *f)
{
	dump_field_put(f, "pid", DF_U64, u32_at(r, 0), NULL);
	dump_field_put(f, "ppid", DF_U64, u32_at(r, 4), NULL);
	dump_field_put(f, "tid", DF_U64, u32_at(r, 8), NULL);
	dump_field_put(f, "ptid", DF_U64, u32_at(r, 12), NULL);
	dump_field_put(f, "time", DF_U64, u64_at(r, 16), NULL);
}

static void other_fields(const struct sb_record *r, struct dump_fields *f)
{
	bool out = r->misc & PERF_RECORD_MISC_SWITCH_OUT;

	switch (r->type) {
	case PERF_RECORD_LOST:
		dump_field_put(f, "id", DF_U64, u64_at(r, 0), NULL);
		dump_field_put(f, "lost", DF_U64, u64_at(r, 8), NULL);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		dump_field_put(f, "time", DF_U64, u64_at(r, 0), NULL);
		dump_field_put(f, "id", DF_U64, u64_at(r, 8), NULL);
		dump_field_put(f, "stream_id", DF_U64, u64_at(r, 16), NULL);
		break;
	case PERF_RECORD_ITRACE_START:
		dump_field_put(f, "pid", DF_U64, u32_at(r, 0), NULL);
		dump_field_put(f, "tid", DF_U64, u32_at(r, 4), NULL);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		dump_field_put(f, "lost", DF_U64, u64_at(r, 0), NULL);
		break;
	case PERF_RECORD_SWITCH:
		dump_field_put(f, "out", DF_BOOL, out, NULL);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		dump_field_put(f, "out", DF_BOOL, out, NULL);
		dump_field_put(f, out ? "next_pid" : "prev_pid", DF_U64, u32_at(r, 0), NULL);
		dump_field_put(f, out ? "next_tid" : "prev_tid", DF_U64, u32_at(r, 4), NULL);
		break;
	}
}

void sbdump_fields(const struct sb_record *r, struct dump_fields *f)
{
	f->n = 0;
	f->buf[0] = '\0';
	if (!r->has_sample_id)
		return;		/* stepped over: libipt reads nothing in it */
	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		mmap_fields(r, f);
		break;
	case PERF_RECORD_COMM:
		dump_field_put(f, "pid", DF_U64, u32_at(r, 0), NULL);
		dump_field_put(f, "tid", DF_U64, u32_at(r, 4), NULL);
		dump_field_put(f, "comm", DF_STR, 0, str_at(r, 8));
		dump_field_put(f, "exec", DF_BOOL, !!(r->misc & PERF_RECORD_MISC_COMM_EXEC), NULL);
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		task_fields(r, f);
		break;
	case PERF_RECORD_AUX:
		aux_fields(r, f);
		break;
	default:
		other_fields(r, f);
		break;
	}
}

/* ---- the walk ---------------------------------------------------------------- */

int sbdump_walk(const uint8_t *buf, size_t len, const struct sbdump_opts *o, sbdump_fn *fn,
		void *ctx, uint64_t *records, struct error *e)
{
	char *line = malloc(SBDUMP_LINE_MAX);
	size_t off = 0, dropped = 0;
	int ret = 0;

	*records = 0;
	if (!line)
		return err_runtime(e, -ENOMEM, "no memory for a line");
	while (!ret && off < len) {
		struct sbdump_item item = { .offset = off, .text = line };
		struct sb_record r;
		int n = sideband_parse(buf, len, off, o->sample_type, &r, e);

		if (n < 0) {
			ret = n;
			break;
		}
		item.rec = &r;
		sbdump_line(&r, off, o, line, SBDUMP_LINE_MAX);
		ret = fn(&item, ctx);
		*records += !ret;
		off += (size_t)n;
		if (o->mapped)
			map_drop_behind(buf, off, &dropped);
	}
	free(line);
	return ret;
}
