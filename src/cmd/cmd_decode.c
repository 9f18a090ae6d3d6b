// SPDX-License-Identifier: MIT
/*
 * ptcollect decode: instructions, branches, calls, statistics and a timeline
 * from Intel PT streams, with ptxed's option names (cmd_decode_opts.c reads
 * them). Here the command and its run: the timeline file, diagnostics,
 * progress, the statistics and the threads' accounting.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "cmd_decode.h"
#include "decode.h"
#include "msg.h"
#include "out.h"

/* Decode errors printed per stream; the rest are counted. */
#define ERRORS_SHOWN 50

struct report {
	const struct decode_config *cfg;
	uint64_t *shown;		/* decode errors printed per stream */
	uint64_t *hidden;
	bool progress;
	bool progress_shown;
};

static void on_diag(void *ctx, size_t stream, const struct decode_diag *d)
{
	struct report *r = ctx;

	switch (d->kind) {
	case DECODE_DIAG_ERROR:
		if (r->shown[stream] >= ERRORS_SHOWN) {
			r->hidden[stream]++;
			return;
		}
		r->shown[stream]++;
		if (r->progress_shown)
			fputs("\r\033[K", stderr);
		msg_err("%s: %s: offset 0x%" PRIx64 ", ip 0x%" PRIx64 ": %s (resuming at the "
			"next PSB)", decode_cmd_name, d->where, d->offset, d->ip, d->msg);
		break;
	case DECODE_DIAG_SB_ERROR:
	case DECODE_DIAG_WARNING:
		msg_warn("%s: %s: offset 0x%" PRIx64 ": %s", decode_cmd_name, d->where, d->offset, d->msg);
		break;
	case DECODE_DIAG_MORE:
		r->hidden[stream] += d->offset;
		break;
	case DECODE_DIAG_NOTE:
		if (r->progress_shown)
			fputs("\r\033[K", stderr);
		msg_warn("decode: %s: %s", d->where, d->msg);
		break;
	}
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct report *r = ctx;

	if (!r->progress || !total)
		return;
	fprintf(stderr, "\r%s: %3u%% of %.1f MB", decode_cmd_name, (unsigned)(done * 100 / total),
		(double)total / 1e6);
	r->progress_shown = true;
}

/*
 * Each cache's bound (a decoder thread's, whatever the trace); with the debug count, the
 * most of it a thread filled, which depends on how the streams were cut (-J, the fast
 * path): the output must not.
 */
static void print_caches(const struct decode_config *cfg, const struct decode_stats *st)
{
	bool debug = getenv("PTCOLLECT_DECODE_FAST_COUNT");
	struct decode_cache c;

	out_obj_begin("caches", "caches (each decoder thread's, bounded whatever the trace)");
	for (int i = 0; i < DECODE_CACHES; i++) {
		uint64_t used = 0;

		for (size_t k = 0; k < cfg->nr_streams; k++)
			if (st[k].cache_used[i] > used)
				used = st[k].cache_used[i];
		decode_cache_bound((enum decode_cache_id)i, &c);
		out_obj_begin(c.key, c.label);
		out_u64("entries", "bound, entries", c.entries);
		out_u64("bytes", "bound, bytes", c.bytes);
		if (debug)
			out_u64("used", "entries used", used);
		out_obj_end();
	}
	out_obj_end();
	/* And what the output waiting for its turn holds at most (-J 2 and more): the run's. */
	if (debug) {
		out_obj_begin("waiting", "output waiting for its turn (the run's, at this -J)");
		out_u64("bytes", "bound, bytes", decode_wait_mark(cfg->jobs ? cfg->jobs :
								  decode_default_jobs()));
		out_obj_end();
	}
}

static void print_stats(const struct decode_config *cfg, const struct decode_stats *st)
{
	out_obj_begin(NULL, NULL);
	out_arr_begin("streams", NULL);
	for (size_t i = 0; i < cfg->nr_streams; i++) {
		const struct decode_stats *s = &st[i];

		out_obj_begin(NULL, NULL);
		out_str("stream", NULL, cfg->streams[i].name);
		out_u64("bytes", "trace bytes", s->bytes);
		out_u64("instructions", NULL, s->insns);
		out_u64("branches", "taken branches", s->branches);
		out_u64("conditional", "conditional branches", s->cond);
		out_u64("calls", NULL, s->calls);
		out_u64("returns", NULL, s->returns);
		out_u64("far", "far transfers", s->far);
		out_u64("events", NULL, s->events);
		out_u64("enables", "trace enables", s->enables);
		out_u64("disables", "trace disables", s->disables);
		out_u64("overflows", NULL, s->overflows);
		out_u64("errors", "decode errors", s->errors);
		out_u64("gaps", NULL, s->gaps);
		out_u64("lost", "losses (sideband)", s->lost);
		/* A debug count, for the bench and docs/benchmarks.md: not a documented field. */
		if (getenv("PTCOLLECT_DECODE_FAST_COUNT"))
			out_u64("fast_segments", "PSB segments decoded fast", s->fast);
		out_obj_end();
	}
	out_arr_end();
	print_caches(cfg, st);
	out_obj_end();
	out_finish();
}

