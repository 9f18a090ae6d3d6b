// SPDX-License-Identifier: MIT
/*
 * report's merge (report_agg.c): when it looks ahead of its records. The look-ahead only
 * fetches (its output is the same either way: the integration tests compare), so what is
 * tested is the rule, at the rates of T_ADEFs measured in docs/benchmarks.md. And what the
 * merge adds to its rows later (calls past the depth bound, calls and returns below it),
 * from records written by hand.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsink.h"
#include "printable.h"
/* (the merge's own header, src/decode's: the Makefile adds that directory for this test) */
#include "report_agg.h"
#include "xorshift.h"

Test(report_agg, looks_ahead_only_where_slot_definitions_are_frequent)
{
	/* 512 worker slots, ptwalk over 2,000 functions: a record in 3 to 4 a T_ADEF */
	cr_expect(report_ahead_wanted(44430, 44430 + 72678 + 60000));
	/* a record in 8: still on */
	cr_expect(report_ahead_wanted(1000, 8000));
	/* the walk with 32,768 slots: 135,414 T_ADEFs in about 2.7 M records (a loss) */
	cr_expect(!report_ahead_wanted(135414, 2700000));
	/* one in 32 (the rule before turned it on there) */
	cr_expect(!report_ahead_wanted(1000, 32000));
	/* the loop: a few T_ADEFs among many records */
	cr_expect(!report_ahead_wanted(12, 101000));
}

static uint32_t rnd_state = 2026;

static uint32_t rnd(void)
{
	return xorshift32(&rnd_state);
}

/*
 * A T_CALLV's varints as report_filter() reads them (8 bytes at a time where 8 are there)
 * against the bytes put_varint() would write: 1 to 10 bytes, whatever follows, at the
 * buffer's end, cut short.
 */
Test(report_agg, reads_each_varint_whatever_its_length_and_what_follows)
{
	uint8_t b[32];

	for (int r = 0; r < 200000; r++) {
		unsigned bits = rnd() % 65, n = 0;
		uint64_t want = bits ? ((uint64_t)rnd() << 32 | rnd()) >> (64 - bits) : 0;
		uint64_t got = 0, x = want;
		size_t at = rnd() % 4, len, end;

		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (uint8_t)rnd();
		do {
			b[at + n++] = (uint8_t)(x & 0x7f) | (x >> 7 ? 0x80 : 0);
			x >>= 7;
		} while (x);
		end = at + n;
		/* (or at the buffer's end: no 8 bytes there) */
		len = rnd() % 2 ? end + rnd() % 10 : end;
		cr_assert(report_varint(b, len, &at, &got), "a varint of %u bytes", n);
		cr_assert_eq(got, want, "a varint of %u bytes", n);
		cr_assert_eq(at, end, "a varint of %u bytes: where it ends", n);
		at = end - n;
		cr_assert(!report_varint(b, end - 1, &at, &got), "a varint cut short");
	}
}

/* A frame as folded() spelt it before it spelt each once: object`function, ';' as ':'. */
static size_t spell_ref(const struct rstate *s, uint32_t y, char *b)
{
	char t[4 * NAME_LEN + 1];
	size_t n = 0;

	for (int part = s->sym_obj[y] == NONE; part < 2; part++) {
		printable_to(t, sizeof(t), part ? sym_text(s, y) : obj_text(s, y));
		for (char *p = t; *p; p++)
			b[n++] = *p == ';' ? ':' : *p;
		if (!part)
			b[n++] = '`';
	}
	return n;
}

/*
 * report --folded's lines (report_out.c's folded(): each frame spelt once, a line started
 * from the one before as far as their stacks share nodes) against each line made whole as
 * before: a random tree of 20,000 nodes (a child mostly under the node just made, so
 * stacks share long prefixes and part), weights 0 (no line) among them, names that are
 * empty, with ';', with bytes to escape, with and without an object, and a chain deeper
 * than the REPORT_DEPTH_MAX + 2 frames a line shows.
 */
