// SPDX-License-Identifier: MIT
/*
 * The decoder's library parts on their own: perf's time conversion, libipt-sb's
 * rules for when sideband switches the decoder's process, the merge filters
 * of --calls and --timeline, and the ordered sinks of parallel chunks.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode_rec.h"
#include "decode_sb.h"
#include "disasm.h"
#include "dsink.h"
#include "memimage.h"
#include "render.h"
#include "timeline.h"

/* perf's own formula (perf_time_to_tsc's inverse, tsc_to_perf_time in tools/perf). */
static uint64_t perf_time(uint64_t tsc, uint64_t zero, uint32_t mult, uint16_t shift)
{
	uint64_t quot = tsc >> shift, rem = tsc & ((1ull << shift) - 1);

	return zero + quot * mult + ((rem * mult) >> shift);
}

Test(decode_sb, time_conversion_is_perfs_both_ways)
{
	/* The DynamoRIO trace's recording: its control page's values. */
	struct dsb_pevent p = { .time_zero = 18444502336406842448ull, .time_mult = 581029125,
				.time_shift = 31 };
	static const uint64_t tscs[] = { 1, 0x1000, 0x2fa1088fb20aa3, 0x2fa1088fb38d21,
					 0x7fffffffffffull };

	/* A nanosecond is this many ticks: what a round trip may lose. */
	uint64_t tick = ((1ull << p.time_shift) + p.time_mult - 1) / p.time_mult;

	for (size_t i = 0; i < sizeof(tscs) / sizeof(tscs[0]); i++) {
		uint64_t t = perf_time(tscs[i], p.time_zero, p.time_mult, p.time_shift), back;

		cr_expect_eq(dsb_tsc_to_time(&p, tscs[i]), t);
		back = dsb_time_to_tsc(&p, t);
		cr_expect(back <= tscs[i] && tscs[i] - back <= tick, "tsc %#lx -> %lu -> %#lx",
			  (unsigned long)tscs[i], (unsigned long)t, (unsigned long)back);
	}
	/* Time 0 is a synthesized record's: the beginning. */
	cr_expect_eq(dsb_time_to_tsc(&p, 0), 0);
}

/* A sideband buffer as the kernel writes one, sample_type TID|TIME|CPU|IDENTIFIER. */
struct sbbuf {
	uint8_t b[4096];
	size_t len;
};

static void rec(struct sbbuf *s, uint32_t type, uint16_t misc, const void *body, size_t blen,
		uint32_t pid, uint32_t tid, uint64_t time)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	uint32_t two[2] = { pid, tid }, cpu[2] = { 0, 0 };
	uint64_t id = 7;

	h.size = (uint16_t)(sizeof(h) + blen + 32);
	cr_assert_lt(s->len + h.size, sizeof(s->b));
	memcpy(s->b + s->len, &h, sizeof(h));
	memcpy(s->b + s->len + 8, body, blen);
	memcpy(s->b + s->len + 8 + blen, two, 8);
	memcpy(s->b + s->len + 16 + blen, &time, 8);
	memcpy(s->b + s->len + 24 + blen, cpu, 8);
	memcpy(s->b + s->len + 32 + blen, &id, 8);
	s->len += h.size;
}

struct diags {
	int n, errors;
	uint64_t offset[16];
	char msg[16][600];
};

static void on_diag(void *ctx, const struct dsb_diag *d)
{
	struct diags *g = ctx;

	if (g->n < 16) {
		g->offset[g->n] = d->offset;
		snprintf(g->msg[g->n], sizeof(g->msg[0]), "%s", d->msg);
	}
	g->n++;
	g->errors += d->kind == DSB_ERROR;
}

static struct pt_event ev_at(enum pt_event_type type, uint64_t ip, uint64_t tsc, bool sup)
{
	struct pt_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.tsc = tsc;
	ev.has_tsc = 1;
	ev.ip_suppressed = sup;
	ev.variant.enabled.ip = ip;	/* enabled, disabled, exec_mode: ip first */
	if (type == ptev_exec_mode) {
		ev.variant.exec_mode.mode = ptem_64bit;
		ev.variant.exec_mode.ip = ip;
	}
	return ev;
}

/*
 * libipt-sb's timing: a switch record is applied when the trace's time passes it, but the
 * decoder changes process only at an event in the kernel (or on the way there); an
 * ITRACE_START switches at once. Perf's own user records (type 64 and up) are stepped
 * over; a record whose size does not add up stops the file, at its offset.
 */
Test(decode_sb, switches_wait_for_the_kernel_and_itrace_start_does_not)
{
	struct dsb_file f = { .path = "cpu0.pevent", .primary = true };
	struct sbbuf s = { .len = 0 };
	uint8_t conv[24] = { 0 };
	uint32_t next[2] = { 200, 201 }, start[2] = { 100, 101 };
	struct image_store *img;
	struct diags g = { 0 };
	struct pt_image *image = NULL;
	struct error e;
	struct dsb *sb;
	struct pt_event ev;
	uint32_t pid, tid;

	f.pev.time_mult = 1;
	f.pev.sample_type = 0x10086;
	f.pev.kernel_start = 0xffff800000000000ull;
	/* A TIME_CONV-like record without sample_id, as perf writes them. */
	{
		struct perf_event_header h = { .type = 79, .size = 8 + sizeof(conv) };

		memcpy(s.b, &h, 8);
		memcpy(s.b + 8, conv, sizeof(conv));
		s.len = h.size;
	}
	rec(&s, PERF_RECORD_ITRACE_START, 0, start, 8, 100, 101, 1000);
	rec(&s, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT, next, 8, 100, 101, 2000);
	f.buf = s.b;
	f.len = s.len;
	err_clear(&e);
	cr_assert_eq(image_store_new(&img, NULL, &e), 0);
	cr_assert_eq(dsb_new(&sb, img, &f, 1, on_diag, &g, &e), 0);
	cr_expect(!dsb_thread(sb, &pid, &tid));

	ev = ev_at(ptev_enabled, 0x401000, 1500, false);
	dsb_event(sb, &ev, &image);
	cr_assert(dsb_thread(sb, &pid, &tid));
	cr_expect(pid == 100 && tid == 101, "%u/%u", pid, tid);
	cr_expect(image && image == image_proc_find(img, 100)->image);

	/* The switch-out is due, but the decoder is in user space: not yet. */
	image = NULL;
	ev = ev_at(ptev_exec_mode, 0x401010, 2500, false);
	dsb_event(sb, &ev, &image);
	cr_assert(dsb_thread(sb, &pid, &tid));
	cr_expect(pid == 100 && tid == 101 && !image, "%u/%u", pid, tid);

	/* Tracing stops on the way into the kernel: now. */
	ev = ev_at(ptev_disabled, 0, 2600, true);
	dsb_event(sb, &ev, &image);
	cr_assert(dsb_thread(sb, &pid, &tid));
	cr_expect(pid == 200 && tid == 201, "%u/%u", pid, tid);
	cr_expect(image && image == image_proc_find(img, 200)->image);
	cr_expect_eq(g.n, 0, "%s", g.msg[0]);
	dsb_free(sb);

	/* A record whose size does not add up: reported at its offset, the rest not read. */
	{
		struct perf_event_header *h = (struct perf_event_header *)(s.b + 32);

		h->size -= 8;
		g.n = g.errors = 0;
		cr_assert_eq(dsb_new(&sb, img, &f, 1, on_diag, &g, &e), 0);
		cr_expect_eq(g.errors, 1);
		cr_expect_eq(g.offset[0], 32, "%s", g.msg[0]);
		cr_expect(strstr(g.msg[0], "sideband error"), "%s", g.msg[0]);
		dsb_free(sb);
	}
	image_store_free(img);
}