static bool same_file(const char *path, const struct stat *st)
{
	struct stat in;

	return path && !stat(path, &in) && in.st_dev == st->st_dev && in.st_ino == st->st_ino;
}

/* Is @st one of the decode's input files (a trace, sideband, an image)? Its path, or NULL. */
static const char *input_named(const struct decode_config *cfg, const struct stat *st)
{
	for (size_t i = 0; i < cfg->nr_streams; i++) {
		if (same_file(cfg->streams[i].pt, st))
			return cfg->streams[i].pt;
		for (size_t j = 0; j < cfg->streams[i].nr_sb; j++)
			if (same_file(cfg->streams[i].sb[j].path, st))
				return cfg->streams[i].sb[j].path;
	}
	for (size_t i = 0; i < cfg->nr_files; i++)
		if (same_file(cfg->files[i].path, st))
			return cfg->files[i].path;
	for (size_t i = 0; i < cfg->nr_kcore; i++)
		if (same_file(cfg->kcore[i].path, st))
			return cfg->kcore[i].path;
	return NULL;
}

/*
 * --timeline FILE is written new (0600, O_EXCL, no link followed) under a
 * temporary name beside it, and renamed to FILE when the decode succeeded:
 * a regular FILE that is there is replaced then, as perf and magic-trace
 * replace their output; a link, anything not a regular file, and any of the
 * decode's inputs are refused before anything is decoded. The temporary
 * name in @tmp (malloc'd); the descriptor, or -1 said.
 */
static int open_timeline(const struct decode_opts *o, char **tmp)
{
	const char *path = o->timeline, *in;
	struct stat st;
	int fd;

	*tmp = NULL;
	if (!lstat(path, &st)) {
		if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode)) {
			msg_err("%s: --timeline '%s': %s: the timeline replaces only a regular "
				"file", decode_cmd_name, path, S_ISLNK(st.st_mode) ? "a symbolic link" :
				S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
			msg_hint("name the file itself, or a new one");
			return -1;
		}
		in = input_named(&o->cfg, &st);
		if (in) {
			msg_err("%s: --timeline '%s': it is '%s', an input of this decode", decode_cmd_name, path,
				in);
			msg_hint("name a new file for the timeline");
			return -1;
		}
	} else if (errno != ENOENT) {
		msg_err("%s: --timeline '%s': %s", decode_cmd_name, path, strerror(errno));
		return -1;
	}
	if (asprintf(tmp, "%s.tmp-XXXXXX", path) < 0) {
		*tmp = NULL;
		msg_err("%s: out of memory", decode_cmd_name);
		return -1;
	}
	/* mkostemp: O_CREAT | O_EXCL, 0600, whatever the umask. */
	fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd < 0) {
		msg_err("%s: --timeline '%s': %s", decode_cmd_name, path, strerror(errno));
		free(*tmp);
		*tmp = NULL;
	}
	return fd;
}

/* The debug count of PTCOLLECT_DECODE_THREADS (docs/benchmarks.md): ms, thread by thread. */
static void print_acct(const struct decode_acct *a)
{
	static const char *const merge[3] = { "planned", "decoded", "turn" };

	fprintf(stderr, "%s: threads: wall %.1f ms, start %.1f, tail %.1f; main cpu %.1f "
		"(%.1f before the workers)", decode_cmd_name, a->wall_ns / 1e6, a->start_ns / 1e6,
		a->tail_ns / 1e6, a->main_cpu_ns / 1e6, a->prep_cpu_ns / 1e6);
	for (int i = 0; i < 3; i++)
		fprintf(stderr, ", merge waits %s %" PRIu64 " %.1f", merge[i], a->merge_waits[i],
			a->merge_wait_ns[i] / 1e6);
	fprintf(stderr, ", cuts %" PRIu64 " (unread %" PRIu64 "), planning read %" PRIu64
		" bytes\n", a->cuts, a->cuts_unread, a->plan_bytes);
	for (unsigned i = 0; i < a->workers; i++)
		fprintf(stderr, "%s: threads: worker %u: cpu %.1f (chunks %.1f in %" PRIu64 "), "
			"start waits %" PRIu64 " %.1f, room waits %" PRIu64 " %.1f, done at %.1f\n",
			decode_cmd_name, i, a->w[i].cpu_ns / 1e6, a->w[i].decode_cpu_ns / 1e6,
			a->w[i].chunks, a->w[i].start_waits, a->w[i].start_wait_ns / 1e6,
			a->w[i].room_waits, a->w[i].room_wait_ns / 1e6, a->w[i].end_ns / 1e6);
}