Test(report_agg, folded_lines_are_each_nodes_stack_from_the_root)
{
	static const char *const names[] = { "main", "", "a;b", "f\x01g", "[unknown] (x+0x10)",
					     "lib.so", "h", ";", "caf\xc3\xa9" };
	struct report_config rc = { .view = REPORT_FOLDED, .weight_insns = true };
	struct rstate *s = calloc(1, sizeof(*s));
	struct report_state rs = { .s = s };
	char *dup[sizeof(names) / sizeof(names[0])];
	uint32_t nn = 20000, chain = REPORT_DEPTH_MAX + 40, path[REPORT_DEPTH_MAX + 2];
	size_t cap = 1 << 20, len = 0, got_len;
	char *want = malloc(cap), *got;
	FILE *f = tmpfile();
	struct dout o;

	cr_assert(s && want && f);
	s->rc = &rc;
	s->nstr = sizeof(names) / sizeof(names[0]);
	s->str = malloc(s->nstr * sizeof(*s->str));
	/* the state's strings are in its blocks (none here): these are freed below */
	for (uint32_t i = 0; i < s->nstr; i++)
		s->str[i] = dup[i] = strdup(names[i]);
	/* every name alone, and each in object 5 ("lib.so") */
	s->nsyms = 2 * s->nstr;
	s->sym_name = malloc(s->nsyms * sizeof(*s->sym_name));
	s->sym_obj = malloc(s->nsyms * sizeof(*s->sym_obj));
	for (uint32_t i = 0; i < s->nsyms; i++) {
		s->sym_name[i] = i % s->nstr;
		s->sym_obj[i] = i < s->nstr ? NONE : 5;
	}
	s->nnodes = nn + chain;
	s->nodes = calloc(s->nnodes, sizeof(*s->nodes));
	cr_assert(s->nodes);
	for (uint32_t i = 0; i < nn; i++) {
		uint32_t r = rnd() % 16;

		s->nodes[i].parent = i < 3 || r == 0 ? NONE : r < 12 ? i - 1 : rnd() % i;
		s->nodes[i].name = rnd() % s->nsyms;
		s->nodes[i].insns = rnd() % 3 ? rnd() % 100000 : 0;
	}
	for (uint32_t i = nn; i < nn + chain; i++) {
		s->nodes[i].parent = i == nn ? NONE : i - 1;
		s->nodes[i].name = rnd() % s->nsyms;
		s->nodes[i].insns = i % 7 ? 0 : 1 + i;
	}
	/* what each line was: its stack (the nearest frames at most) from the root, whole */
	for (uint32_t i = 0; i < s->nnodes; i++) {
		uint32_t d = 0;

		if (!s->nodes[i].insns)
			continue;
		for (uint32_t k = i; k != NONE && d < REPORT_DEPTH_MAX + 2; k = s->nodes[k].parent)
			path[d++] = k;
		while (d--) {
			if (len + 3 * 4 * NAME_LEN + 64 > cap)
				cr_assert(want = realloc(want, cap *= 2));
			len += spell_ref(s, s->nodes[path[d]].name, want + len);
			want[len++] = d ? ';' : ' ';
		}
		len += (size_t)sprintf(want + len, "%" PRIu64 "\n", s->nodes[i].insns);
	}
	cr_assert_eq(dout_init(&o, fileno(f), NULL, &rs), 0);
	report_finish(&o);	/* prints, and frees the state */
	for (size_t i = 0; i < sizeof(dup) / sizeof(dup[0]); i++)
		free(dup[i]);
	cr_assert_eq(dout_flush(&o), 0);
	dout_destroy(&o);
	got_len = (size_t)lseek(fileno(f), 0, SEEK_CUR);
	cr_assert_eq(got_len, len, "%zu bytes printed, %zu made whole", got_len, len);
	got = malloc(got_len);
	rewind(f);
	cr_assert(got && fread(got, 1, got_len, f) == got_len);
	for (size_t i = 0; i < len; i++)
		if (got[i] != want[i])
			cr_assert_fail("byte %zu differs: ...%.80s against ...%.80s", i,
				       got + (i > 40 ? i - 40 : 0), want + (i > 40 ? i - 40 : 0));
	fclose(f);
	free(got);
	free(want);
}

/* ---- the merge's records, written by hand ---- */

struct recs {
	uint8_t b[1 << 16];
	size_t n;
};

static void rec_def(struct recs *r, uint16_t id, const char *name)
{
	struct pdef d = { .id = id, .len = (uint16_t)strlen(name) };

	r->b[r->n++] = T_DEF;
	memcpy(r->b + r->n, &d, sizeof(d));
	r->n += sizeof(d);
	memcpy(r->b + r->n, name, d.len);
	r->n += d.len;
}

/* Slot @aid holds the function named by id @name (no object: id @none, ""). */
static void rec_adef(struct recs *r, uint16_t aid, uint16_t name, uint16_t none)
{
	struct padef d = { .aid = aid, .name = name, .obj = none, .how = N_SYM };

	r->b[r->n++] = T_ADEF;
	memcpy(r->b + r->n, &d, sizeof(d));
	r->n += sizeof(d);
}

/* A call of slot @aid after @k (< 128) instructions, its return address the last one's. */
static void rec_callv(struct recs *r, uint8_t k, uint16_t aid)
{
	r->b[r->n++] = T_CALLV;
	r->b[r->n++] = k;
	memcpy(r->b + r->n, &aid, sizeof(aid));
	r->n += sizeof(aid);
	r->b[r->n++] = 0;
}

/* The top frame returns after @k (< 128) instructions. */
static void rec_rettop(struct recs *r, uint8_t k)
{
	r->b[r->n++] = T_RETTOP;
	r->b[r->n++] = k;
}