/* MMAP2 of a file that does not exist, of //anon and of [vdso] without one: named. */
Test(decode_sb, mappings_that_cannot_be_read_are_reported)
{
	struct dsb_file f = { .path = "cpu0.pevent", .primary = true };
	struct sbbuf s = { .len = 0 };
	uint8_t body[64 + 32];
	struct image_store *img;
	struct diags g = { 0 };
	struct pt_image *image = NULL;
	struct pt_event ev;
	struct error e;
	struct dsb *sb;
	static const char *const names[] = { "/nonexistent/lib.so", "//anon", "[vdso]" };

	f.pev.time_mult = 1;
	f.pev.sample_type = 0x10086;
	for (size_t i = 0; i < 3; i++) {
		uint32_t pt[2] = { 42, 42 };
		uint64_t addr = 0x10000 * (i + 1), len = 0x1000, pgoff = 0;

		memset(body, 0, sizeof(body));
		memcpy(body, pt, 8);
		memcpy(body + 8, &addr, 8);
		memcpy(body + 16, &len, 8);
		memcpy(body + 24, &pgoff, 8);
		snprintf((char *)body + 64, 32, "%s", names[i]);
		/* The name with its NUL, padded to 8 (the size rule). */
		rec(&s, PERF_RECORD_MMAP2, 0, body, 64 + ((strlen(names[i]) + 8) & ~7ul), 42, 42,
		    10);
	}
	f.buf = s.b;
	f.len = s.len;
	err_clear(&e);
	cr_assert_eq(image_store_new(&img, NULL, &e), 0);
	cr_assert_eq(dsb_new(&sb, img, &f, 1, on_diag, &g, &e), 0);
	ev = ev_at(ptev_enabled, 0x401000, 100, false);
	dsb_event(sb, &ev, &image);
	cr_assert_eq(g.n, 3);
	cr_expect(strstr(g.msg[0], "bad file: /nonexistent/lib.so"), "%s", g.msg[0]);
	cr_expect(strstr(g.msg[1], "image section lost: //anon"), "%s", g.msg[1]);
	cr_expect(strstr(g.msg[2], "[vdso]") && strstr(g.msg[2], "--pevent:vdso"), "%s", g.msg[2]);
	dsb_free(sb);
	image_store_free(img);
}

/* Run records through an output's filter into a string (malloc'd). */
static char *filtered(dout_filter_fn *fn, void *state, void (*fill)(struct dsink *))
{
	FILE *t = tmpfile();
	struct dout o;
	struct dsink s;
	char *buf;
	long n;

	cr_assert(t);
	cr_assert_eq(dout_init(&o, fileno(t), fn, state), 0);
	dsink_init(&s, &o);
	cr_assert_eq(dsink_promote(&s), 0);
	fill(&s);
	cr_assert_eq(dsink_flush(&s, dsink_pos(&s)), 0);
	cr_assert_eq(dout_flush(&o), 0);
	n = lseek(fileno(t), 0, SEEK_END);
	buf = calloc(1, (size_t)n + 1);
	cr_assert_eq(pread(fileno(t), buf, (size_t)n, 0), n);
	dsink_destroy(&s);
	dout_destroy(&o);
	fclose(t);
	return buf;
}

/* What @rd's output gets at the merge from the records @fill writes (one stream). */
static char *rendered(const struct renderer *rd, void (*fill)(struct dsink *))
{
	struct decode_config cfg = { .nr_streams = 1 };
	FILE *t = tmpfile();
	struct dout o;
	struct dsink s;
	char *buf;
	long n;

	cr_assert(t);
	cr_assert_eq(render_open(&o, fileno(t), rd, &cfg), 0);
	dsink_init(&s, &o);
	cr_assert_eq(dsink_promote(&s), 0);
	fill(&s);
	cr_assert_eq(dsink_flush(&s, dsink_pos(&s)), 0);
	cr_assert_eq(render_close(&o, rd, true), 0);
	n = lseek(fileno(t), 0, SEEK_END);
	buf = calloc(1, (size_t)n + 1);
	cr_assert_eq(pread(fileno(t), buf, (size_t)n, 0), n);
	dsink_destroy(&s);
	fclose(t);
	return buf;
}

static void put(struct dsink *s, enum drec_kind k, uint64_t from, uint64_t to, uint64_t time,
		uint32_t tid, const char *s1, const char *s2)
{
	struct drec r;

	memset(&r, 0, sizeof(r));
	r.kind = (uint8_t)k;
	r.from = from;
	r.to = to;
	r.time = time;
	r.has_time = 1;
	r.pid = 1;
	r.tid = tid;
	drec_put(s, &r, s1, s2);
}

static void calls(struct dsink *s)
{
	put(s, DREC_STREAM, 0, 0, 0, 0, "cpu0.pt", NULL);
	put(s, DREC_RET, 0x10, 0x20, 0, 0, "f+0x3", "main+0x8");	/* entered before */
	put(s, DREC_CALL, 0x20, 0x30, 0, 0, "main+0x8", "g+0x0");
	put(s, DREC_CALL, 0x30, 0x40, 0, 0, "g+0x0", "h+0x0");
	put(s, DREC_MARK, 0, 0, 0, 0, "[disabled]", NULL);
	put(s, DREC_RET, 0x44, 0x35, 0, 0, "h+0x4", "g+0x5");
	put(s, DREC_RET, 0x36, 0x25, 0, 0, "g+0x6", "main+0xd");
}

Test(decode_rec, calls_indent_by_depth_and_returns_line_up)
{
	char *out = rendered(&render_calls, calls);

	cr_expect_str_eq(out,
		"ret  to main+0x8 (0x20) from f+0x3\n"
		"call g+0x0 (0x30) from main+0x8\n"
		"  call h+0x0 (0x40) from g+0x0\n"
		"    [disabled]\n"
		"  ret  to g+0x5 (0x35) from h+0x4\n"
		"ret  to main+0xd (0x25) from g+0x6\n");
	free(out);
	out = rendered(&render_calls_json, calls);
	cr_expect(strstr(out, "{\"stream\":\"cpu0.pt\"}\n"), "%s", out);
	cr_expect(strstr(out, "\"type\":\"call\",\"depth\":1,\"from\":\"0x30\",\"from_sym\":"
			 "\"g+0x0\",\"to\":\"0x40\",\"to_sym\":\"h+0x0\""), "%s", out);
	free(out);
}

/*
 * -J 2 --calls: a chunk's worker prints its lines itself once it knows the depth they are
 * at (its turn seeds the depth its chunk started at, or a stream starts), and the merge
 * only writes them; the records before go through the merge's filter. Eight chunks of a
 * walk of calls and returns (deeper than INDENT_MAX, returns at depth 0, a second stream
 * in the fourth chunk), each let go of partly before its turn and partly after, print
 * what one sink promoted at once prints (the -J 1 way), with the pieces in memory and
 * again in a file (a bound of 4 KiB); the workers did print some.
 */
static void walk_recs(struct dsink *s, unsigned from, unsigned to)
{
	char a[32], b[32];

	for (unsigned i = from; i < to; i++) {
		/* Up for 90 records, down to 0 and 8 more, then a jagged walk. */
		unsigned r = i < 90 ? 0 : i < 190 ? 1 : (i * 2654435761u) >> 29;
		enum drec_kind k = r < 3 ? DREC_CALL : r < 7 ? DREC_RET : DREC_MARK;

		if (i == 400) {
			put(s, DREC_STREAM, 0, 0, 0, 0, "cpu1.pt", NULL);
			continue;
		}
		if (r == 1 && i >= 190)
			k = DREC_RET;
		snprintf(a, sizeof(a), "f%u+0x%x", i % 7, i);
		snprintf(b, sizeof(b), "g%u", i % 5);
		put(s, k, i, 0x1000 + i, 0, 0, k == DREC_MARK ? "[disabled]" : a, b);
	}
}

#define WALK_RECS 1600
#define WALK_CHUNKS 8

static void walk_all(struct dsink *s)
{
	put(s, DREC_STREAM, 0, 0, 0, 0, "cpu0.pt", NULL);
	walk_recs(s, 0, WALK_RECS);
}

static int unframed;
static void count_unframe(struct dout *o, const uint8_t *data, size_t len)
{
	unframed++;
	render_calls.unframe(o, data, len);
}

