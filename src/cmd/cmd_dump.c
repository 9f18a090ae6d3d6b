// SPDX-License-Identifier: MIT
/* ptcollect dump FILE: libipt's ptdump lines for a .pt trace or a .pevent sideband file. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "fileio.h"
#include "msg.h"
#include "out.h"
#include "ptdump_walk.h"
#include "ptpacket.h"
#include "ptpacket_print.h"
#include "sbdump.h"

void usage_dump(FILE *f)
{
	fprintf(f,
		"usage: %s dump [--json] [--format pevent|pt] [--no-offset] [PT OPTIONS]\n"
		"       [--sample-type N] FILE\n\n"
		"Print a raw Intel PT stream (.pt) as libipt's ptdump does: one line per\n"
		"packet (offset, name, payload), decoding errors as \"[offset: ...]\" lines,\n"
		"each followed by a resynchronization at the next PSB. Or print a perf\n"
		"sideband file (.pevent) as ptdump --sb:compact --sb:offset does: one line\n"
		"per record, read by libipt's rules. The format comes from the file name,\n"
		"or from --format.\n\n", PTC_PROG);
	cmd_print_options(f, dump_spec.options);
}

/* ptdump's --pevent:primary/secondary FILE: its records merged into the packet lines. */
#define MAX_SB 64

struct sb_conf {
	uint64_t sample_type, time_zero, tsc_offset;
	uint32_t time_mult;
	uint16_t time_shift;
};

struct sb_file {
	const char *path;
	struct sb_conf conf;	/* the --pevent:* options before it */
	struct file_map m;
	size_t next, end;	/* its records in lines[], in file order: the next to print */
};

struct sb_line {
	uint64_t tsc;
	char *text;
};

struct dump_args {
	const char *format, *path;
	uint64_t sample_type;
	struct ptdump_opts pt;
	const char *pt_only;	/* a PT option given, to refuse it for a .pevent */
	char **argv;
	struct sb_conf conf;	/* for the next --pevent:primary/secondary */
	struct sb_file sb[MAX_SB];
	int nr_sb;
	bool sb_offset, sb_time;	/* --sb:offset, --sb:time (--sb:compact is the format) */
	struct sb_line *lines;	/* every file's records, file after file */
	size_t nr_lines;
};

static void out_fields(const struct dump_fields *f)
{
	for (int i = 0; i < f->n; i++) {
		const struct dump_field *d = &f->f[i];

		switch (d->kind) {
		case DF_U64: out_u64(d->key, NULL, d->u); break;
		case DF_HEX: out_hex(d->key, NULL, d->u); break;
		case DF_STR: out_str(d->key, NULL, d->s); break;
		case DF_BOOL: out_bool(d->key, NULL, d->u); break;
		}
	}
}

/* ---- .pevent ------------------------------------------------------------------ */

static void out_sample(const struct sb_sample_id *s)
{
	if (!s->sample_type)
		return;
	out_obj_begin("sample", NULL);
	if (s->sample_type & PERF_SAMPLE_TID) {
		out_u64("pid", NULL, s->pid);
		out_u64("tid", NULL, s->tid);
	}
	if (s->sample_type & PERF_SAMPLE_TIME)
		out_u64s("time", NULL, s->time);
	if (s->sample_type & PERF_SAMPLE_ID)
		out_u64s("id", NULL, s->id);
	if (s->sample_type & PERF_SAMPLE_STREAM_ID)
		out_u64s("stream_id", NULL, s->stream_id);
	if (s->sample_type & PERF_SAMPLE_CPU)
		out_u64("cpu", NULL, s->cpu);
	if (s->sample_type & PERF_SAMPLE_IDENTIFIER)
		out_u64s("identifier", NULL, s->identifier);
	out_obj_end();
}

/*
 * Text goes out as it is made: once stdout fails (a reader that has gone,
 * a full disk), the walk stops (1) and main says so, once.
 */
static int stdout_gone(void)
{
	return ferror(stdout) ? 1 : 0;
}