/* The row of the function named @name (the one group), NULL: none. */
static const struct func *row_named(const struct rstate *s, const char *name)
{
	for (uint32_t i = 0; i < s->nfuncs; i++)
		if (!strcmp(sym_text(s, s->funcs[i].name), name))
			return &s->funcs[i];
	return NULL;
}

/*
 * Past the depth bound a call's count goes 16 such calls later (row_later()), and below it
 * what a call and a return add to the row goes ROW_LOG (8) entries later (struct rlog):
 * a slot defined again past the bound counts each call for the function it held then (f
 * keeps its call), and what a buffer left for later is in the rows when report_filter()
 * returns (the calls, the instructions of each leaf, the frames' own instructions at
 * their return).
 */
Test(report_agg, counts_calls_read_later_into_the_rows_they_were_made_for)
{
	struct report_config rc = { .view = REPORT_FUNCTIONS };
	struct decode_config cfg = { .report = &rc, .nr_streams = 1 };
	struct report_state rs = { 0 };
	static struct recs r;
	const struct func *f, *g, *h, *d;
	FILE *tmp = tmpfile();
	struct rstate *s;
	struct dout o;

	cr_assert(tmp);
	cr_assert_eq(dout_init(&o, fileno(tmp), NULL, &rs), 0);
	report_begin(&o, &cfg);
	s = rs.s;
	cr_assert(s);
	rec_def(&r, 0, "");
	rec_def(&r, 1, "d");
	rec_def(&r, 2, "f");
	rec_def(&r, 3, "g");
	rec_def(&r, 4, "h");
	rec_adef(&r, 0, 1, 0);
	/* below the bound: d calls h (a leaf, 3 instructions) ten times, 2 of its own between */
	rec_callv(&r, 0, 0);
	rec_adef(&r, 1, 4, 0);
	for (int i = 0; i < 10; i++) {
		rec_callv(&r, 2, 1);
		rec_rettop(&r, 3);
	}
	/* d down to the bound (d's 1,023 calls more, none returned) */
	for (int i = 1; i < REPORT_DEPTH_MAX; i++)
		rec_callv(&r, 0, 0);
	/* past it: slot 2 holds f, then g; each called once, read later */
	rec_adef(&r, 2, 2, 0);
	rec_callv(&r, 0, 2);
	rec_rettop(&r, 0);
	rec_adef(&r, 2, 3, 0);
	rec_callv(&r, 0, 2);
	rec_rettop(&r, 0);
	/* the top d returns after 5 of its own */
	rec_rettop(&r, 5);
	report_filter(&o, r.b, r.n);
	cr_assert_not(s->oom);
	f = row_named(s, "f");
	g = row_named(s, "g");
	h = row_named(s, "h");
	d = row_named(s, "d");
	cr_assert(f && g && h && d);
	/* past the bound a call is counted by its slot: f's when g took the slot (its T_ADEF),
	 * g's at the streams' end (below) */
	cr_expect_eq(f->calls, 1, "f: %" PRIu64 " calls", f->calls);
	cr_expect_eq(f->incomplete, 1);
	cr_expect_eq(h->calls, 10);
	cr_expect_eq(h->insns_self, 30);
	cr_expect_eq(h->d.n, 10);
	/* a call counted as its frame leaves: the top d's at its return, the others' not yet */
	cr_expect_eq(d->calls, 1, "d: %" PRIu64 " calls", d->calls);
	/* the top frame's 5 at its return; the first frame's 20 while it is open: not yet */
	cr_expect_eq(d->insns_self, 5, "d: %" PRIu64 " own instructions", d->insns_self);
	cr_expect_eq(d->d.n, 1);
	/* the open frames cut at the end: each a call, incomplete */
	streams_end(s);
	cr_expect_eq(g->calls, 1, "g: %" PRIu64 " calls", g->calls);
	cr_expect_eq(g->incomplete, 1);
	cr_expect_eq(d->calls, REPORT_DEPTH_MAX, "d: %" PRIu64 " calls", d->calls);
	cr_expect_eq(d->incomplete, REPORT_DEPTH_MAX - 1);
	cr_expect_eq(d->insns_self, 25);
	report_free(s);
	rs.s = NULL;
	dout_destroy(&o);
	fclose(tmp);
}

/* ---- calls and returns past the depth bound, taken in a run (over_run()) ---- */

#define OB_FUNCS 5
#define OB_STEPS 6000

struct ob_recs {
	struct recs r;
	size_t at[OB_STEPS + 2 * REPORT_DEPTH_MAX + 64];	/* where each record starts */
	size_t nat;
	uint64_t ret;			/* the return addresses' differences, summed */
};

static void ob_mark(struct ob_recs *w)
{
	cr_assert_lt(w->r.n + 64, sizeof(w->r.b));
	w->at[w->nat++] = w->r.n;
}

static void ob_varint(struct recs *r, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		r->b[r->n++] = (uint8_t)(v | 0x80);
	r->b[r->n++] = (uint8_t)v;
}