static char *walk_merged(uint64_t bound, uint64_t *spilled)
{
	struct decode_config cfg = { .nr_streams = 2 };
	struct dsink s[WALK_CHUNKS];
	FILE *t = tmpfile();
	struct dbudget b;
	struct dout o;
	unsigned per = WALK_RECS / WALK_CHUNKS;
	char *buf;
	long n;

	cr_assert(t);
	dbudget_init(&b, bound);
	cr_assert_eq(render_open(&o, fileno(t), &render_calls, &cfg), 0);
	cr_assert_not_null(o.convert);
	o.unframe = count_unframe;
	o.budget = &b;
	/* Each chunk's first third let go of before any turn. */
	for (unsigned c = 0; c < WALK_CHUNKS; c++) {
		dsink_init(&s[c], &o);
		if (!c)
			put(&s[c], DREC_STREAM, 0, 0, 0, 0, "cpu0.pt", NULL);
		walk_recs(&s[c], c * per, c * per + per / 3);
		cr_assert_eq(dsink_flush(&s[c], dsink_pos(&s[c])), 0);
	}
	for (unsigned c = 0; c < WALK_CHUNKS; c++) {
		dsink_turn(&s[c]);
		walk_recs(&s[c], c * per + per / 3, c * per + 2 * per / 3);
		cr_assert_eq(dsink_flush(&s[c], dsink_pos(&s[c])), 0);
		cr_assert_eq(dsink_pass(&s[c]), 0);
		walk_recs(&s[c], c * per + 2 * per / 3, c * per + per);
		cr_assert_eq(dsink_flush(&s[c], dsink_pos(&s[c])), 0);
		cr_assert_eq(dsink_promote(&s[c]), 0);
		dsink_destroy(&s[c]);
	}
	*spilled = b.spilled;
	cr_assert_eq(render_close(&o, &render_calls, true), 0);
	cr_expect_eq(b.held, 0);
	dbudget_destroy(&b);
	n = lseek(fileno(t), 0, SEEK_END);
	buf = calloc(1, (size_t)n + 1);
	cr_assert_eq(pread(fileno(t), buf, (size_t)n, 0), n);
	fclose(t);
	return buf;
}

Test(decode_rec, calls_the_workers_print_are_what_the_merge_printed)
{
	char *want, *got;
	uint64_t spilled;

	{
		struct decode_config cfg = { .nr_streams = 2 };
		FILE *t = tmpfile();
		struct dout o;
		struct dsink s;
		long n;

		cr_assert(t);
		cr_assert_eq(render_open(&o, fileno(t), &render_calls, &cfg), 0);
		dsink_init(&s, &o);
		cr_assert_eq(dsink_promote(&s), 0);
		walk_all(&s);
		cr_assert_eq(dsink_flush(&s, dsink_pos(&s)), 0);
		cr_assert_eq(render_close(&o, &render_calls, true), 0);
		dsink_destroy(&s);
		n = lseek(fileno(t), 0, SEEK_END);
		want = calloc(1, (size_t)n + 1);
		cr_assert_eq(pread(fileno(t), want, (size_t)n, 0), n);
		fclose(t);
	}
	cr_assert(strstr(want, "[depth 65] "), "the walk goes no deeper than INDENT_MAX");
	cr_assert(strstr(want, "[stream: cpu1.pt]\n"));
	unframed = 0;
	got = walk_merged(64u << 20, &spilled);
	cr_expect_str_eq(got, want);
	cr_expect_eq(spilled, 0);
	cr_expect_gt(unframed, 0, "no chunk's worker printed its lines");
	free(got);
	unframed = 0;
	got = walk_merged(4u << 10, &spilled);
	cr_expect_str_eq(got, want);
	cr_expect_gt(spilled, 0, "nothing went to the file with a bound of 4 KiB");
	cr_expect_gt(unframed, 0, "no chunk's worker printed its lines");
	free(got);
	free(want);
}

/*
 * --calls' indentation at each width of its depth: two blanks a level up to 64, then 128
 * blanks and "[depth N] ", N of 2 to 5 digits (put_indent() writes the digits in place).
 */
Test(decode_rec, calls_indent_at_each_depth_and_number_width)
{
	static const unsigned depths[] = { 0, 1, 9, 10, 63, 64, 65, 99, 100, 999, 1000, 9999,
					   10000, 10001 };
	struct decode_config cfg = { .nr_streams = 1 };
	FILE *t = tmpfile();
	struct dout o;
	struct dsink s;
	char *buf, *line, want[256];
	long n;

	cr_assert(t);
	cr_assert_eq(render_open(&o, fileno(t), &render_calls, &cfg), 0);
	dsink_init(&s, &o);
	cr_assert_eq(dsink_promote(&s), 0);
	for (unsigned i = 0; i <= 10001; i++)
		put(&s, DREC_CALL, 0x20, 0x30, 0, 0, "f+0x1", "g+0x0");
	cr_assert_eq(dsink_flush(&s, dsink_pos(&s)), 0);
	cr_assert_eq(render_close(&o, &render_calls, true), 0);
	dsink_destroy(&s);
	n = lseek(fileno(t), 0, SEEK_END);
	buf = calloc(1, (size_t)n + 1);
	cr_assert(buf);
	cr_assert_eq(pread(fileno(t), buf, (size_t)n, 0), n);
	fclose(t);
	line = buf;
	for (unsigned d = 0, k = 0; d <= 10001; d++) {
		char *end = strchr(line, '\n');

		cr_assert(end, "line %u", d);
		*end = '\0';
		if (k < sizeof(depths) / sizeof(depths[0]) && depths[k] == d) {
			if (d <= 64)
				snprintf(want, sizeof(want), "%*scall g+0x0 (0x30) from f+0x1",
					 (int)(2 * d), "");
			else
				snprintf(want, sizeof(want), "%128s[depth %u] call g+0x0 (0x30) from f+0x1",
					 "", d);
			cr_assert_str_eq(line, want, "depth %u", d);
			k++;
		}
		line = end + 1;
	}
	cr_assert_eq(*line, '\0');
	free(buf);
}

/* The header of a timeline record as a chunk makes it: a call's, with a time. */
static void tl_rec(struct drec *r, enum drec_kind k, uint64_t time, uint32_t tid)
{
	memset(r, 0, sizeof(*r));
	r->kind = (uint8_t)k;
	r->time = time;
	r->has_time = 1;
	r->pid = 1;
	r->tid = tid;
	r->how = DREC_HOW_CALL;
}

/* A timeline record as a chunk makes it (timeline_put()): a call's name as JSON, times. */
static void tl_put(struct dsink *s, enum drec_kind k, uint64_t time, uint32_t tid,
		   const char *name)
{
	struct drec r;

	tl_rec(&r, k, time, tid);
	timeline_put(s, &r, name);
}

/*
 * timeline_put_len(), the lengths known, writes the records timeline_put() writes: a
 * call's name as JSON (plain, escaped, its copy kept for the thread, cut at 1024 bytes,
 * none) and the time's text (spelled, or left out where it did not move).
 */
static bool tl_known_len;

static void tl_put_either(struct dsink *s, enum drec_kind k, uint64_t time, const char *name)
{
	struct drec r;

	tl_rec(&r, k, time, 2);
	if (tl_known_len)
		timeline_put_len(s, &r, name, name ? strnlen(name, TIMELINE_NAME_MAX) : 0);
	else
		timeline_put(s, &r, name);
}

static void tl_calls(struct dsink *s)
{
	static char longname[1101];

	memset(longname, 'x', sizeof(longname) - 1);
	tl_put_either(s, DREC_CALL, 1000, "main+0x10");
	tl_put_either(s, DREC_CALL, 1000, "g\"\n");
	tl_put_either(s, DREC_RET, 1500, NULL);
	tl_put_either(s, DREC_CALL, 2000, "g\"\n");
	tl_put_either(s, DREC_CALL, 2000, "caf\xc3\xa9\xff");
	tl_put_either(s, DREC_CALL, 3000, longname);
	tl_put_either(s, DREC_CALL, 3000, NULL);
	tl_put_either(s, DREC_GAP, 4000, "overflow");
}

static void raw_records(struct dout *o, const uint8_t *data, size_t len)
{
	dout_write(o, data, len);
}

/* The records @fill writes, as they are; their bytes in *@n. */
static uint8_t *records_of(void (*fill)(struct dsink *), size_t *n)
{
	FILE *t = tmpfile();
	struct dout o;
	struct dsink s;
	uint8_t *buf;

	cr_assert(t);
	cr_assert_eq(dout_init(&o, fileno(t), raw_records, NULL), 0);
	dsink_init(&s, &o);
	cr_assert_eq(dsink_promote(&s), 0);
	fill(&s);
	cr_assert_eq(dsink_flush(&s, dsink_pos(&s)), 0);
	cr_assert_eq(dout_flush(&o), 0);
	*n = (size_t)lseek(fileno(t), 0, SEEK_END);
	buf = calloc(1, *n + 1);
	cr_assert_eq(pread(fileno(t), buf, *n, 0), (ssize_t)*n);
	dsink_destroy(&s);
	dout_destroy(&o);
	fclose(t);
	return buf;
}

