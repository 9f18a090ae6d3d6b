// SPDX-License-Identifier: MIT
/* perf.data files made in memory, as perf record lays them out. */
#include <stdlib.h>
#include <string.h>

#include "perfgen.h"

#define MAGIC 0x32454c4946524550ull

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

void pgen_init(struct pgen *g)
{
	memset(g, 0, sizeof(*g));
}

void pgen_free(struct pgen *g)
{
	for (int i = 0; i < g->nr_feats; i++)
		free(g->feats[i].p);
	free(g->data);
	pgen_init(g);
}

int pgen_attr(struct pgen *g, uint32_t type, uint64_t config, uint64_t sample_type,
	      const uint64_t *ids, int nr, const char *name)
{
	struct pgen_attr *a = &g->attrs[g->nr_attrs];

	if (g->nr_attrs == PGEN_MAX_ATTRS || nr > 8)
		abort();
	memset(a, 0, sizeof(*a));
	a->attr.type = type;
	a->attr.size = sizeof(a->attr);
	a->attr.config = config;
	a->attr.sample_type = sample_type;
	a->attr.sample_id_all = 1;
	memcpy(a->ids, ids, (size_t)nr * 8);
	a->nr_ids = nr;
	a->name = name;
	return g->nr_attrs++;
}

void pgen_feat_raw(struct pgen *g, int feat, const void *p, size_t len)
{
	if (g->nr_feats == PGEN_MAX_FEATS)
		abort();
	g->feats[g->nr_feats].id = feat;
	g->feats[g->nr_feats].p = xrealloc(NULL, len);
	memcpy(g->feats[g->nr_feats].p, p, len);
	g->feats[g->nr_feats++].len = len;
}

/* perf's header string: u32 length (the string, its NUL, padded to 64), then the bytes. */
static void put_string(struct buf *b, const char *s)
{
	uint32_t len = (uint32_t)((strlen(s) + 1 + 63) & ~(size_t)63);
	char pad[64] = { 0 };

	put(b, &len, 4);
	put(b, s, strlen(s));
	put(b, pad, len - strlen(s));
}

void pgen_feat_string(struct pgen *g, int feat, const char *s)
{
	struct buf b = { 0 };

	put_string(&b, s);
	pgen_feat_raw(g, feat, b.p, b.len);
	free(b.p);
}

void pgen_feat_cmdline(struct pgen *g, const char *const *argv, int argc)
{
	struct buf b = { 0 };
	uint32_t nr = (uint32_t)argc;

	put(&b, &nr, 4);
	for (int i = 0; i < argc; i++)
		put_string(&b, argv[i]);
	pgen_feat_raw(g, 11, b.p, b.len);
	free(b.p);
}

void pgen_feat_event_desc(struct pgen *g)
{
	struct buf b = { 0 };
	uint32_t v[2] = { (uint32_t)g->nr_attrs, sizeof(struct perf_event_attr) };

	put(&b, v, 8);
	for (int i = 0; i < g->nr_attrs; i++) {
		uint32_t nr = (uint32_t)g->attrs[i].nr_ids;

		put(&b, &g->attrs[i].attr, sizeof(g->attrs[i].attr));
		put(&b, &nr, 4);
		put_string(&b, g->attrs[i].name ? g->attrs[i].name : "");
		put(&b, g->attrs[i].ids, (size_t)nr * 8);
	}
	pgen_feat_raw(g, 12, b.p, b.len);
	free(b.p);
}

void pgen_raw(struct pgen *g, const void *p, size_t len)
{
	struct buf b = { g->data, g->len, g->cap };

	put(&b, p, len);
	g->data = b.p;
	g->len = b.len;
	g->cap = b.cap;
}

static void record(struct pgen *g, uint32_t type, uint16_t misc, const void *body, size_t blen)
{
	struct perf_event_header h = { type, misc, (uint16_t)(8 + blen) };

	pgen_raw(g, &h, 8);
	pgen_raw(g, body, blen);
}