/* A T_CALLV of slot @aid after @k, its return address @d from the last one's. */
static void ob_callv(struct ob_recs *w, uint32_t k, uint16_t aid, int64_t d)
{
	ob_mark(w);
	w->r.b[w->r.n++] = T_CALLV;
	ob_varint(&w->r, k);
	memcpy(w->r.b + w->r.n, &aid, sizeof(aid));
	w->r.n += sizeof(aid);
	ob_varint(&w->r, (uint64_t)d << 1 ^ (uint64_t)(d >> 63));
	w->ret += (uint64_t)d;
}

static void ob_rettop(struct ob_recs *w, uint32_t k)
{
	ob_mark(w);
	w->r.b[w->r.n++] = T_RETTOP;
	ob_varint(&w->r, k);
}

static void ob_adef(struct ob_recs *w, uint16_t aid, uint16_t name)
{
	ob_mark(w);
	rec_adef(&w->r, aid, name, 0);
}

/* Names "" (id 0), d (1), f0 to f4 (2 on); slot 0 holds d, slot i f(i - 1) (@holds[i]). */
static void ob_defs(struct ob_recs *w, uint16_t *holds)
{
	ob_mark(w);
	rec_def(&w->r, 0, "");
	ob_mark(w);
	rec_def(&w->r, 1, "d");
	for (int i = 0; i < OB_FUNCS; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%d", i);
		ob_mark(w);
		rec_def(&w->r, (uint16_t)(2 + i), name);
	}
	ob_adef(w, 0, 1);
	for (uint16_t i = 1; i <= OB_FUNCS; i++) {
		ob_adef(w, i, (uint16_t)(1 + i));
		holds[i] = (uint16_t)(i - 1);
	}
}

/* A random run of instructions: mostly one byte's, some two or three. */
static uint32_t ob_k(void)
{
	uint32_t x = rnd();

	return x % 8 ? x % 100 : x % 4 ? x % 20000 : x % 3000000;
}

static struct rstate *ob_begin(struct dout *o, struct report_state *rs,
			       const struct decode_config *cfg, FILE *f)
{
	cr_assert_eq(dout_init(o, fileno(f), NULL, rs), 0);
	report_begin(o, cfg);
	cr_assert(rs->s);
	return rs->s;
}

/*
 * Past the depth bound the merge takes a run of T_CALLVs and T_RETTOPs in a loop of its own
 * (each call its row's call and incomplete, each return over--, their instructions at once).
 * A random walk there (runs of several byte lengths, a slot defined again in the middle, a
 * dip back under the bound and down again) against what it should count, and against the
 * same records given one a report_filter() (where each goes through the main loop alone).
 */