Test(decode_rec, timeline_put_len_writes_what_timeline_put_writes)
{
	uint8_t *a, *b;
	const struct drec *r;
	size_t na, nb, off = 0, recs = 0;

	tl_known_len = false;
	a = records_of(tl_calls, &na);
	tl_known_len = true;
	b = records_of(tl_calls, &nb);
	cr_assert_gt(na, 0);
	cr_assert_eq(nb, na);
	cr_assert_eq(memcmp(a, b, na), 0, "the same records, byte for byte");
	while ((r = drec_next(b, nb, &off))) {
		cr_assert_eq(r->len1, strlen(drec_s1(r)), "record %zu", recs);
		cr_assert_eq(r->len2, strlen(drec_s2(r)), "record %zu", recs);
		recs++;
	}
	cr_assert_eq(recs, 8);
	/*
	 * Each call's name as the file spells it (jansson's, where not plain; the second
	 * g is the thread's kept copy); the cut name: 1024 bytes and its quotes; the
	 * time's text once a time.
	 */
	off = 0;
	for (size_t i = 0; (r = drec_next(b, nb, &off)); i++) {
		/* (\u: the character in UTF-8, as jansson writes it; \xff as U+FFFD.) */
		static const char *const want[] = {
			"\"main+0x10\"", "\"g\\\"\\n\"", NULL, "\"g\\\"\\n\"",
			"\"caf\u00e9\ufffd\"", NULL, "\"\"", NULL,
		};

		if (want[i])
			cr_assert_str_eq(drec_s1(r), want[i], "record %zu", i);
		if (i == 5)
			cr_assert_eq(r->len1, 1026);
		if (i == 1 || i == 4 || i == 6)
			cr_assert_eq(r->len2, 0, "record %zu: the time did not move", i);
	}
	free(a);
	free(b);
}

static void threads(struct dsink *s)
{
	put(s, DREC_STREAM, 0, 0, 0, 0, "cpu0.pt", NULL);
	tl_put(s, DREC_THREAD, 1000, 11, NULL);
	tl_put(s, DREC_CALL, 1000, 11, "f");
	tl_put(s, DREC_CALL, 2000, 11, "g\"\n");
	tl_put(s, DREC_THREAD, 3000, 12, NULL);	/* 11 is switched out: f, g end */
	tl_put(s, DREC_RET, 3500, 12, NULL);		/* nothing open on 12 */
	tl_put(s, DREC_CALL, 4000, 12, "h");
	tl_put(s, DREC_GAP, 5000, 12, "overflow");	/* h ends where a gap begins */
	tl_put(s, DREC_CALL, 7000, 12, "k");		/* ... until here */
	tl_put(s, DREC_END, 8000, 12, NULL);		/* k ends */
}

Test(decode_rec, timeline_balances_every_thread_and_marks_gaps)
{
	struct timeline_state st;
	json_t *doc, *evs, *ev;
	char *out, *text;
	size_t i;
	int depth[2] = { 0, 0 }, gaps = 0;

	memset(&st, 0, sizeof(st));
	out = filtered(timeline_filter, &st, threads);
	cr_assert(asprintf(&text, "{\"traceEvents\": [%s]}", out) > 0);
	doc = json_loads(text, 0, NULL);
	cr_assert(doc, "%s", text);
	evs = json_object_get(doc, "traceEvents");
	json_array_foreach(evs, i, ev) {
		const char *ph = json_string_value(json_object_get(ev, "ph"));
		int t = (int)json_integer_value(json_object_get(ev, "tid")) - 11;

		if (!strcmp(ph, "M"))
			continue;
		cr_assert(t == 0 || t == 1, "%s", text);
		if (!strcmp(ph, "B"))
			depth[t]++;
		if (!strcmp(ph, "E"))
			cr_assert_geq(--depth[t], 0, "%s", text);
		if (!strcmp(ph, "X")) {
			cr_expect_eq(depth[t], 0, "a gap inside a function: %s", text);
			cr_expect_eq(json_real_value(json_object_get(ev, "ts")), 5.0);
			cr_expect_eq(json_real_value(json_object_get(ev, "dur")), 2.0);
			gaps++;
		}
	}
	cr_expect(depth[0] == 0 && depth[1] == 0, "%s", text);
	cr_expect_eq(gaps, 1);
	/* f and g end where thread 11 was switched out, h where the gap begins. */
	cr_expect(strstr(out, "{\"ph\":\"E\",\"ts\":3.0,\"pid\":1,\"tid\":11}"), "%s", out);
	cr_expect(strstr(out, "{\"ph\":\"E\",\"ts\":5.0,\"pid\":1,\"tid\":12}"), "%s", out);
	/* A call's event, spelt by hand at the merge, as jansson spells the others. */
	cr_expect(strstr(out, "{\"ph\":\"B\",\"ts\":2.0,\"pid\":1,\"tid\":11,"
			 "\"name\":\"g\\\"\\n\"}"), "%s", out);
	cr_expect(strstr(out, "{\"ph\":\"X\",\"ts\":5.0,\"pid\":1,\"tid\":12,"
			 "\"name\":\"trace gap\""), "%s", out);
	json_decref(doc);
	free(text);
	free(out);
}

/*
 * -J 2 --timeline: a chunk's worker writes its events itself after the chunk's head
 * (timeline_convert()), the merge stitches them (timeline_unframe()). Eight chunks of a
 * walk of calls and returns (returns below a chunk's start, at depth 0), interrupts,
 * gaps, and times that go back at each chunk's start (the worker's first events are
 * before the output's last time: restamped), let go of partly before the turn and partly
 * after: the same file as one sink promoted at once (the -J 1 way), with the pieces in
 * memory and in a file (a bound of 4 KiB); one stream without sideband (no thread
 * records: its thread is known) and two with switches (the thread comes with the chunk).
 */
#define TLW_RECS 2400
#define TLW_CHUNKS 8

/* Past the first 150 records: a call and its return in turn, nothing else (long segments). */
static bool tlw_pairs;

static void tlw_recs(struct dsink *s, unsigned from, unsigned to, bool plain)
{
	unsigned per = TLW_RECS / TLW_CHUNKS;
	char name[32];

	for (unsigned i = from; i < to; i++) {
		unsigned r = i < 60 ? 0 : i < 150 ? 4 : (i * 2654435761u) >> 29;
		struct drec d;

		memset(&d, 0, sizeof(d));
		d.has_time = i % 11 != 5;
		/* Each chunk's first records before the last one's times. */
		d.time = 1000u * (i % per < 8 && i >= per ? i - 30 : i);
		d.pid = 1;
		d.tid = 11 + (i / 97) % 2;
		d.how = DREC_HOW_CALL;
		if (tlw_pairs && i >= 150)
			r = i % 2 ? 4 : 0;
		d.kind = r < 3 ? DREC_CALL : DREC_RET;
		if (tlw_pairs && i >= 150)
			;	/* (no gap, interrupt or switch) */
		else if (i % 151 == 77)
			d.kind = DREC_GAP;
		else if (i % 43 == 21)
			d.how = DREC_HOW_INTR;
		else if (!plain && (i % per == 0 || i % 97 == 0))
			d.kind = DREC_THREAD;
		if (d.kind == DREC_RET)
			d.how = DREC_HOW_RET;
		snprintf(name, sizeof(name), i % 13 ? "f%u" : "q\"%u\n", i % 9);
		timeline_put(s, &d, d.kind == DREC_GAP ? "overflow" : d.kind == DREC_CALL ? name :
			     NULL);
	}
}

/* The stream's start, as render_drec() makes it: its index (0) in pid. */
static void tlw_stream(struct dsink *s)
{
	struct drec d;

	memset(&d, 0, sizeof(d));
	d.kind = DREC_STREAM;
	drec_put(s, &d, "cpu0.pt", NULL);
}