void pgen_auxtrace_info(struct pgen *g, const uint64_t *priv, int nr)
{
	struct buf b = { 0 };

	put64(&b, 1);	/* type PERF_AUXTRACE_INTEL_PT, reserved */
	put(&b, priv, (size_t)nr * 8);
	record(g, 70, 0, b.p, b.len);
	free(b.p);
}

void pgen_time_conv(struct pgen *g, uint64_t shift, uint64_t mult, uint64_t zero)
{
	uint64_t v[3] = { shift, mult, zero };

	record(g, 79, 0, v, sizeof(v));
}

void pgen_auxtrace(struct pgen *g, uint32_t idx, uint32_t cpu, uint32_t tid, uint64_t offset,
		   const void *p, size_t len)
{
	uint8_t body[40];
	uint64_t v[3] = { len, offset, 0x1234 };	/* size, offset, reference */
	uint32_t w[4] = { idx, tid, cpu, 0 };

	memcpy(body, v, 24);
	memcpy(body + 24, w, 16);
	record(g, 71, 0, body, sizeof(body));
	pgen_raw(g, p, len);
}

void pgen_kernel(struct pgen *g, int a, uint32_t type, uint16_t misc, const void *body,
		 size_t blen, const struct pgen_sid *sid)
{
	uint64_t st = g->attrs[a].attr.sample_type;
	struct buf b = { 0 };
	uint32_t pair[2];

	put(&b, body, blen);
	if (st & PERF_SAMPLE_TID) {
		pair[0] = sid->pid;
		pair[1] = sid->tid;
		put(&b, pair, 8);
	}
	if (st & PERF_SAMPLE_TIME)
		put64(&b, sid->time);
	if (st & PERF_SAMPLE_ID)
		put64(&b, sid->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		put64(&b, sid->stream_id);
	if (st & PERF_SAMPLE_CPU) {
		pair[0] = sid->cpu;
		pair[1] = 0;
		put(&b, pair, 8);
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		put64(&b, sid->id);
	record(g, type, misc, b.p, b.len);
	free(b.p);
}

uint8_t *pgen_file(const struct pgen *g, size_t *len)
{
	uint64_t attr_size = sizeof(struct perf_event_attr) + 16, ids = 104 +
			     (uint64_t)g->nr_attrs * attr_size, data, feats, at;
	uint64_t hdr[13] = { MAGIC, 104, attr_size, 104, (uint64_t)g->nr_attrs * attr_size };
	struct buf b = { 0 };

	data = ids;
	for (int i = 0; i < g->nr_attrs; i++)
		data += (uint64_t)g->attrs[i].nr_ids * 8;
	feats = data + g->len;
	hdr[5] = data;
	hdr[6] = g->len;
	for (int i = 0; i < g->nr_feats; i++)
		hdr[9 + g->feats[i].id / 64] |= 1ull << (g->feats[i].id % 64);
	put(&b, hdr, sizeof(hdr));
	for (int i = 0, off = 0; i < g->nr_attrs; i++) {
		put(&b, &g->attrs[i].attr, sizeof(g->attrs[i].attr));
		put64(&b, ids + (uint64_t)off * 8);
		put64(&b, (uint64_t)g->attrs[i].nr_ids * 8);
		off += g->attrs[i].nr_ids;
	}
	for (int i = 0; i < g->nr_attrs; i++)
		put(&b, g->attrs[i].ids, (size_t)g->attrs[i].nr_ids * 8);
	put(&b, g->data, g->len);
	/* The section table lists features in bit order; the tests add them in that order. */
	at = feats + (uint64_t)g->nr_feats * 16;
	for (int i = 0; i < g->nr_feats; i++) {
		put64(&b, at);
		put64(&b, g->feats[i].len);
		at += g->feats[i].len;
	}
	for (int i = 0; i < g->nr_feats; i++)
		put(&b, g->feats[i].p, g->feats[i].len);
	*len = b.len;
	return b.p;
}

uint8_t *pgen_pipe(const struct pgen *g, size_t *len)
{
	uint64_t hdr[2] = { MAGIC, 16 };
	struct buf b = { 0 };

	put(&b, hdr, sizeof(hdr));
	for (int i = 0; i < g->nr_attrs; i++) {
		struct perf_event_header h = { 64, 0, (uint16_t)(8 + sizeof(g->attrs[i].attr) +
								   8 * g->attrs[i].nr_ids) };

		put(&b, &h, 8);
		put(&b, &g->attrs[i].attr, sizeof(g->attrs[i].attr));
		put(&b, g->attrs[i].ids, (size_t)g->attrs[i].nr_ids * 8);
	}
	for (int i = 0; i < g->nr_feats; i++) {
		struct perf_event_header h = { 80, 0, (uint16_t)(16 + g->feats[i].len) };

		/* perf sends no EVENT_DESC down a pipe (it synthesizes that feature only in files). */
		if (g->feats[i].id == 12)
			continue;
		put(&b, &h, 8);
		put64(&b, (uint64_t)g->feats[i].id);
		put(&b, g->feats[i].p, g->feats[i].len);
	}
	put(&b, g->data, g->len);
	*len = b.len;
	return b.p;
}

/* ---- the standard recording --------------------------------------------- */

static void payload(uint8_t *p, size_t len, uint64_t offset)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(offset + i);
}

static void features(struct pgen *g)
{
	static const char *const argv[] = { "perf", "record", "-e", "intel_pt//u", "--", "./prog",
					    "arg" };
	uint32_t nrcpus[2] = { 2, 2 };

	pgen_feat_string(g, 3, "testhost");
	pgen_feat_string(g, 5, "6.1.0");
	pgen_feat_string(g, 6, "x86_64");
	pgen_feat_raw(g, 7, nrcpus, sizeof(nrcpus));
	pgen_feat_string(g, 8, "Test CPU @ 3.70GHz");
	pgen_feat_string(g, 9, "GenuineIntel,6,85,4");
	pgen_feat_cmdline(g, argv, 7);
}

static void info(struct pgen *g, bool per_thread)
{
	uint64_t priv[17] = {
		PGEN_PT_TYPE, 31, 600000000, 12345, 1, 0x400, 0x800, 2, 0, !per_thread, 0x200,
		0x3c000, 300, 2, 0x2, 37, 0,
	};

	pgen_time_conv(g, 31, 600000000, 12345);
	pgen_auxtrace_info(g, priv, 17);
}

/* Per-CPU sideband of stream @c (a CPU, or a thread's index), from attr @a. */
static struct pgen_sid sid_of(bool per_thread, int c, uint64_t id, uint64_t time)
{
	struct pgen_sid s = { .pid = 100, .tid = per_thread ? 100u + (uint32_t)c : 100,
			      .time = time, .id = id, .stream_id = id, .cpu = (uint32_t)c };

	return s;
}

/* A sample of the intel_pt event on CPU 0: not sideband, import leaves it out. */
static void sample(struct pgen *g, bool mixed)
{
	/* IDENTIFIER IP TID TIME CPU, or (mixed) IP TID TIME ID STREAM_ID CPU */
	uint64_t v[6] = { 11, 0x401000, 100 | 100ull << 32, 1350, 0, 0 };
	uint64_t m[6] = { 0x401000, 100 | 100ull << 32, 1350, 11, 11, 0 };
	size_t n = mixed ? sizeof(m) : 5 * 8;

	pgen_raw(g, &(struct perf_event_header){ PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
						  (uint16_t)(8 + n) }, 8);
	pgen_raw(g, mixed ? m : v, n);
}

void pgen_standard(struct pgen *g, bool per_thread, bool mixed)
{
	static const uint64_t pt_ids[] = { 11, 12 }, dummy_ids[] = { 21, 22 };
	const uint64_t pt_st = mixed ? 0x2c7 : 0x10087, dummy_st = mixed ? 0x2cd : 0x10087;
	struct pgen_sid zero = { 0 }, s;
	uint8_t p[64], body[128];
	uint32_t pt = (uint32_t)-1;
	int a, d;

	/*
	 * mixed: intel_pt IP|TID|TIME|ID|STREAM_ID|CPU, dummy IP|TIME|ADDR|ID|STREAM_ID|CPU:
	 * their trailers differ (the dummy's has no TID), their ids sit at one place, as
	 * perf requires of the events of one file.
	 */
	pgen_init(g);
	a = pgen_attr(g, PGEN_PT_TYPE, 0x300e601, pt_st, pt_ids, 2, "intel_pt//u");
	g->attrs[a].attr.exclude_kernel = 1;
	g->attrs[a].attr.enable_on_exec = 1;
	d = pgen_attr(g, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, dummy_st, dummy_ids, 2,
		      "dummy:u");
	g->attrs[d].attr.context_switch = 1;
	g->attrs[d].attr.mmap2 = g->attrs[d].attr.comm = g->attrs[d].attr.task = 1;
	features(g);
	pgen_feat_event_desc(g);
	info(g, per_thread);
	/* Synthesized by perf from /proc: a zeroed sample_id, the first event's layout. */
	memset(body, 0, sizeof(body));
	memcpy(body, (uint32_t[2]){ 100, 100 }, 8);
	memcpy(body + 8, "prog\0\0\0", 8);
	pgen_kernel(g, a, PERF_RECORD_COMM, 0, body, 16, &zero);
	for (int c = 0; c < 2; c++) {
		s = sid_of(per_thread, c, pt_ids[c], 1000 + (uint64_t)c);
		memcpy(body, (uint32_t[2]){ s.pid, s.tid }, 8);
		pgen_kernel(g, a, PERF_RECORD_ITRACE_START, 0, body, 8, &s);
	}
	s = sid_of(per_thread, 0, dummy_ids[0], 1100);
	memcpy(body, (uint32_t[2]){ 100, 100 }, 8);
	pgen_kernel(g, d, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, body, 16, &s);
	memset(body, 0, sizeof(body));
	memcpy(body, (uint32_t[2]){ 100, 100 }, 8);
	memcpy(body + 8, (uint64_t[3]){ 0x400000, 0x1000, 0 }, 24);
	memcpy(body + 56, (uint32_t[2]){ 5, 2 }, 8);
	memcpy(body + 64, "/tmp/prog", 10);
	s = sid_of(per_thread, 0, dummy_ids[0], 1200);
	pgen_kernel(g, d, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, body, 80, &s);
	payload(p, 16, 16);
	pgen_auxtrace(g, 1, per_thread ? pt : 1, per_thread ? 101 : pt, 16, p, 16);
	payload(p, 16, 0);
	pgen_auxtrace(g, 1, per_thread ? pt : 1, per_thread ? 101 : pt, 0, p, 16);
	payload(p, 24, 0);
	pgen_auxtrace(g, 0, per_thread ? pt : 0, per_thread ? 100 : pt, 0, p, 24);
	s = sid_of(per_thread, 1, pt_ids[1], 1300);
	memcpy(body, (uint64_t[3]){ 0, 32, PERF_AUX_FLAG_TRUNCATED }, 24);
	pgen_kernel(g, a, PERF_RECORD_AUX, 0, body, 24, &s);
	s = sid_of(per_thread, 0, dummy_ids[0], 1400);
	memcpy(body, (uint64_t[2]){ 21, 5 }, 16);
	pgen_kernel(g, d, PERF_RECORD_LOST, 0, body, 16, &s);
	sample(g, mixed);
	s = sid_of(per_thread, 1, dummy_ids[1], 1500);
	memcpy(body, (uint32_t[2]){ 0, 0 }, 8);
	pgen_kernel(g, d, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT, body, 8, &s);
	pgen_raw(g, &(struct perf_event_header){ 68, 0, 8 }, 8);	/* FINISHED_ROUND */
}