Test(report_agg, calls_and_returns_past_the_depth_bound_count_as_one_by_one)
{
	struct report_config rc = { .view = REPORT_FUNCTIONS };
	struct decode_config cfg = { .report = &rc, .nr_streams = 1 };
	static struct ob_recs w;
	uint64_t want_calls[OB_FUNCS + 1] = { 0 }, calls = 0, deep = 0, insns = 0;
	uint16_t holds[OB_FUNCS + 1];	/* slot i's function (name id - 2) */
	struct report_state ra = { 0 }, rb = { 0 };
	FILE *fa = tmpfile(), *fb = tmpfile();
	struct rstate *a, *b;
	struct dout oa, ob;
	uint32_t over = 0, depth = 0;

	cr_assert(fa && fb);
	a = ob_begin(&oa, &ra, &cfg, fa);
	b = ob_begin(&ob, &rb, &cfg, fb);
	ob_defs(&w, holds);
	/* d down to the bound */
	for (; depth < REPORT_DEPTH_MAX; depth++) {
		uint32_t k = ob_k();

		ob_callv(&w, k, 0, (int64_t)(rnd() % 64) - 32);
		insns += k;
		calls++;
	}
	for (int step = 0; step < OB_STEPS; step++) {
		uint32_t k = ob_k(), x = rnd();

		insns += k;
		if (step == OB_STEPS / 2) {
			/* slot 1 holds f4 from here on */
			ob_adef(&w, 1, 2 + OB_FUNCS - 1);
			holds[1] = OB_FUNCS - 1;
		}
		if (step == OB_STEPS / 4) {
			/* back under the bound (d returns) once all past it have, then down */
			for (; over; over--) {
				ob_rettop(&w, k);
				insns += k;
			}
			ob_rettop(&w, k);
			ob_callv(&w, k, 0, 7);
			insns += k;
			calls++;
			continue;
		}
		if (over && x % 2) {
			ob_rettop(&w, k);
			over--;
		} else {
			uint16_t slot = (uint16_t)(1 + x / 2 % OB_FUNCS);
			/* (differences of 1 to 4 bytes' varints) */
			int64_t d = (int64_t)(rnd() % (1u << (7 * (1 + x / 16 % 4)))) - 64;

			ob_callv(&w, k, slot, d);
			want_calls[holds[slot]]++;
			over++;
			calls++;
			deep++;
		}
	}
	for (; over; over--) {
		ob_rettop(&w, 3);
		insns += 3;
	}
	report_filter(&oa, w.r.b, w.r.n);
	for (size_t i = 0; i < w.nat; i++) {
		size_t end = i + 1 < w.nat ? w.at[i + 1] : w.r.n;

		report_filter(&ob, w.r.b + w.at[i], end - w.at[i]);
	}
	/* (the slots' counts of calls past the bound into the rows, as the streams' end does) */
	report_settle(a);
	report_settle(b);
	cr_assert_not(a->oom);
	cr_assert_not(b->oom);
	for (int i = 0; i < OB_FUNCS; i++) {
		char name[16];
		const struct func *f;

		snprintf(name, sizeof(name), "f%d", i);
		f = row_named(a, name);
		cr_assert(f || !want_calls[i]);
		cr_expect_eq(f ? f->calls : 0, want_calls[i], "%s: %" PRIu64 " calls, not %" PRIu64,
			     name, f ? f->calls : 0, want_calls[i]);
		cr_expect_eq(f ? f->incomplete : 0, want_calls[i]);
	}
	cr_expect_eq(a->calls, calls, "%" PRIu64 " calls, not %" PRIu64, a->calls, calls);
	cr_expect_eq(a->deep, deep, "%" PRIu64 " past the bound, not %" PRIu64, a->deep, deep);
	cr_expect_eq(a->ret_prev, w.ret);
	cr_expect_eq(a->cur->over, 0);
	cr_expect_eq(a->cur->depth, REPORT_DEPTH_MAX);
	cr_expect_eq(a->insns, insns, "%" PRIu64 " instructions, not %" PRIu64, a->insns, insns);
	/* the same as one record at a time */
	cr_expect_eq(a->insns, b->insns);
	cr_expect_eq(a->calls, b->calls);
	cr_expect_eq(a->deep, b->deep);
	cr_expect_eq(a->ret_prev, b->ret_prev);
	cr_expect_eq(a->cur->insns, b->cur->insns);
	cr_expect_eq(a->cur->st[REPORT_DEPTH_MAX - 1].insns_self,
		     b->cur->st[REPORT_DEPTH_MAX - 1].insns_self);
	cr_assert_eq(a->nfuncs, b->nfuncs);
	for (uint32_t i = 0; i < a->nfuncs; i++) {
		const struct func *x = &a->funcs[i], *y = &b->funcs[i];

		cr_expect_eq(x->calls, y->calls, "row %u", i);
		cr_expect_eq(x->incomplete, y->incomplete, "row %u", i);
		cr_expect_eq(x->insns_self, y->insns_self, "row %u", i);
		cr_expect_eq(x->insns_total, y->insns_total, "row %u", i);
		cr_expect_eq(x->d.n, y->d.n, "row %u", i);
	}
	/* d's calls, each counted as its frame leaves (the open ones cut at the end) */
	streams_end(a);
	cr_expect_eq(row_named(a, "d")->calls, REPORT_DEPTH_MAX + 1);
	report_free(a);
	report_free(b);
	ra.s = rb.s = NULL;
	dout_destroy(&oa);
	dout_destroy(&ob);
	fclose(fa);
	fclose(fb);
}

/* A switch to thread @tid (pid 1). */
static void ob_thread(struct ob_recs *w, uint32_t tid)
{
	struct prec p = { .kind = P_THREAD, .pid = 1, .tid = tid };

	ob_mark(w);
	w->r.b[w->r.n++] = T_REC;
	memcpy(w->r.b + w->r.n, &p, sizeof(p));
	w->r.n += sizeof(p);
}

#define SB_THREADS 2
#define SB_STEPS 5000

/*
 * Past the depth bound over_run() counts a call by its slot (rstate's sc[]) and adds the
 * count to the slot's function's row later: at the slot's T_ADEF, when a thread of another
 * group runs past the bound, at the streams' end. Two threads, a group each, past the bound
 * and calling the same slots in turn, slots defined again on the way: each group's row of
 * each function gets its own calls, whether the records come at once or one at a time.
 */