static void tlw_all(struct dsink *s, bool plain)
{
	tlw_stream(s);
	tlw_recs(s, 0, TLW_RECS, plain);
	put(s, DREC_END, 0, 0, 1000u * TLW_RECS, 11, NULL, NULL);
}

static int tl_unframed;
static void tl_count_unframe(struct dout *o, const uint8_t *data, size_t len)
{
	tl_unframed++;
	render_timeline.unframe(o, data, len);
}

static char *tl_file(FILE *t)
{
	long n = lseek(fileno(t), 0, SEEK_END);
	char *buf = calloc(1, (size_t)n + 1);

	cr_assert_eq(pread(fileno(t), buf, (size_t)n, 0), n);
	fclose(t);
	return buf;
}

/* The records in @chunks chunks, each let go of in four flushes (@parts), or at once. */
static char *tl_merged_in(bool plain, bool parts, uint64_t bound, uint64_t *spilled,
			  unsigned chunks)
{
	struct decode_stream st[2] = { { .nr_sb = plain ? 0 : 1 }, { .nr_sb = 1 } };
	struct decode_config cfg = { .streams = st, .nr_streams = plain ? 1 : 2 };
	unsigned per = TLW_RECS / chunks;
	FILE *t = tmpfile();
	struct dbudget b;
	struct dout o;

	cr_assert(t);
	dbudget_init(&b, bound);
	cr_assert_eq(render_open(&o, fileno(t), &render_timeline, &cfg), 0);
	if (!parts) {
		struct dsink s;

		dsink_init(&s, &o);
		cr_assert_eq(dsink_promote(&s), 0);
		tlw_all(&s, plain);
		cr_assert_eq(dsink_flush(&s, dsink_pos(&s)), 0);
		dsink_destroy(&s);
	} else {
		cr_assert_not_null(o.convert);
		o.unframe = tl_count_unframe;
		o.budget = &b;
		for (unsigned c = 0; c < chunks; c++) {
			struct dsink s;
			unsigned a = c * per, m1 = a + per / 5, m2 = a + per / 2;

			/* Two flushes before its turn, one at it, one after the merge took some. */
			dsink_init(&s, &o);
			if (!c)
				tlw_stream(&s);
			tlw_recs(&s, a, m1, plain);
			cr_assert_eq(dsink_flush(&s, dsink_pos(&s)), 0);
			tlw_recs(&s, m1, m2, plain);
			cr_assert_eq(dsink_flush(&s, dsink_pos(&s)), 0);
			dsink_turn(&s);
			tlw_recs(&s, m2, a + 3 * per / 4, plain);
			cr_assert_eq(dsink_flush(&s, dsink_pos(&s)), 0);
			cr_assert_eq(dsink_pass(&s), 0);
			tlw_recs(&s, a + 3 * per / 4, a + per, plain);
			if (c == chunks - 1)
				put(&s, DREC_END, 0, 0, 1000u * TLW_RECS, 11, NULL, NULL);
			cr_assert_eq(dsink_flush(&s, dsink_pos(&s)), 0);
			cr_assert_eq(dsink_promote(&s), 0);
			dsink_destroy(&s);
		}
		*spilled = b.spilled;
	}
	cr_assert_eq(render_close(&o, &render_timeline, true), 0);
	cr_expect_eq(b.held, 0);
	dbudget_destroy(&b);
	free(o.state);
	return tl_file(t);
}

static char *tl_merged(bool plain, bool parts, uint64_t bound, uint64_t *spilled)
{
	return tl_merged_in(plain, parts, bound, spilled, TLW_CHUNKS);
}

Test(decode_rec, timeline_the_workers_write_is_what_the_merge_wrote)
{
	for (int plain = 0; plain < 2; plain++) {
		char *want = tl_merged(plain, false, 0, NULL), *got;
		uint64_t spilled;

		cr_assert(strstr(want, "\"name\":\"trace gap\""), "%s", want);
		cr_assert(strstr(want, "\"name\":\"interrupt"), "no interrupt: %.300s", want);
		tl_unframed = 0;
		got = tl_merged(plain, true, 64u << 20, &spilled);
		cr_expect(!strcmp(got, want), "plain %d: another file (%zu and %zu bytes)", plain,
			  strlen(got), strlen(want));
		cr_expect_eq(spilled, 0);
		cr_expect_gt(tl_unframed, 0, "no chunk's worker wrote its events");
		free(got);
		tl_unframed = 0;
		got = tl_merged(plain, true, 4u << 10, &spilled);
		cr_expect(!strcmp(got, want), "plain %d, 4 KiB: another file", plain);
		cr_expect_gt(spilled, 0, "nothing went to the file with a bound of 4 KiB");
		cr_expect_gt(tl_unframed, 0, "no chunk's worker wrote its events");
		free(got);
		free(want);
	}
}

/*
 * The worker spells its events straight into the waiting output a window (16 KiB) at a
 * time: flushes of more than a window's events (one and two chunks: flushes of 240 to
 * 720 records, past the first 150 a call and its return in turn: one piece of text
 * across windows), are what the merge wrote.
 */
Test(decode_rec, timeline_the_workers_long_flushes_are_what_the_merge_wrote)
{
	tlw_pairs = true;
	for (int plain = 0; plain < 2; plain++) {
		char *want = tl_merged(plain, false, 0, NULL);

		for (unsigned chunks = 1; chunks <= 2; chunks++) {
			uint64_t spilled;
			char *got;

			tl_unframed = 0;
			got = tl_merged_in(plain, true, 64u << 20, &spilled, chunks);
			cr_expect(!strcmp(got, want), "plain %d, %u chunks: another file (%zu and "
				  "%zu bytes)", plain, chunks, strlen(got), strlen(want));
			cr_expect_gt(tl_unframed, 0, "no chunk's worker wrote its events");
			free(got);
		}
		free(want);
	}
	tlw_pairs = false;
}

/* --branches --json's lines, spelt by hand, are jansson's; a type to escape goes through it. */
Test(decode_rec, branches_json_lines_are_janssons)
{
	static const struct {
		uint64_t from, to;
		const char *name;
	} b[] = {
		{ 0, 0x401000, "tr strt" }, { UINT64_MAX, 1, "far call" },
		{ 0x10, 0xabcdef0123, "q\"\\x" }, { 0x8000000000000000u, 0xf, NULL },
	};
	struct decode_config cfg = { .nr_streams = 1 };
	struct render r = { .ops = &render_branches_json, .cfg = &cfg };
	FILE *t = tmpfile();
	struct dout o;
	struct dsink s;
	char *text;
	long n;

	cr_assert(t);
	cr_assert_eq(dout_init(&o, fileno(t), NULL, NULL), 0);
	dsink_init(&s, &o);
	cr_assert_eq(dsink_promote(&s), 0);
	r.sink = &s;
	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		struct rrec rec = { .kind = RREC_BRANCH, .from = b[i].from, .to = b[i].to,
				    .name = b[i].name };

		render_branches_json.put(&r, &rec);
	}
	cr_assert_eq(dsink_flush(&s, dsink_pos(&s)), 0);
	cr_assert_eq(dout_flush(&o), 0);
	n = lseek(fileno(t), 0, SEEK_END);
	text = calloc(1, (size_t)n + 1);
	cr_assert_eq(pread(fileno(t), text, (size_t)n, 0), n);
	cr_expect_str_eq(text,
		"{\"from\":\"0x0\",\"to\":\"0x401000\",\"type\":\"tr strt\"}\n"
		"{\"from\":\"0xffffffffffffffff\",\"to\":\"0x1\",\"type\":\"far call\"}\n"
		"{\"from\":\"0x10\",\"to\":\"0xabcdef0123\",\"type\":\"q\\\"\\\\x\"}\n"
		"{\"from\":\"0x8000000000000000\",\"to\":\"0xf\"}\n");
	free(text);
	dsink_destroy(&s);
	dout_destroy(&o);
	fclose(t);
}