static int print_record(const struct sbdump_item *it, void *ctx)
{
	const struct sb_record *r = it->rec;
	const char *name = sideband_type_name(r->type);
	struct dump_fields f;

	(void)ctx;
	if (!out_json) {
		out_text("%s", it->text);
		return stdout_gone();
	}
	sbdump_fields(r, &f);
	out_obj_begin(NULL, NULL);
	out_u64("offset", NULL, it->offset);
	if (name)
		out_str("type", NULL, name);
	else
		out_u64("type", NULL, r->type);
	out_u64("misc", NULL, r->misc);
	out_u64("size", NULL, r->size);
	out_bool("read_by_libipt", NULL, r->has_sample_id);
	out_fields(&f);
	out_sample(&r->sid);
	out_obj_end();
	return 0;
}

static int dump_pevent(const struct dump_args *a, const struct file_map *m)
{
	struct sbdump_opts o = { .sample_type = a->sample_type, .no_offset = a->pt.no_offset,
				   .mapped = m->p != NULL };
	struct error e = { 0 };
	uint64_t records = 0;
	int ret;

	out_obj_begin(NULL, NULL);
	if (out_json) {
		out_str("file", NULL, a->path);
		out_hex("sample_type", NULL, a->sample_type);
		out_arr_begin("records", NULL);
	}
	ret = sbdump_walk(m->p, m->len, &o, print_record, NULL, &records, &e);
	if (ret > 0)
		ret = 0;	/* stdout failed: main says so */
	if (out_json) {
		out_arr_end();
		out_u64("count", NULL, records);
	}
	out_obj_end();
	out_finish();
	if (ret) {
		msg_err("dump: %s: %s", a->path, e.why);
		msg_hint("the %" PRIu64 " records before it were printed; a .pevent written with "
			 "another sample_type needs --sample-type", records);
		return e.usage ? EXIT_USAGE : EXIT_RUNTIME;
	}
	return EXIT_OK;
}

/* ---- .pt ------------------------------------------------------------------------ */

/*
 * The sideband records up to @tsc (all: UINT64_MAX), as libipt's pt_sb_dump(): each file's
 * in its order, the file whose next record is earliest first (the first given on a tie).
 */
static int flush_sb(struct dump_args *a, uint64_t tsc)
{
	for (;;) {
		struct sb_file *best = NULL;

		for (int i = 0; i < a->nr_sb; i++) {
			struct sb_file *f = &a->sb[i];

			if (f->next < f->end &&
			    (!best || a->lines[f->next].tsc < a->lines[best->next].tsc))
				best = f;
		}
		if (!best || a->lines[best->next].tsc > tsc)
			return 0;
		out_text("%s", a->lines[best->next++].text);
		if (stdout_gone())
			return 1;
	}
}

static int print_packet(const struct ptdump_line *l, void *ctx)
{
	struct dump_args *a = ctx;
	struct dump_fields f;

	if (l->sb_due && flush_sb(a, l->tsc))
		return 1;
	if (l->kind == PTDUMP_TIME)
		return 0;
	if (!out_json) {
		out_text("%s", l->text);
		return stdout_gone();
	}
	out_obj_begin(NULL, NULL);
	out_u64("offset", NULL, l->offset);
	if (l->kind == PTDUMP_ERROR) {
		out_str("error", NULL, pt_errstr(pt_errcode(l->code)));
		out_str("context", NULL, l->context);
	} else {
		out_str("type", NULL, ptpacket_name(l->pkt));
		out_u64("size", NULL, l->pkt->size);
		ptpacket_fields(l->pkt, &f);
		out_fields(&f);
	}
	out_obj_end();
	return 0;
}