Test(report_agg, calls_past_the_bound_counted_by_slot_go_to_each_groups_row)
{
	struct report_config rc = { .view = REPORT_FUNCTIONS, .per_thread = true };
	struct decode_config cfg = { .report = &rc, .nr_streams = 1 };
	static struct ob_recs w;
	uint64_t want[SB_THREADS][OB_FUNCS] = { 0 };
	uint32_t over[SB_THREADS] = { 0 }, th = 0;
	uint16_t holds[OB_FUNCS + 1];
	struct report_state ra = { 0 }, rb = { 0 };
	FILE *fa = tmpfile(), *fb = tmpfile();
	struct rstate *st[2];
	struct dout oa, ob;

	cr_assert(fa && fb);
	st[0] = ob_begin(&oa, &ra, &cfg, fa);
	st[1] = ob_begin(&ob, &rb, &cfg, fb);
	memset(&w, 0, sizeof(w));
	ob_defs(&w, holds);
	/* each thread down to the bound in d (return addresses far from 0 and UINT64_MAX, an
	 * interrupt's) */
	for (uint32_t t = 0; t < SB_THREADS; t++) {
		ob_thread(&w, 1 + t);
		for (int i = 0; i < REPORT_DEPTH_MAX; i++)
			ob_callv(&w, 1, 0, i || t ? 0 : 1 << 30);
	}
	th = SB_THREADS - 1;
	for (int step = 0; step < SB_STEPS; step++) {
		uint32_t x = rnd();

		if (step % 700 == 350) {
			/* a slot holds another function from here on */
			uint16_t slot = (uint16_t)(1 + x % OB_FUNCS);
			uint32_t other = holds[slot] + 1 + x / 8 % (OB_FUNCS - 1);

			holds[slot] = (uint16_t)(other % OB_FUNCS);
			ob_adef(&w, slot, (uint16_t)(2 + holds[slot]));
		} else if (x % 11 == 0) {
			th = (th + 1) % SB_THREADS;
			ob_thread(&w, 1 + th);
		} else if (over[th] && x % 3 == 0) {
			ob_rettop(&w, 2);
			over[th]--;
		} else {
			uint16_t slot = (uint16_t)(1 + x / 4 % OB_FUNCS);

			ob_callv(&w, 3, slot, (int64_t)(x % 200) - 100);
			want[th][holds[slot]]++;
			over[th]++;
		}
	}
	report_filter(&oa, w.r.b, w.r.n);
	for (size_t i = 0; i < w.nat; i++) {
		size_t end = i + 1 < w.nat ? w.at[i + 1] : w.r.n;

		report_filter(&ob, w.r.b + w.at[i], end - w.at[i]);
	}
	for (int k = 0; k < 2; k++) {
		struct rstate *s = st[k];

		/* (the frames cut at the end add d's incomplete, none of f's) */
		streams_end(s);
		cr_assert_not(s->oom);
		for (uint32_t t = 0; t < SB_THREADS; t++) {
			char group[32];

			snprintf(group, sizeof(group), "1/%" PRIu32, 1 + t);
			for (int i = 0; i < OB_FUNCS; i++) {
				char name[16];
				uint32_t row;
				const struct func *f;

				snprintf(name, sizeof(name), "f%d", i);
				row = report_row(s, group, report_sym(s, name, ""));
				cr_assert(row != NONE || !want[t][i]);
				f = row == NONE ? NULL : &s->funcs[row];
				cr_expect_eq(f ? f->calls : 0, want[t][i],
					     "%d: %s %s: %" PRIu64 " calls, not %" PRIu64, k, group,
					     name, f ? f->calls : 0, want[t][i]);
				cr_expect_eq(f ? f->incomplete : 0, want[t][i], "%d: %s %s", k,
					     group, name);
			}
		}
	}
	report_free(st[0]);
	report_free(st[1]);
	ra.s = rb.s = NULL;
	dout_destroy(&oa);
	dout_destroy(&ob);
	fclose(fa);
	fclose(fb);
}

/*
 * A slot's count of calls past the bound goes to its row when it reaches UINT32_MAX, and
 * counts on from 0: none is lost (the count is set near its end by hand, 4 G calls being
 * too many for a test).
 */
Test(report_agg, a_slots_count_past_the_bound_goes_to_its_row_before_it_wraps)
{
	struct report_config rc = { .view = REPORT_FUNCTIONS };
	struct decode_config cfg = { .report = &rc, .nr_streams = 1 };
	static struct ob_recs w;
	uint16_t holds[OB_FUNCS + 1];
	struct report_state rs = { 0 };
	FILE *f = tmpfile();
	const struct func *fn;
	struct rstate *s;
	struct dout o;

	cr_assert(f);
	s = ob_begin(&o, &rs, &cfg, f);
	memset(&w, 0, sizeof(w));
	ob_defs(&w, holds);
	for (int i = 0; i < REPORT_DEPTH_MAX; i++)
		ob_callv(&w, 1, 0, i ? 0 : 1 << 30);
	ob_callv(&w, 1, 1, 5);
	report_filter(&o, w.r.b, w.r.n);
	cr_assert_eq(s->sc[1], 1);
	s->sc[1] = UINT32_MAX - 2;
	w.r.n = 0;
	for (int i = 0; i < 3; i++)
		ob_callv(&w, 1, 1, 5);
	report_filter(&o, w.r.b, w.r.n);
	cr_expect_eq(s->sc[1], 1, "slot 1: %" PRIu32, s->sc[1]);
	streams_end(s);
	cr_assert_not(s->oom);
	fn = row_named(s, "f0");
	cr_assert(fn);
	cr_expect_eq(fn->calls, (uint64_t)UINT32_MAX + 1, "f0: %" PRIu64 " calls", fn->calls);
	cr_expect_eq(fn->incomplete, (uint64_t)UINT32_MAX + 1);
	report_free(s);
	rs.s = NULL;
	dout_destroy(&o);
	fclose(f);
}