static char *file_text(int fd)
{
	static char buf[256];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* An output into @t with a budget of @bound bytes and its mark @wait_at, and sinks @s0, @s1. */
static void two_budgeted(FILE *t, struct dout *o, dout_filter_fn *filter, struct dbudget *b,
			 uint64_t bound, uint64_t wait_at, struct dsink *s0, struct dsink *s1)
{
	dbudget_init(b, bound);
	b->wait_at = wait_at;
	cr_assert_eq(dout_init(o, fileno(t), filter, NULL), 0);
	o->budget = b;
	dsink_init(s0, o);
	dsink_init(s1, o);
}

/*
 * A run's output into a temporary file and @n sinks of it (at most 3), within a budget of
 * @bound bytes (0: none): what each dsink test sets up.
 */
struct sinks {
	FILE *t;
	struct dbudget b;
	struct dout o;
	struct dsink s[3];
	int n;
	bool budget;
};

static void sinks_open(struct sinks *k, int n, uint64_t bound)
{
	memset(k, 0, sizeof(*k));
	k->t = tmpfile();
	cr_assert(k->t);
	k->n = n;
	k->budget = bound;
	if (k->budget)
		dbudget_init(&k->b, bound);
	cr_assert_eq(dout_init(&k->o, fileno(k->t), NULL, NULL), 0);
	if (k->budget)
		k->o.budget = &k->b;
	for (int i = 0; i < n; i++)
		dsink_init(&k->s[i], &k->o);
}

/* The sinks gone, with a budget nothing is held any longer. */
static void sinks_close(struct sinks *k)
{
	for (int i = 0; i < k->n; i++)
		dsink_destroy(&k->s[i]);
	if (k->budget)
		cr_expect_eq(k->b.held, 0);
	dout_destroy(&k->o);
	if (k->budget)
		dbudget_destroy(&k->b);
	fclose(k->t);
}

/* Two chunks' sinks reach the output in their order, whatever order they write in. */
Test(dsink, sinks_reach_the_output_in_order_and_take_back_what_they_hold)
{
	struct sinks k;
	struct dsink *a = &k.s[0], *b = &k.s[1];
	uint64_t mark;

	sinks_open(&k, 2, 0);
	/* b writes first and lets go (to its temporary file): nothing reaches the output. */
	dsink_put(b, "b1 ", 3);
	cr_assert_eq(dsink_flush(b, dsink_pos(b)), 0);
	dsink_put(a, "a1 ", 3);
	cr_assert_eq(dsink_flush(a, dsink_pos(a)), 0);
	cr_assert_eq(dout_flush(&k.o), 0);
	cr_expect_str_eq(file_text(fileno(k.t)), "");
	/* a's turn: what it let go of, then what it writes. */
	cr_assert_eq(dsink_promote(a), 0);
	dsink_put(a, "a2 ", 3);
	cr_assert_eq(dsink_flush(a, dsink_pos(a)), 0);
	/* b takes back what it has not let go of. */
	dsink_put(b, "b2 ", 3);
	mark = dsink_pos(b);
	dsink_put(b, "tail", 4);
	dsink_truncate(b, mark);
	cr_assert_eq(dsink_flush(b, dsink_pos(b)), 0);
	cr_assert_eq(dsink_promote(b), 0);
	cr_assert_eq(dout_flush(&k.o), 0);
	cr_expect_str_eq(file_text(fileno(k.t)), "a1 a2 b1 b2 ");
	sinks_close(&k);
}

/* Pieces of numbered lines: "s<sink> <n>\n", each flushed on its own. */
static void numbered(struct dsink *s, int sink, int from, int to)
{
	char line[32];

	for (int i = from; i < to; i++) {
		int n = snprintf(line, sizeof(line), "s%d %06d\n", sink, i);

		dsink_put(s, line, (size_t)n);
		if (i % 1000 == 999)
			cr_assert_eq(dsink_flush(s, dsink_pos(s)), 0);
	}
	cr_assert_eq(dsink_flush(s, dsink_pos(s)), 0);
}

/*
 * The output file holds sink 0's @n0 numbered lines, then sink 1's @n1 (and so on, @sinks
 * of them; a count of -1: as many as sink 0's), in the sinks' order, and nothing more.
 */
static void expect_lines(FILE *t, int sinks, int n0, int n1)
{
	long len = lseek(fileno(t), 0, SEEK_END);
	char *text = calloc(1, (size_t)len + 1), *p = text;
	char want[32];

	cr_assert_eq(pread(fileno(t), text, (size_t)len, 0), len);
	for (int k = 0; k < sinks; k++)
		for (int i = 0; i < (k && n1 >= 0 ? n1 : n0); i++) {
			int n = snprintf(want, sizeof(want), "s%d %06d\n", k, i);

			cr_assert(!strncmp(p, want, (size_t)n), "line %d of sink %d: %.12s", i, k, p);
			p += n;
		}
	cr_expect_eq(*p, '\0');
	free(text);
}

/* @lines numbered lines of each of @sinks sinks. */
static void expect_numbered(FILE *t, int sinks, int lines)
{
	expect_lines(t, sinks, lines, -1);
}

/*
 * Sinks before their turn keep what they let go of in memory while all of them hold no
 * more than the bound, then in a temporary file; the output gets every sink's bytes in
 * the sinks' order, and the memory is given back.
 */
Test(dsink, memory_within_the_bound_then_a_file_in_order)
{
	struct sinks k;

	sinks_open(&k, 3, 3u << 20);
	/* 30 flushes of 10 KB a sink, each an 80 KiB buffer: 2.4 MiB fit, 4.8 MiB do not. */
	numbered(&k.s[2], 2, 0, 30000);
	cr_expect_eq(k.b.spilled, 0, "the first sink within the bound went to a file");
	numbered(&k.s[1], 1, 0, 30000);
	cr_expect_gt(k.b.spilled, 0, "beyond the bound: nothing went to a file");
	cr_expect_leq(k.b.peak, k.b.bound);
	cr_assert_eq(dsink_promote(&k.s[0]), 0);
	numbered(&k.s[0], 0, 0, 30000);
	cr_assert_eq(dsink_promote(&k.s[1]), 0);
	cr_assert_eq(dsink_promote(&k.s[2]), 0);
	cr_assert_eq(dout_flush(&k.o), 0);
	cr_expect_eq(k.b.held, 0);
	expect_numbered(k.t, 3, 30000);
	sinks_close(&k);
}

struct writer {
	struct dsink *s;
	int half[2];		/* a byte once @early lines are let go of */
	int early;
};

/* Sink 1's 40,000 lines, a byte on @half after the first @early of them. */
static void *write_lines(void *arg)
{
	struct writer *w = arg;

	numbered(w->s, 1, 0, w->early);
	cr_assert_eq(write(w->half[1], "h", 1), 1);
	numbered(w->s, 1, w->early, 40000);
	return NULL;
}

/*
 * Sink 1 written on a thread of its own (write_lines()), sink 0 by this one: sink 0's
 * turn, its 40,000 lines, then sink 1's turn. This thread waits for the writer's byte
 * before sink 0's turn when @wait_first, else before sink 1's. Both sinks' lines reach the
 * output, in order.
 */
static void two_writers(struct sinks *k, int early, bool wait_first)
{
	struct writer w = { .s = &k->s[1], .early = early };
	pthread_t th;
	char c;

	cr_assert_eq(pipe(w.half), 0);
	cr_assert_eq(pthread_create(&th, NULL, write_lines, &w), 0);
	if (wait_first)
		cr_assert_eq(read(w.half[0], &c, 1), 1);
	cr_assert_eq(dsink_promote(&k->s[0]), 0);
	numbered(&k->s[0], 0, 0, 40000);
	if (!wait_first)
		cr_assert_eq(read(w.half[0], &c, 1), 1);
	cr_assert_eq(dsink_promote(&k->s[1]), 0);
	cr_assert_eq(pthread_join(th, NULL), 0);
	cr_assert_eq(dout_flush(&k->o), 0);
	close(w.half[0]);
	close(w.half[1]);
	expect_numbered(k->t, 2, 40000);
}

/* A sink's turn comes while its writer goes on: nothing is lost or out of order. */
Test(dsink, promoted_while_its_writer_goes_on)
{
	struct sinks k;

	sinks_open(&k, 2, 64u << 20);
	/* Its writer's byte after half its lines. */
	two_writers(&k, 20000, false);
	sinks_close(&k);
}

/*
 * With the budget's wait_at, a sink before its turn waits as it writes while what the
 * sinks hold would pass that mark (1 MiB here: its writer let go of 40 buffers of 80 KiB,
 * 3.2 MiB), and goes on when its turn comes: the peak stays at the mark, nothing goes to
 * a file, nothing is lost or out of order.
 */
Test(dsink, a_sink_before_its_turn_waits_at_the_mark)
{
	struct sinks k;

	sinks_open(&k, 2, 64u << 20);
	k.b.wait_at = 1u << 20;
	/* Its writer under way: its byte after 5,000 lines (5 buffers: within 1 MiB). */
	two_writers(&k, 5000, true);
	cr_expect_leq(k.b.peak, k.b.wait_at, "held %llu bytes, the mark %llu",
		      (unsigned long long)k.b.peak, (unsigned long long)k.b.wait_at);
	cr_expect_eq(k.b.spilled, 0);
	sinks_close(&k);
}

/*
 * dsink_due(): before its turn, with an output written as it is, a sink lets go only once
 * a stretch as long as the longest so far might not fit in its buffer (what it hands
 * over then fills most of it); at its turn (direct) past the given size, as before.
 */
Test(dsink, a_sink_before_its_turn_lets_go_of_full_buffers)
{
	static char piece[300000];
	struct sinks k;
	struct dsink *a = &k.s[0];
	unsigned flushes = 0;

	memset(piece, 'x', sizeof(piece));
	sinks_open(&k, 2, 64u << 20);
	k.b.wait_at = 48u << 20;
	/* A buffer as the fast path's sinks take (what the last let go of whole): 1.25 MiB. */
	k.o.sink_cap = 1280u << 10;
	/* Stretches of 300 KB (the fast path's PSB segments): let go at each, 0.23 full. */
	for (int i = 0; i < 100; i++) {
		dsink_put(a, piece, sizeof(piece));
		if (dsink_due(a, 256u << 10)) {
			flushes++;
			cr_assert_eq(dsink_flush(a, dsink_pos(a)), 0);
		}
	}
	cr_assert_gt(flushes, 0);
	cr_expect_geq((double)k.b.gave / (double)k.b.gave_size, 0.75, "%llu of %llu",
		      (unsigned long long)k.b.gave, (unsigned long long)k.b.gave_size);
	cr_assert_eq(dsink_promote(a), 0);
	/* Direct: due past 256 KiB, whatever the buffer's room. */
	dsink_put(a, piece, sizeof(piece));
	cr_expect(dsink_due(a, 256u << 10));
	cr_expect(!dsink_due(a, 64u << 20));
	cr_assert_eq(dsink_flush(a, dsink_pos(a)), 0);
	cr_assert_eq(dsink_promote(&k.s[1]), 0);
	sinks_close(&k);
}

/* A filter that passes bytes on, and counts the first sink's hand-overs off the merge's thread. */
static pthread_t merge_thread;
static int off_merge;

static void merge_only(struct dout *o, const uint8_t *data, size_t len)
{
	if (len >= 2 && data[1] == '0' && !pthread_equal(pthread_self(), merge_thread))
		__atomic_add_fetch(&off_merge, 1, __ATOMIC_RELAXED);
	dout_write(o, data, len);
}

struct turn_writer {
	struct dsink *s;
	int sink, lines;
	bool done;
	struct dbudget *b;
};

static void *write_turn(void *arg)
{
	struct turn_writer *w = arg;

	numbered(w->s, w->sink, 0, w->lines);
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
	dbudget_kick(w->b);
	return NULL;
}

static bool turn_writer_ready(void *arg)
{
	struct turn_writer *w = arg;

	return dsink_turn_ready(w->s) || __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
}

/*
 * A sink at its turn for the merge (dsink_turn(), decode.c with -J 2: an output with a
 * filter): its writer hands 9 MB over while the sink after it waits at the budget's mark
 * (1 MiB) for its turn; the writer at its turn does not wait at that mark (the merge
 * would wait for its end: neither would go on), every byte of it goes through the filter
 * on the merge's thread, and the output is both sinks' in their order.
 */
Test(dsink, a_sink_at_its_turn_for_the_merge_is_filtered_by_the_merge)
{
	FILE *t = tmpfile();
	struct dbudget b;
	struct dout o;
	struct dsink s0, s1;
	struct turn_writer w0 = { .s = &s0, .sink = 0, .lines = 900000, .b = &b };
	struct turn_writer w1 = { .s = &s1, .sink = 1, .lines = 400000, .b = &b };
	pthread_t th0, th1;

	cr_assert(t);
	merge_thread = pthread_self();
	two_budgeted(t, &o, merge_only, &b, 64u << 20, 1u << 20, &s0, &s1);
	cr_assert_eq(pthread_create(&th1, NULL, write_turn, &w1), 0);
	cr_assert_eq(pthread_create(&th0, NULL, write_turn, &w0), 0);
	dsink_turn(&s0);
	while (!__atomic_load_n(&w0.done, __ATOMIC_ACQUIRE)) {
		cr_assert_eq(dsink_pass(&s0), 0);
		/* Bounded: a writer that never ends fails the test, not hangs it. */
		cr_assert(dbudget_wait(&b, turn_writer_ready, &w0, 10000000000ull),
			  "the writer at its turn waits, 10 s");
	}
	cr_assert_eq(pthread_join(th0, NULL), 0);
	cr_assert_eq(dsink_promote(&s0), 0);
	cr_expect_eq(off_merge, 0, "%d of the first sink's hand-overs filtered off the merge",
		     off_merge);
	cr_assert_eq(dsink_promote(&s1), 0);
	cr_assert_eq(pthread_join(th1, NULL), 0);
	cr_assert_eq(dout_flush(&o), 0);
	cr_expect_eq(b.spilled, 0);
	expect_lines(t, 2, 900000, 400000);
	dsink_destroy(&s0);
	dsink_destroy(&s1);
	cr_expect_eq(b.held, 0);
	dout_destroy(&o);
	dbudget_destroy(&b);
	fclose(t);
}

/*
 * A sink's buffers are used again, not freed: a sink that lets go of all it holds before
 * its turn (a chunk's end) takes no new buffer for nothing, and the next sink writes into
 * the one passed on, as the sink after it into the buffer of a sink destroyed (each new
 * buffer is pages the kernel gives one fault at a time: -J 2 --insn on the walk of
 * bench/decode had 25,500 faults against -J 1's 6,200). All of it reaches the output in
 * order, and what the pool keeps is given back (the budget holds nothing at the end).
 */
/* 100 numbered lines of sink @sink ("s<sink> <n>\n", 10 bytes each), not let go of. */
static void lines(struct dsink *s, int sink)
{
	char line[32];

	for (int i = 0; i < 100; i++) {
		int n = snprintf(line, sizeof(line), "s%d %06d\n", sink, i);

		dsink_put(s, line, (size_t)n);
	}
}

Test(dsink, a_sinks_buffers_are_used_again_by_the_next_sinks)
{
	FILE *t = tmpfile();
	struct dbudget b;
	struct dout o;
	struct dsink s1, s2, s3;
	uint8_t *first, *second;

	cr_assert(t);
	dbudget_init(&b, 64u << 20);
	b.wait_at = 8u << 20;
	cr_assert_eq(dout_init(&o, fileno(t), NULL, NULL), 0);
	o.budget = &b;
	dsink_init(&s1, &o);
	dsink_init(&s2, &o);
	dsink_init(&s3, &o);
	lines(&s1, 0);
	first = s1.buf;
	cr_assert_not_null(first);
	cr_assert_eq(dsink_flush(&s1, dsink_pos(&s1)), 0);
	cr_expect_null(s1.buf, "a sink that let go of all took a new buffer");
	cr_expect_eq(s1.cap, 0);
	cr_expect_gt(b.held, 0);
	cr_assert_eq(dsink_promote(&s1), 0);
	dsink_destroy(&s1);
	cr_expect_eq(b.held, 0);
	cr_expect_eq(b.nr_pool, 1);
	/* Its turn next: it writes straight to the output, in the buffer s1 passed on. */
	cr_assert_eq(dsink_promote(&s2), 0);
	lines(&s2, 1);
	cr_expect_eq(s2.buf, first, "the second sink's buffer is not the first one's");
	cr_assert_eq(dsink_flush(&s2, dsink_pos(&s2)), 0);
	second = s2.buf;
	dsink_destroy(&s2);
	cr_expect_eq(b.nr_pool, 1);
	lines(&s3, 2);
	cr_expect_eq(s3.buf, second, "the third sink's buffer is not the one the second gave back");
	cr_assert_eq(dsink_flush(&s3, dsink_pos(&s3)), 0);
	cr_expect_null(s3.buf);
	cr_assert_eq(dsink_promote(&s3), 0);
	dsink_destroy(&s3);
	cr_assert_eq(dout_flush(&o), 0);
	cr_expect_eq(b.held, 0);
	cr_expect_eq(b.spilled, 0);
	expect_numbered(t, 3, 100);
	dout_destroy(&o);
	dbudget_destroy(&b);
	fclose(t);
}

/*
 * A sink before its turn writes references to text that stays (dsink_ref()), between lines
 * of its own: what it let go of into memory, into the file past the bound, and what it
 * still holds at its turn reach the output as the text, in order; the references' text
 * counted as waiting for the merge (ref_held) is given back with them.
 */
Test(dsink, a_sink_before_its_turn_writes_references_made_text_where_passed_on)
{
	FILE *t = tmpfile();
	struct dbudget b;
	struct dout o;
	struct dsink s0, s1;
	char *text = malloc(30000 * 10 + 1);

	cr_assert(t && text);
	for (int i = 0; i < 30000; i++) {
		char line[32];

		/* (a line of its own first: at -O1 gcc cannot tell that 10 bytes hold it) */
		cr_assert_eq(snprintf(line, sizeof(line), "s1 %06d\n", i), 10);
		memcpy(text + i * 10, line, 10);
	}
	text[30000 * 10] = '\0';
	two_budgeted(t, &o, NULL, &b, 1u << 20, 64u << 20, &s0, &s1);
	/* Four lines at a time, every other four by reference; the last ones not let go of. */
	for (int i = 0; i < 30000; i += 4) {
		size_t len = (size_t)(i + 4 <= 30000 ? 4 : 30000 - i) * 10;

		cr_assert(dsink_ref_ok(&s1));
		if (i % 8)
			dsink_put(&s1, text + i * 10, len);
		else
			cr_assert(dsink_ref(&s1, text + i * 10, len));
		if (i % 1000 == 996 && i < 29000)
			cr_assert_eq(dsink_flush(&s1, dsink_pos(&s1)), 0);
	}
	cr_expect_gt(b.spilled, 0, "nothing went to the file past the bound");
	cr_expect_gt(b.ref_held, 0);
	cr_assert_eq(dsink_promote(&s0), 0);
	numbered(&s0, 0, 0, 30000);
	cr_assert_eq(dsink_promote(&s1), 0);
	cr_expect_not(dsink_ref_ok(&s1), "references after its turn");
	cr_assert_eq(dsink_flush(&s1, dsink_pos(&s1)), 0);
	cr_assert_eq(dout_flush(&o), 0);
	cr_expect_eq(b.held, 0);
	cr_expect_eq(b.ref_held, 0);
	expect_numbered(t, 2, 30000);
	dsink_destroy(&s0);
	dsink_destroy(&s1);
	dout_destroy(&o);
	dbudget_destroy(&b);
	fclose(t);
	free(text);
}

/*
 * image_sym_format() spells by hand what snprintf() spelled: each of its three forms,
 * offsets of every width, and every buffer length, so that a name cut by the buffer is
 * cut at the same byte.
 */
Test(memimage, sym_format_spells_what_snprintf_did)
{
	static const uint64_t offs[] = { 0, 1, 0xf, 0x10, 0xabc, 0x1234567, UINT64_MAX };
	struct image_sym ys[3] = {
		{ .name = "_ZN4core3fmt5write17h0123456789abcdefE", .object = "/lib/x.so",
		  .file = "x.so" },
		{ .name = NULL, .object = "/usr/lib/libfoo.so.6", .file = "libfoo.so.6" },
		{ .name = NULL, .object = NULL, .file = NULL },
	};
	char want[128], got[128];

	for (size_t i = 0; i < 3; i++) {
		for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
			ys[i].off = offs[k];
			for (size_t len = 1; len <= sizeof(got); len++) {
				if (ys[i].name)
					snprintf(want, len, "%s+0x%" PRIx64, ys[i].name, ys[i].off);
				else if (!ys[i].object)
					snprintf(want, len, "[unknown]");
				else
					snprintf(want, len, "[unknown] (%s+0x%" PRIx64 ")",
						 ys[i].file, ys[i].off);
				memset(got, 'x', sizeof(got));
				image_sym_format(&ys[i], got, len);
				cr_assert_str_eq(got, want, "form %zu, offset %" PRIx64 ", %zu bytes",
						 i, ys[i].off, len);
			}
		}
	}
}