static int dump_pt(struct dump_args *a, const struct file_map *m)
{
	struct ptdump_opts o = a->pt;
	struct ptdump_stats st;
	struct error e = { 0 };
	int ret;

	o.mapped = m->p != NULL;
	o.fd = m->fd;
	out_obj_begin(NULL, NULL);
	if (out_json) {
		out_str("file", NULL, a->path);
		out_arr_begin("packets", NULL);
	}
	ret = ptdump_walk(m->p, m->len, &o, print_packet, a, &st, &e);
	if (!ret)
		ret = flush_sb(a, UINT64_MAX);
	if (ret > 0)
		ret = 0;	/* stdout failed: main says so */
	if (out_json) {
		out_arr_end();
		out_u64("count", NULL, st.packets);
		out_u64("errors", NULL, st.errors);
	}
	out_obj_end();
	out_finish();
	if (ret) {
		msg_err("dump: %s: %s", a->path, e.why);
		return EXIT_RUNTIME;
	}
	if (!m->len)
		msg_note("dump: %s holds no bytes", a->path);
	else if (!st.synced)
		msg_warn("dump: %s: no PSB packet, so nothing to decode from (ptdump prints "
			 "nothing either; --no-sync decodes from offset 0)", a->path);
	if (st.errors)
		msg_warn("dump: %s: %" PRIu64 " decoding errors, each printed at its offset; after "
			 "each the dump went on at the next PSB", a->path, st.errors);
	return st.status ? EXIT_RUNTIME : EXIT_OK;
}