/*
 * The merge's functions and rows (sym_get(), func_get()): a name's first object and a sym's
 * first group in arrays, the others in tables, the strings in blocks. Against a plain list:
 * the same name and object give the same function and no other does, the same group and
 * function the same row, ids in the order first asked (as the rows' order was before), the
 * strings whole (some longer than a block).
 */
#define T_NAMES 3000
#define T_ASKS 60000

struct t_ask {
	uint16_t name;
	uint8_t obj, group;
};

Test(report_agg, functions_and_rows_by_name_object_and_group)
{
	static const char *const objs[] = { "", "a.so", "b.so", "c" };
	static const char *const groups[] = { "", "pid 1 tid 1", "pid 1 tid 2" };
	struct report_config rc = { .view = REPORT_FUNCTIONS };
	struct rstate *s = calloc(1, sizeof(*s));
	static char *names[T_NAMES];
	static struct t_ask sym_of[T_ASKS], row_of[T_ASKS];	/* what each id was made for */
	uint32_t nsym = 0, nrow = 0;

	cr_assert(s);
	s->rc = &rc;
	for (uint32_t i = 0; i < T_NAMES; i++) {
		size_t n = i % 1000 == 7 ? 70000 + i : 1 + rnd() % 60;

		cr_assert(names[i] = malloc(n + 16));
		n = (size_t)sprintf(names[i], "%u:", i) + n;
		for (size_t k = strlen(names[i]); k < n; k++)
			names[i][k] = (char)('a' + rnd() % 26);
		names[i][n] = '\0';
	}
	for (uint32_t k = 0; k < T_ASKS; k++) {
		/* most names in one object, some in two to four; mostly one group */
		struct t_ask a = { .name = (uint16_t)(rnd() % T_NAMES) };
		uint32_t sym, row, i;

		a.obj = (uint8_t)(rnd() % 8 ? a.name % 4 : rnd() % 4);
		a.group = (uint8_t)(rnd() % 4 ? 0 : rnd() % 3);
		sym = report_sym(s, names[a.name], objs[a.obj]);
		for (i = 0; i < nsym; i++)
			if (sym_of[i].name == a.name && sym_of[i].obj == a.obj)
				break;
		if (i == nsym)
			sym_of[nsym++] = a;
		cr_assert_eq(sym, i, "ask %u: function %u, the list's %u", k, sym, i);
		cr_assert_str_eq(sym_text(s, sym), names[a.name]);
		cr_assert_str_eq(obj_text(s, sym), objs[a.obj]);
		row = report_row(s, groups[a.group], sym);
		for (i = 0; i < nrow; i++)
			if (row_of[i].name == a.name && row_of[i].obj == a.obj &&
			    row_of[i].group == a.group)
				break;
		if (i == nrow)
			row_of[nrow++] = a;
		cr_assert_eq(row, i, "ask %u: row %u, the list's %u", k, row, i);
		cr_assert_eq(s->funcs[row].name, sym);
		cr_assert_str_eq(s->str[s->funcs[row].group], groups[a.group]);
		cr_assert_eq((uintptr_t)&s->funcs[row] % 64, 0);
	}
	cr_assert(!s->oom);
	/* every name in more than one object, and in more than one group, was asked */
	cr_assert_gt(s->symmap.n, 100);
	cr_assert_gt(s->funcmap.n, 100);
	report_free(s);
	for (uint32_t i = 0; i < T_NAMES; i++)
		free(names[i]);
}

/*
 * The rows' exact durations from the pool (exact_get(), exact_put()): 2,000 distributions
 * grown in turn, at random, so that arrays given back are taken again and blocks' ends cut
 * up; each keeps what was added, in order, until its histogram (past REPORT_EXACT_MAX), and
 * its quantiles are a sort's.
 */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