/*
 * --insn's text cache (disasm.c) read a record's head at the ring position after the last
 * record it used; past a wrap that can be the zeroed rest of the ring, shorter than a
 * head: 24 bytes read across the ring's end (ASan: heap over-read; the bounded_memory walk
 * of 60,000 blocks hit it). Records of one size (the same instruction at one address after
 * another) leave a rest of 2^22 mod their size (16, 5, 4, 4 for 28 to 31 bytes); each is
 * read again in order across the wrap, and every line is the first one's.
 */
/*
 * One instruction in each of the table's sets (every set's first insert into a part of the
 * table never written, which is not read), then each again from the last: found in its set
 * (the ring's next record is not the one asked for), nothing inserted twice.
 */
Test(disasm, every_set_inserted_once_is_found_in_it_again)
{
	struct pt_insn in = { .mode = ptem_64bit, .size = 1, .raw = { 0x90 } };
	char want[DISASM_LINE_MAX + 16], got[DISASM_LINE_MAX + 16];
	const unsigned sets = 1u << 15;
	struct disasm *d = NULL;
	struct error e = { 0 };
	size_t wlen, len;

	cr_assert_eq(disasm_new(&d, false, &e), 0);
	in.ip = 0x400000;
	wlen = disasm_put(d, &in, want);
	for (unsigned i = 1; i < sets; i++) {
		in.ip = 0x400000 + 8ull * i;
		cr_assert_eq(disasm_put(d, &in, got), wlen);
	}
	cr_assert_eq(disasm_used(d), sets);
	for (unsigned i = sets; i-- > 0;) {
		in.ip = 0x400000 + 8ull * i;
		len = disasm_put(d, &in, got);
		cr_assert(len == wlen && !memcmp(got, want, wlen), "at %u", i);
	}
	cr_assert_eq(disasm_used(d), sets, "%zu entries", disasm_used(d));
	disasm_free(d);
}