/* ---- arguments ---------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

enum {
	OPT_FORMAT = 256, OPT_SAMPLE_TYPE, OPT_NO_OFFSET, OPT_RAW, OPT_LASTIP, OPT_EXEC_MODE,
	OPT_NO_PAD, OPT_NO_TIMING, OPT_NO_CYC, OPT_NO_SYNC, OPT_QUIET, OPT_CPU, OPT_TIME,
	OPT_TCAL, OPT_TIME_DELTA, OPT_NO_TCAL, OPT_NO_WALL_CLOCK, OPT_KEEP_TCAL, OPT_MTC_FREQ,
	OPT_NOM_FREQ, OPT_EAX, OPT_EBX, OPT_PRIMARY, OPT_SECONDARY, OPT_SB_SAMPLE_TYPE,
	OPT_TIME_ZERO, OPT_TIME_SHIFT, OPT_TIME_MULT, OPT_TSC_OFFSET, OPT_SB_COMPACT, OPT_SB_OFFSET,
	OPT_SB_TIME,
};

static const struct cmd_option dump_options[] = {
	CMD_OPT(0, "format", REQUIRED, "pevent|pt", OPT_FORMAT, "the file's format (default: "
		"from its name)"),
	CMD_OPT(0, "no-offset", NONE, NULL, OPT_NO_OFFSET, "no offset column"),
	CMD_OPT(0, "sample-type", REQUIRED, "N", OPT_SAMPLE_TYPE, "the sample_id layout of the "
		".pevent records\n(default 0x10086)"),
	CMD_OPT_JSON("one JSON object a line"),
	CMD_OPT_HELP,
	CMD_OPT_TEXT("\nPT OPTIONS (ptdump's):"),
	CMD_OPT(0, "raw", NONE, NULL, OPT_RAW, "the packet's bytes in hex"),
	CMD_OPT(0, "lastip", NONE, NULL, OPT_LASTIP, "the last IP after IP packets"),
	CMD_OPT(0, "exec-mode", NONE, NULL, OPT_EXEC_MODE, "the execution mode on MODE.Exec"),
	CMD_OPT(0, "no-pad", NONE, NULL, OPT_NO_PAD, "no PAD packets"),
	CMD_OPT(0, "no-timing", NONE, NULL, OPT_NO_TIMING, "no timing packets"),
	CMD_OPT(0, "no-cyc", NONE, NULL, OPT_NO_CYC, "no CYC packets"),
	CMD_OPT(0, "no-sync", NONE, NULL, OPT_NO_SYNC, "decode from offset 0, no sync at a PSB"),
	CMD_OPT(0, "quiet", NONE, NULL, OPT_QUIET, "error lines only"),
	CMD_OPT(0, "cpu", REQUIRED, "F/M[/S]", OPT_CPU, "the CPU the trace came from (libipt's "
		"errata\nfor it)"),
	CMD_OPT(0, "time", NONE, NULL, OPT_TIME, "libipt's TSC estimate after each timing "
		"packet"),
	CMD_OPT(0, "tcal", NONE, NULL, OPT_TCAL, "its time calibration (fast counter:cycles) "
		"instead"),
	CMD_OPT(0, "time-delta", NONE, NULL, OPT_TIME_DELTA, "the change since the last, not "
		"the value"),
	CMD_OPT(0, "no-tcal", NONE, NULL, OPT_NO_TCAL, "no time calibration"),
	CMD_OPT(0, "no-wall-clock", NONE, NULL, OPT_NO_WALL_CLOCK, "time from 0 where no TSC "
		"came yet"),
	CMD_OPT(0, "keep-tcal-on-ovf", NONE, NULL, OPT_KEEP_TCAL, "keep the calibration over "
		"an OVF"),
	CMD_OPT(0, "mtc-freq", REQUIRED, "N", OPT_MTC_FREQ, "the MTC frequency (mtc_period)"),
	CMD_OPT(0, "nom-freq", REQUIRED, "N", OPT_NOM_FREQ, "the nominal core:bus ratio"),
	CMD_OPT(0, "cpuid-0x15.eax", REQUIRED, "N", OPT_EAX, "CPUID leaf 0x15's eax"),
	CMD_OPT(0, "cpuid-0x15.ebx", REQUIRED, "N", OPT_EBX, "CPUID leaf 0x15's ebx"),
	CMD_OPT_TEXT("\nSIDEBAND (ptdump's: records merged into the packet lines by time):"),
	CMD_OPT(0, "pevent:primary", REQUIRED, "FILE", OPT_PRIMARY, "a .pevent file of this "
		"trace's CPU"),
	CMD_OPT(0, "pevent:secondary", REQUIRED, "FILE", OPT_SECONDARY, "a .pevent file of "
		"another CPU"),
	CMD_OPT(0, "pevent:sample-type", REQUIRED, "N", OPT_SB_SAMPLE_TYPE, "the sample_type of "
		"the files after it"),
	CMD_OPT(0, "pevent:time-zero", REQUIRED, "N", OPT_TIME_ZERO, "perf's time_zero (for "
		"the files after it)"),
	CMD_OPT(0, "pevent:time-shift", REQUIRED, "N", OPT_TIME_SHIFT, "perf's time_shift"),
	CMD_OPT(0, "pevent:time-mult", REQUIRED, "N", OPT_TIME_MULT, "perf's time_mult"),
	CMD_OPT(0, "pevent:tsc-offset", REQUIRED, "N", OPT_TSC_OFFSET, "print records this "
		"many ticks early"),
	CMD_OPT(0, "sb:compact", NONE, NULL, OPT_SB_COMPACT, "records in ptdump's compact "
		"format (the one)"),
	CMD_OPT(0, "sb:offset", NONE, NULL, OPT_SB_OFFSET, "each record's offset in its file"),
	CMD_OPT(0, "sb:time", NONE, NULL, OPT_SB_TIME, "each record's time (TSC)"),
	CMD_OPT_END,
};

const struct cmd_spec dump_spec = { "dump", dump_options, usage_dump, false };

/* The flag a PT-only option sets. */
static bool *pt_flag(struct ptdump_opts *o, int c)
{
	switch (c) {
	case OPT_RAW: return &o->raw;
	case OPT_LASTIP: return &o->lastip;
	case OPT_EXEC_MODE: return &o->exec_mode;
	case OPT_NO_PAD: return &o->no_pad;
	case OPT_NO_TIMING: return &o->no_timing;
	case OPT_NO_CYC: return &o->no_cyc;
	case OPT_NO_SYNC: return &o->no_sync;
	case OPT_QUIET: return &o->quiet;
	case OPT_TIME: return &o->time;
	case OPT_TCAL: return &o->tcal;
	case OPT_TIME_DELTA: return &o->time_delta;
	case OPT_NO_TCAL: return &o->no_tcal;
	case OPT_NO_WALL_CLOCK: return &o->no_wall_clock;
	case OPT_KEEP_TCAL: return &o->keep_tcal_on_ovf;
	default: return NULL;
	}
}