static int run(struct decode_opts *o)
{
	struct decode_stats *stats = calloc(o->cfg.nr_streams, sizeof(*stats));
	uint64_t *counts = calloc(2 * o->cfg.nr_streams, sizeof(*counts));
	struct report rep = { .cfg = &o->cfg };
	struct decode_io io = { .out_fd = 1, .timeline_fd = -1, .diag = on_diag, .ctx = &rep };
	struct decode_acct acct;
	uint64_t errors = 0;
	struct error e;
	char *timeline_tmp = NULL;
	int ret, status = EXIT_OK;

	if (!stats || !counts) {
		free(stats);
		free(counts);
		msg_err("%s: out of memory", decode_cmd_name);
		return EXIT_RUNTIME;
	}
	rep.shown = counts;
	rep.hidden = counts + o->cfg.nr_streams;
	rep.progress = isatty(2) && !msg_quiet;
	io.progress = on_progress;
	if (o->timeline && (io.timeline_fd = open_timeline(o, &timeline_tmp)) < 0) {
		free(stats);
		free(counts);
		return EXIT_USAGE;
	}
	fflush(stdout);
	err_clear(&e);
	if (getenv("PTCOLLECT_DECODE_THREADS"))
		io.acct = &acct;
	ret = decode_run(&o->cfg, &io, stats, &e);
	if (io.acct)
		print_acct(io.acct);
	if (rep.progress_shown)
		fputs("\r\033[K", stderr);
	if (io.timeline_fd >= 0 && close(io.timeline_fd) && !ret)
		ret = err_runtime(&e, -errno, "--timeline '%s': %s", o->timeline, strerror(errno));
	if (timeline_tmp && !ret && rename(timeline_tmp, o->timeline))
		ret = err_runtime(&e, -errno, "--timeline '%s': %s", o->timeline, strerror(errno));
	if (timeline_tmp && ret)
		unlink(timeline_tmp);
	free(timeline_tmp);
	if (ret) {
		if (e.usage && !e.hint[0])
			err_hint(&e, "see '%s help %s'", PTC_PROG, decode_cmd_name);
		status = cmd_error(decode_cmd_name, &e);
	} else {
		for (size_t i = 0; i < o->cfg.nr_streams; i++) {
			errors += stats[i].errors;
			if (rep.hidden[i])
				msg_err("%s: %s: %" PRIu64 " more decode errors not shown",
					decode_cmd_name, o->cfg.streams[i].name, rep.hidden[i]);
			if (stats[i].errors)
				msg_note("%s: %s: %" PRIu64 " decode errors: the trace between "
					 "each and the next PSB is missing from the output",
					 decode_cmd_name, o->cfg.streams[i].name, stats[i].errors);
		}
		if (o->want_stats)
			print_stats(&o->cfg, stats);
		/* The debug count of print_stats() for a command without --stats (report). */
		else if (getenv("PTCOLLECT_DECODE_FAST_COUNT"))
			for (size_t i = 0; i < o->cfg.nr_streams; i++)
				msg_note("%s: %s: %" PRIu64 " PSB segments decoded fast", decode_cmd_name,
					 o->cfg.streams[i].name, stats[i].fast);
		status = errors ? EXIT_USAGE : EXIT_OK;
	}
	free(stats);
	free(counts);
	return status;
}

static int decode_main(int argc, char **argv, const struct decode_variant *v)
{
	struct decode_opts o;
	int ret;

	memset(&o, 0, sizeof(o));
	o.v = v;
	decode_cmd_name = v ? v->spec->name : "decode";
	decode_config_init(&o.cfg);
	o.pev.time_mult = 1;
	ret = decode_opts_parse(&o, argc, argv);
	if (!ret)
		ret = run(&o);
	else if (ret < 0)
		ret = EXIT_OK;
	decode_pevent_free(&o.pev);
	decode_config_free(&o.cfg);
	free(o.sysroot);
	return ret;
}

int do_decode(int argc, char **argv)
{
	return decode_main(argc, argv, NULL);
}

int cmd_decode_run(int argc, char **argv, const struct decode_variant *v)
{
	return decode_main(argc, argv, v);
}