Test(report_agg, exact_durations_each_keep_their_own)
{
	enum { ND = 2000 };
	struct report_config rc = { .view = REPORT_FUNCTIONS };
	struct rstate *s = calloc(1, sizeof(*s));
	static struct dist d[ND];
	static uint64_t *want[ND];
	static uint32_t left[ND], n[ND];
	const unsigned q[3] = { 500, 900, 990 };
	uint32_t busy = 0;
	uint64_t bigs = 0;

	cr_assert(s);
	s->rc = &rc;
	for (uint32_t i = 0; i < ND; i++) {
		left[i] = rnd() % 3 ? rnd() % 40 : rnd() % (REPORT_EXACT_MAX + 300);
		cr_assert(want[i] = malloc((left[i] + 1) * sizeof(*want[i])));
		d[i].min = UINT64_MAX;
		busy += left[i] > 0;
	}
	while (busy) {
		uint32_t i = rnd() % ND;
		uint64_t v = rnd() % 100000;

		/* some of 32 bits' bound and more: kept apart (EXACT_BIG), still exact */
		if (i % 7 == 0 && rnd() % 8 == 0)
			v = rnd() % 2 ? EXACT_BIG - 1 + rnd() % 3 :
					(uint64_t)rnd() << (rnd() % 20 + 4);

		if (!left[i])
			continue;
		report_dist_add(s, &d[i], v);
		want[i][n[i]++] = v;
		busy -= !--left[i];
	}
	cr_assert(!s->oom);
	for (uint32_t i = 0; i < ND; i++) {
		uint64_t got[3], sorted[REPORT_EXACT_MAX], nb;

		cr_assert_eq(d[i].n, n[i]);
		if (n[i] > REPORT_EXACT_MAX) {
			uint64_t all = 0;

			cr_assert(d[i].hist && !d[i].exact && !d[i].big);
			for (uint32_t b = 0; b < 60 * REPORT_HIST_SUB; b++)	/* (BUCKETS) */
				all += d[i].hist[b];
			cr_assert_eq(all, n[i], "distribution %u: a value lost (histogram)", i);
			continue;
		}
		cr_assert(!d[i].hist);
		cr_assert_eq(d[i].nexact, n[i]);
		nb = 0;
		for (uint32_t j = 0; j < n[i]; j++) {
			if (want[i][j] < EXACT_BIG) {
				cr_assert_eq(d[i].exact[j], want[i][j],
					     "distribution %u: its durations changed", i);
				continue;
			}
			cr_assert_eq(d[i].exact[j], EXACT_BIG, "distribution %u, value %u", i, j);
			cr_assert(d[i].big && d[i].big[0] > nb, "distribution %u: big lost", i);
			cr_assert_eq(d[i].big[++nb], want[i][j], "distribution %u, value %u", i, j);
		}
		cr_assert_eq(d[i].big ? d[i].big[0] : 0, nb, "distribution %u: big ones", i);
		bigs += nb;
		memcpy(sorted, want[i], n[i] * sizeof(*want[i]));
		qsort(sorted, n[i], sizeof(*sorted), cmp_u64);
		dist_quantiles(&d[i], q, got, 3);
		for (int k = 0; k < 3 && n[i]; k++) {
			uint64_t r = (n[i] * q[k] + 999) / 1000;

			cr_assert_eq(got[k], sorted[r ? r - 1 : 0], "distribution %u, q %u", i, q[k]);
		}
	}
	cr_assert_gt(bigs, 20, "the test's big durations: %lu", (unsigned long)bigs);
	for (uint32_t i = 0; i < ND; i++) {
		free(d[i].hist);
		free(d[i].big);
		free(want[i]);
	}
	report_free(s);
}

/*
 * name_of()'s names, spelt by hand, against snprintf() into the same 4 * NAME_LEN bytes (as
 * it spelt them): offsets of every width, names and objects past the buffer (cut there).
 */
Test(report_agg, names_spelt_as_snprintf_spelt_them)
{
	struct report_config rc = { .view = REPORT_FUNCTIONS };
	struct rstate *s = calloc(1, sizeof(*s));
	static char name[6000], obj[6000], want[4 * NAME_LEN];

	cr_assert(s);
	s->rc = &rc;
	for (int k = 0; k < 3000; k++) {
		size_t nn = k % 100 == 3 ? 4000 + rnd() % 1500 : rnd() % 40;
		size_t no = k % 100 == 5 ? 4000 + rnd() % 1500 : rnd() % 20;
		unsigned how = rnd() % 4;	/* 3: taken as N_UNKNOWN */
		uint64_t off = ((uint64_t)rnd() << 32 | rnd()) >> (rnd() % 64);
		uint32_t id;

		for (size_t i = 0; i < nn; i++)
			name[i] = (char)('!' + rnd() % 90);
		name[nn] = '\0';
		for (size_t i = 0; i < no; i++)
			obj[i] = (char)('!' + rnd() % 90);
		obj[no] = '\0';
		id = report_name(s, how, name, obj, off);
		if (how == N_SYM) {
			cr_assert_eq(id, nn ? id : NONE);
			cr_assert(!nn || !strcmp(s->str[id], name));
			continue;
		}
		if (how == N_SYMOFF && !nn) {
			cr_assert_eq(id, NONE);
			continue;
		}
/* (the cut is what is tested) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-truncation"
		if (how == N_SYMOFF)
			snprintf(want, sizeof(want), "%s+0x%" PRIx64, name, off);
		else if (!no)
			snprintf(want, sizeof(want), "[unknown]");
		else
			snprintf(want, sizeof(want), "[unknown] (%s+0x%" PRIx64 ")", obj, off);
#pragma GCC diagnostic pop
		cr_assert_neq(id, NONE);
		cr_assert_str_eq(s->str[id], want, "how %u, name %zu bytes, object %zu, off %" PRIx64,
				 how, nn, no, off);
	}
	cr_assert(!s->oom);
	report_free(s);
}