/* --cpu F/M[/S] in decimal, as ptdump reads it; 0, else the exit status. */
static int opt_cpu(struct ptdump_opts *o, const char *arg)
{
	unsigned f, m, s = 0;
	int n = 0;
	char end;

	if ((sscanf(arg, "%u/%u/%u%c", &f, &m, &s, &end) != 3 &&
	     (s = 0, sscanf(arg, "%u/%u%n", &f, &m, &n) != 2 || arg[n])) ||
	    f > 0xffff || m > 0xff || s > 0xff || strchr(arg, '-') || strchr(arg, '+') ||
	    strchr(arg, ' '))
		return cmd_bad_usage("dump", "--cpu '%s': give family/model[/stepping] in decimal "
				     "(e.g. 6/85 or 6/85/4)", arg);
	o->has_cpu = true;
	o->cpu.vendor = pcv_intel;
	o->cpu.family = (uint16_t)f;
	o->cpu.model = (uint8_t)m;
	o->cpu.stepping = (uint8_t)s;
	return 0;
}

/*
 * --mtc-freq (0-15: IA32_RTIT_CTL's 4-bit MTCFreq, as decode takes it; the estimate shifts by
 * it and 24 on would overflow), --nom-freq (0-255), --cpuid-0x15.eax/ebx (32 bits); 0, else
 * the exit status.
 */
static int opt_number(struct dump_args *a, int c, const char *arg)
{
	const char *name = c == OPT_MTC_FREQ ? "--mtc-freq" : c == OPT_NOM_FREQ ? "--nom-freq" :
			   c == OPT_EAX ? "--cpuid-0x15.eax" : "--cpuid-0x15.ebx";
	uint64_t max = c == OPT_MTC_FREQ ? 15 : c == OPT_NOM_FREQ ? 0xff : 0xffffffff;
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || *end || !*arg || !isdigit((unsigned char)*arg) || v > max)
		return cmd_bad_usage("dump", "%s '%s': give a number from 0 to %" PRIu64, name, arg,
				     max);
	a->pt_only = name;
	if (c == OPT_MTC_FREQ)
		a->pt.mtc_freq = (uint8_t)v;
	else if (c == OPT_NOM_FREQ)
		a->pt.nom_freq = (uint8_t)v;
	else if (c == OPT_EAX)
		a->pt.cpuid_0x15_eax = (uint32_t)v;
	else
		a->pt.cpuid_0x15_ebx = (uint32_t)v;
	return 0;
}

/* --pevent:sample-type, time-zero, time-shift, time-mult, tsc-offset; 0, else the exit status. */
static int opt_sb_number(struct dump_args *a, int c, const char *arg)
{
	const char *name = c == OPT_SB_SAMPLE_TYPE ? "--pevent:sample-type" :
			   c == OPT_TIME_ZERO ? "--pevent:time-zero" :
			   c == OPT_TIME_SHIFT ? "--pevent:time-shift" :
			   c == OPT_TIME_MULT ? "--pevent:time-mult" : "--pevent:tsc-offset";
	uint64_t max = c == OPT_TIME_SHIFT ? 63 : c == OPT_TIME_MULT ? 0xffffffff : UINT64_MAX;
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || *end || !*arg || !isdigit((unsigned char)*arg) || v > max ||
	    (c == OPT_TIME_MULT && !v))
		return cmd_bad_usage("dump", "%s '%s': give a number from %d to %" PRIu64, name,
				     arg, c == OPT_TIME_MULT, max);
	if (c == OPT_SB_SAMPLE_TYPE)
		a->conf.sample_type = v;
	else if (c == OPT_TIME_ZERO)
		a->conf.time_zero = v;
	else if (c == OPT_TIME_SHIFT)
		a->conf.time_shift = (uint16_t)v;
	else if (c == OPT_TIME_MULT)
		a->conf.time_mult = (uint32_t)v;
	else
		a->conf.tsc_offset = v;
	return 0;
}