Test(disasm, reading_records_again_across_the_rings_wrap_stays_in_the_ring)
{
	static const uint8_t codes[][2] = { { 0x90 }, { 0xc3 }, { 0x50 }, { 0xcc }, { 0xf4 },
					    { 0xfc }, { 0x0f, 0x0b } };

	for (size_t c = 0; c < sizeof(codes) / sizeof(codes[0]); c++) {
		struct pt_insn in = { .mode = ptem_64bit, .size = codes[c][1] ? 2 : 1 };
		char want[DISASM_LINE_MAX + 16], got[DISASM_LINE_MAX + 16];
		const unsigned n = 200000, again = 100000;
		struct disasm *d = NULL;
		struct error e = { 0 };
		size_t wlen, len;

		memcpy(in.raw, codes[c], 2);
		cr_assert_eq(disasm_new(&d, false, &e), 0);
		in.ip = 0x400000;
		wlen = disasm_put(d, &in, want) - DISASM_TEXT_AT;
		for (unsigned i = 1; i < n; i++) {
			in.ip = 0x400000 + 16ull * i;
			len = disasm_put(d, &in, got) - DISASM_TEXT_AT;
			cr_assert_eq(len, wlen, "code %zu at %u", c, i);
		}
		for (unsigned i = n - again; i < n; i++) {
			in.ip = 0x400000 + 16ull * i;
			len = disasm_put(d, &in, got) - DISASM_TEXT_AT;
			cr_assert(len == wlen && !memcmp(got + DISASM_TEXT_AT, want + DISASM_TEXT_AT,
							 wlen), "code %zu at %u again", c, i);
		}
		disasm_free(d);
	}
}