/* 0 to go on, else the exit status. */
static int parse_option(void *args, int c, char *arg)
{
	struct dump_args *a = args;
	bool *flag = pt_flag(&a->pt, c);
	char *end;

	if (flag) {
		*flag = true;
		a->pt_only = a->argv[optind - 1];
		return 0;
	}
	switch (c) {
	case OPT_FORMAT:
		if (strcmp(arg, "pevent") && strcmp(arg, "pt"))
			return cmd_bad_usage("dump", "--format '%s': use pevent or pt", arg);
		a->format = arg;
		return 0;
	case OPT_SAMPLE_TYPE:
		errno = 0;
		a->sample_type = strtoull(arg, &end, 0);
		if (errno || *end || !*arg || *arg == '-')
			return cmd_bad_usage("dump", "--sample-type '%s' is not a number "
					     "(e.g. 0x10086)", arg);
		return 0;
	case OPT_NO_OFFSET:
		a->pt.no_offset = true;
		return 0;
	case OPT_CPU:
		a->pt_only = "--cpu";
		return opt_cpu(&a->pt, arg);
	case OPT_MTC_FREQ:
	case OPT_NOM_FREQ:
	case OPT_EAX:
	case OPT_EBX:
		return opt_number(a, c, arg);
	case OPT_PRIMARY:
	case OPT_SECONDARY:
		if (a->nr_sb == MAX_SB)
			return cmd_bad_usage("dump", "%s %s: at most %d sideband files",
					     c == OPT_PRIMARY ? "--pevent:primary" :
					     "--pevent:secondary", arg, MAX_SB);
		a->sb[a->nr_sb].path = arg;
		a->sb[a->nr_sb++].conf = a->conf;
		a->pt.track_sb = true;
		a->pt_only = c == OPT_PRIMARY ? "--pevent:primary" : "--pevent:secondary";
		return 0;
	case OPT_SB_SAMPLE_TYPE:
	case OPT_TIME_ZERO:
	case OPT_TIME_SHIFT:
	case OPT_TIME_MULT:
	case OPT_TSC_OFFSET:
		return opt_sb_number(a, c, arg);
	case OPT_SB_COMPACT:
		return 0;
	case OPT_SB_OFFSET:
		a->sb_offset = true;
		return 0;
	case OPT_SB_TIME:
		a->sb_time = true;
		return 0;
	default:
		return 0;
	}
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct dump_args *a)
{
	int ret;

	a->argv = argv;
	ret = cmd_parse_options(&dump_spec, argc, argv, parse_option, a);
	if (ret != CMD_GO_ON)
		return ret;
	if (argc - optind != 1)
		return cmd_bad_usage("dump", "expected one FILE");
	a->path = argv[optind];
	if (!a->format && ends_with(a->path, ".pevent"))
		a->format = "pevent";
	else if (!a->format && ends_with(a->path, ".pt"))
		a->format = "pt";
	else if (!a->format)
		return cmd_bad_usage("dump", "%s: cannot tell the format from the name "
				     "(.pevent or .pt); give --format", a->path);
	if (!strcmp(a->format, "pevent") && a->pt_only)
		return cmd_bad_usage("dump", "%s applies to a .pt trace, not to a .pevent file",
				     a->pt_only);
	if (a->nr_sb && out_json)
		return cmd_bad_usage("dump", "--pevent:primary/secondary merge text lines; with "
				     "--json dump each .pevent file by itself");
	if (a->pt.time && a->pt.tcal)
		return cmd_bad_usage("dump", "--time and --tcal share one column: give one of them "
				     "(as ptdump)");
	if ((a->pt.time_delta || a->pt.no_wall_clock || a->pt.keep_tcal_on_ovf) &&
	    !a->pt.time && !a->pt.tcal)
		return cmd_bad_usage("dump", "%s changes the time column: give --time or --tcal "
				     "with it", a->pt.time_delta ? "--time-delta" :
				     a->pt.no_wall_clock ? "--no-wall-clock" : "--keep-tcal-on-ovf");
	return -1;
}

/* perf time to TSC, as libipt's sideband library converts it. */
static uint64_t sb_tsc(const struct sb_conf *c, uint64_t time)
{
	uint64_t quot, rem, tsc;

	if (!c->time_mult)
		return 0;
	time -= c->time_zero;
	quot = time / c->time_mult;
	rem = time % c->time_mult;
	tsc = (quot << c->time_shift) + ((rem << c->time_shift) / c->time_mult);
	return tsc > c->tsc_offset ? tsc - c->tsc_offset : 0;
}

struct sb_collect {
	struct dump_args *a;
	const struct sb_conf *conf;
	size_t cap;
};

static int collect_record(const struct sbdump_item *it, void *ctx)
{
	struct sb_collect *k = ctx;
	struct dump_args *a = k->a;
	struct sb_line *l;
	uint64_t tsc = it->rec->sid.sample_type & PERF_SAMPLE_TIME ?
		       sb_tsc(k->conf, it->rec->sid.time) : 0;
	char pre[40] = "";
	size_t n = 0;

	if (a->nr_lines == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 256;
		struct sb_line *p = realloc(a->lines, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		a->lines = p;
		k->cap = cap;
	}
	if (a->sb_offset)
		n += (size_t)snprintf(pre + n, sizeof(pre) - n, "%016" PRIx64 "  ", it->offset);
	if (a->sb_time)
		n += (size_t)snprintf(pre + n, sizeof(pre) - n, "%016" PRIx64 "  ", tsc);
	l = &a->lines[a->nr_lines];
	l->tsc = tsc;
	if (asprintf(&l->text, "%s%s", pre, it->text) < 0)
		return -ENOMEM;
	a->nr_lines++;
	return 0;
}

/* Read every --pevent file's records, in time order; 0, else the exit status. */
static int load_sideband(struct dump_args *a)
{
	struct sb_collect k = { .a = a };
	struct error e = { 0 };

	for (int i = 0; i < a->nr_sb; i++) {
		struct sb_file *f = &a->sb[i];
		struct sbdump_opts o = { .sample_type = f->conf.sample_type, .no_offset = true };
		uint64_t records = 0;
		int ret;

		if (file_map_input(AT_FDCWD, f->path, false, &f->m, &e))
			return cmd_error("dump", &e);
		k.conf = &f->conf;
		f->next = a->nr_lines;
		ret = sbdump_walk(f->m.p, f->m.len, &o, collect_record, &k, &records, &e);
		f->end = a->nr_lines;
		if (ret == -ENOMEM) {
			msg_err("dump: out of memory reading %s", f->path);
			return EXIT_RUNTIME;
		}
		if (ret) {
			msg_err("dump: %s: %s", f->path, e.why);
			msg_hint("its %" PRIu64 " records before it are merged; a file written with "
				 "another sample_type needs --pevent:sample-type before it", records);
			return EXIT_USAGE;
		}
	}
	return 0;
}

static void free_sideband(struct dump_args *a)
{
	for (size_t i = 0; i < a->nr_lines; i++)
		free(a->lines[i].text);
	free(a->lines);
	for (int i = 0; i < a->nr_sb; i++)
		file_unmap(&a->sb[i].m);
}

int do_dump(int argc, char **argv)
{
	struct dump_args a = { .sample_type = SIDEBAND_SAMPLE_TYPE,
			       .conf = { .sample_type = 0, .time_mult = 1 } };
	struct error e = { 0 };
	struct file_map m;
	int ret = parse_args(argc, argv, &a);

	if (ret >= 0)
		return ret;
	/* The descriptor kept for the holes of a sparse trace. */
	if (file_map_input(AT_FDCWD, a.path, true, &m, &e))
		return cmd_error("dump", &e);
	ret = load_sideband(&a);
	if (ret) {
		free_sideband(&a);
		file_unmap(&m);
		return ret;
	}
	/* ptdump's lines to a pipe or a file; a terminal never gets raw control characters. */
	out_raw_unless_tty();
	ret = !strcmp(a.format, "pevent") ? dump_pevent(&a, &m) : dump_pt(&a, &m);
	free_sideband(&a);
	file_unmap(&m);
	return ret;
}
