// SPDX-License-Identifier: MIT
/*
 * ptcollect report's output (report_agg.h): the rows report_agg.c made, as a table (text
 * or JSON) or folded stacks.
 */
#include <fnmatch.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "printable.h"
#include "report_agg.h"

/* ---- output ---- */

static void outf(struct dout *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* outf()'s longest line: what is past it is cut */
#define OUTF_MAX 8192

static void outf(struct dout *o, const char *fmt, ...)
{
	char buf[OUTF_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		dout_write(o, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* @v in decimal, right-aligned in @w columns (printf's %*PRIu64, by hand): past its end. */
static char *put_dec(char *p, uint64_t v, int w)
{
	char d[20], *q = d + sizeof(d);
	int len;

	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	len = (int)(d + sizeof(d) - q);
	for (; w > len; w--)
		*p++ = ' ';
	memcpy(p, q, (size_t)len);
	return p + len;
}

/* @n bytes of @t, then blanks up to @w columns (printf's %-*s): past its end. */
static char *put_left(char *p, const char *t, size_t n, size_t w)
{
	memcpy(p, t, n);
	p += n;
	for (; w > n; w--)
		*p++ = ' ';
	return p;
}

static const unsigned quant[] = { 500, 900, 990 };

/* A row to show, with what sorts it (cmp_rows() reads no struct func where these decide). */
struct row {
	uint32_t func, group;
	uint64_t key, insns_self;
	uint64_t name;			/* name_key() */
	uint64_t q[3];
};

static const struct rstate *sort_state;
static size_t sort_lcp;			/* the prefix all the rows' names share */

/*
 * The 8 bytes of @name past the prefix all share, big-endian, NUL-padded: where two differ
 * they order the names as strcmp() would (and as it, byte by byte unsigned); where they are
 * equal, strcmp() tells, unless both names ended within them (then they are equal).
 */
static uint64_t name_key(const char *name, size_t lcp)
{
	uint64_t k = 0;
	size_t i = 0;

	for (name += lcp; i < 8 && name[i]; i++)
		k |= (uint64_t)(uint8_t)name[i] << (56 - 8 * i);
	return k;
}

static uint64_t sort_key(const struct rstate *s, const struct row *r)
{
	const struct func *f = &s->funcs[r->func];

	switch (s->rc->sort) {
	case REPORT_SORT_CALLS: return f->calls;
	case REPORT_SORT_SELF: return f->time_self;
	case REPORT_SORT_P99: return r->q[2];
	case REPORT_SORT_MAX: return f->d.n ? f->d.max : 0;
	case REPORT_SORT_INSNS: return f->insns_self;
	default: return f->time_total;
	}
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	const struct func *fx, *fy;
	int c;

	if (x->group != y->group)
		return strcmp(sort_state->str[x->group], sort_state->str[y->group]);
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	if (x->insns_self != y->insns_self)
		return x->insns_self > y->insns_self ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	fx = &sort_state->funcs[x->func];
	fy = &sort_state->funcs[y->func];
	/* (names that ended within their keys are equal: strcmp() says so at once) */
	c = strcmp(sym_text(sort_state, fx->name) + sort_lcp,
		   sym_text(sort_state, fy->name) + sort_lcp);
	return c ? c : strcmp(obj_text(sort_state, fx->name), obj_text(sort_state, fy->name));
}

static int cmp_out(const void *a, const void *b)
{
	const struct outlier *x = a, *y = b;

	return out_before(x, y) ? -1 : out_before(y, x);
}

/* The JSON's bytes written out at this much (the whole document was one string) */
#define JSON_FLUSH 65536

static void json_flush(struct dout *o, struct jsonw *w, size_t at_least)
{
	if (w->len >= at_least) {
		dout_write(o, w->buf, w->len);
		w->len = 0;
	}
}

/* The called column's bytes at most, with its NUL (the char[2048] it was printed into) */
#define CALLED_MAX 2048

/*
 * What an outlier called, into @buf (@n bytes): "f x2, g x1, 3 more", "-" for nothing; cut
 * to @n - 1 bytes where longer (what snprintf() into @buf made). Returns its length.
 */
static size_t called_text(const struct rstate *s, const struct outlier *x, char *buf, size_t n)
{
	char full[CALLEES * (4 * 128 + 16) + 32], *e = full;
	size_t len;

	for (int i = 0; i < CALLEES && x->ncalls[i]; i++) {
		if (i)
			e = put_left(e, ", ", 2, 2);
		e += printable_to(e, 4 * 128 + 1, sym_text(s, s->funcs[x->callee[i]].name));
		e = put_left(e, " x", 2, 2);
		e = put_dec(e, x->ncalls[i], 0);
	}
	if (x->more) {
		e = put_left(e, ", ", 2, 2);
		e = put_dec(e, x->more, 0);
		e = put_left(e, " more", 5, 5);
	}
	len = (size_t)(e - full) < n ? (size_t)(e - full) : n - 1;
	if (!len)
		return (size_t)(stpcpy(buf, "-") - buf);
	memcpy(buf, full, len);
	buf[len] = '\0';
	return len;
}

/*
 * Whether an outlier's start means anything: in instructions always; in time when its call
 * had a time and the trace's time moves (one timestamp, such as the TSC placeholder of an
 * unstamped played stream, times no call).
 */
static bool start_known(const struct rstate *s, const struct outlier *x)
{
	return !s->clock_time || (x->timed && s->time_moves);
}

static void outliers_json(struct jsonw *w, const struct rstate *s, const struct func *f)
{
	jsonw_open(w, '[');
	for (uint32_t k = 0; k < f->nout; k++) {
		const struct outlier *x = &f->out[k];

		jsonw_open(w, '{');
		jsonw_key(w, "duration");
		jsonw_u64s(w, x->dur);
		jsonw_key(w, "start");
		if (start_known(s, x))
			jsonw_u64s(w, x->start);
		else
			jsonw_raw(w, "null");
		jsonw_key(w, "pid");
		jsonw_i64(w, x->pid);
		jsonw_key(w, "tid");
		jsonw_i64(w, x->tid);
		jsonw_key(w, "called");
		jsonw_open(w, '[');
		for (int i = 0; i < CALLEES && x->ncalls[i]; i++) {
			jsonw_open(w, '{');
			jsonw_key(w, "function");
			jsonw_str(w, sym_text(s, s->funcs[x->callee[i]].name));
			jsonw_key(w, "object");
			jsonw_str(w, obj_text(s, s->funcs[x->callee[i]].name));
			jsonw_key(w, "calls");
			jsonw_i64(w, x->ncalls[i]);
			jsonw_close(w, '}');
		}
		jsonw_close(w, ']');
		jsonw_key(w, "called_other");
		jsonw_i64(w, x->more);
		jsonw_close(w, '}');
	}
	jsonw_close(w, ']');
}

static void functions(struct dout *o, struct rstate *s)
{
	const struct report_config *rc = s->rc;
	const char *unit = s->clock_time ? "ns" : "insns";
	struct row *rows = calloc(s->nfuncs + 1, sizeof(*rows));
	struct jsonw w;
	uint32_t n = 0, shown = 0, group = NONE, obj_id = 0;
	/* a row's text: eleven numbers, the object and the function */
	char name[4 * NAME_LEN + 1], obj[4 * NAME_LEN + 1], line[11 * 21 + 2 * 4 * NAME_LEN + 16];
	size_t olen = 0;
	bool exact = true, obj_known = false;

	if (!rows) {
		s->oom = true;
		return;
	}
	for (uint32_t i = 0; i < s->nfuncs; i++) {
		struct func *f = &s->funcs[i];

		if (!f->calls && !f->insns_self && !f->incomplete)
			continue;
		if (rc->active)
			++*rc->active;
		if (rc->function && fnmatch(rc->function, sym_text(s, f->name), 0))
			continue;
		if (rc->matched)
			++*rc->matched;
		rows[n].func = i;
		rows[n].group = f->group;
		rows[n].insns_self = f->insns_self;
		dist_quantiles(&f->d, quant, rows[n].q, 3);
		rows[n].key = sort_key(s, &rows[n]);
		exact = exact && !f->d.hist;
		n++;
	}
	sort_state = s;
	sort_lcp = n ? strlen(sym_text(s, s->funcs[rows[0].func].name)) : 0;
	for (uint32_t k = 1; k < n && sort_lcp; k++) {
		const char *a = sym_text(s, s->funcs[rows[0].func].name);
		const char *b = sym_text(s, s->funcs[rows[k].func].name);
		size_t i = 0;

		while (i < sort_lcp && a[i] == b[i])
			i++;
		sort_lcp = i;
	}
	for (uint32_t k = 0; k < n; k++)
		rows[k].name = name_key(sym_text(s, s->funcs[rows[k].func].name), sort_lcp);
	qsort(rows, n, sizeof(*rows), cmp_rows);
	/* the document as jansson's json_dumps(JSON_INDENT(1)) spelt it, written as it goes */
	jsonw_init(&w, 1);
	if (rc->json) {
		jsonw_open(&w, '{');
		jsonw_key(&w, "clock");
		jsonw_str(&w, s->clock_time ? "time" : "instructions");
		jsonw_key(&w, "unit");
		jsonw_str(&w, unit);
		jsonw_key(&w, "quantiles");
		jsonw_str(&w, exact ? "exact" : "histogram");
		jsonw_key(&w, "exact_max");
		jsonw_i64(&w, REPORT_EXACT_MAX);
		jsonw_key(&w, "instructions");
		jsonw_u64s(&w, s->insns);
		jsonw_key(&w, "calls");
		jsonw_u64s(&w, s->calls);
		jsonw_key(&w, "groups");
		jsonw_open(&w, '[');
	} else {
		outf(o, "# %" PRIu64 " instructions, %" PRIu64 " calls; durations in %s%s\n",
		     s->insns, s->calls, unit, !s->clock_time ? (s->rc->clock_insns ?
		     " (--clock insns)" : " (the trace has no timing: instructions stand in for time)") :
		     s->time_moves ? " of perf time" : " of perf time (the trace's time never moves: "
		     "every duration is 0 and no start is known; --clock insns tells calls apart)");
		outf(o, "# quantiles %s (exact up to %u calls per function, then within 3.2%%); "
		     "incomplete calls (cut by a trace gap) enter no duration\n",
		     exact ? "exact" : "from a histogram for some", REPORT_EXACT_MAX);
		if (rc->sum_count)
			outf(o, "# %" PRIu64 " calls summed in the workers, %" PRIu64
			     " address slots defined, %" PRIu64 " batches written again (%"
			     PRIu64 " checked not as summed)\n", s->summed, s->adefs,
			     rc->again ? __atomic_load_n(rc->again, __ATOMIC_RELAXED) : 0,
			     rc->again_bad ? __atomic_load_n(rc->again_bad, __ATOMIC_RELAXED) : 0);
		if (s->funcs_full)
			outf(o, "# more than %u functions: the rest are [other]\n", REPORT_FUNCS_MAX);
	}
	for (uint32_t k = 0; k < n; k++) {
		struct func *f = &s->funcs[rows[k].func];
		uint64_t mn, mx;
		size_t nlen;
		char *e;

		/* the rows are read in their sorted order: a miss each on many functions */
		if (k + 8 < n) {
			__builtin_prefetch(&s->funcs[rows[k + 8].func]);
			__builtin_prefetch((const char *)&s->funcs[rows[k + 8].func] + 64);
		}
		if (rows[k].group != group) {
			if (rc->json && group != NONE) {
				jsonw_close(&w, ']');
				jsonw_close(&w, '}');
			}
			group = rows[k].group;
			shown = 0;
			if (rc->json) {
				jsonw_open(&w, '{');
				jsonw_key(&w, "group");
				jsonw_str(&w, s->str[group]);
				jsonw_key(&w, "functions");
				jsonw_open(&w, '[');
			} else {
				if (s->str[group][0]) {
					printable_to(name, sizeof(name), s->str[group]);
					outf(o, "\n[%s]\n", name);
				}
				outf(o, "%10s %10s %12s %12s %12s %12s %10s %10s %10s %10s %10s  "
				     "%-16s  %s\n", "calls", "incomplete", "self-insns",
				     "total-insns", "self", "total", "min", "p50", "p90", "p99", "max",
				     "object", "function");
			}
		}
		if (rc->top && shown >= rc->top)
			continue;
		shown++;
		mn = f->d.n ? f->d.min : 0;
		mx = f->d.n ? f->d.max : 0;
		if (rc->json) {
			static const char *const qname[3] = { "p50", "p90", "p99" };

			jsonw_open(&w, '{');
			jsonw_key(&w, "function");
			jsonw_str(&w, sym_text(s, f->name));
			jsonw_key(&w, "object");
			jsonw_str(&w, obj_text(s, f->name));
			jsonw_key(&w, "calls");
			jsonw_u64s(&w, f->calls);
			jsonw_key(&w, "incomplete");
			jsonw_u64s(&w, f->incomplete);
			jsonw_key(&w, "insns_self");
			jsonw_u64s(&w, f->insns_self);
			jsonw_key(&w, "insns_total");
			jsonw_u64s(&w, f->insns_total);
			jsonw_key(&w, "self");
			jsonw_u64s(&w, f->time_self);
			jsonw_key(&w, "total");
			jsonw_u64s(&w, f->time_total);
			jsonw_key(&w, "min");
			jsonw_u64s(&w, mn);
			for (int i = 0; i < 3; i++) {
				jsonw_key(&w, qname[i]);
				jsonw_u64s(&w, rows[k].q[i]);
			}
			jsonw_key(&w, "max");
			jsonw_u64s(&w, mx);
			jsonw_key(&w, "exact");
			jsonw_raw(&w, f->d.hist ? "false" : "true");
			if (rc->outliers) {
				if (f->nout)
					qsort(f->out, f->nout, sizeof(*f->out), cmp_out);
				jsonw_key(&w, "outliers");
				outliers_json(&w, s, f);
			}
			jsonw_close(&w, '}');
			json_flush(o, &w, JSON_FLUSH);
			continue;
		}
		/* outf()'s line, by hand (the same bytes, cut where its buffer cuts it) */
		nlen = printable_to(name, sizeof(name), sym_text(s, f->name));
		if (!obj_known || s->sym_obj[f->name] != obj_id) {
			obj_known = true;
			obj_id = s->sym_obj[f->name];
			olen = printable_to(obj, sizeof(obj), obj_text(s, f->name));
			if (!olen)
				olen = (size_t)(stpcpy(obj, "-") - obj);
		}
		e = line;
		e = put_dec(e, f->calls, 10);
		*e++ = ' ';
		e = put_dec(e, f->incomplete, 10);
		*e++ = ' ';
		e = put_dec(e, f->insns_self, 12);
		*e++ = ' ';
		e = put_dec(e, f->insns_total, 12);
		*e++ = ' ';
		e = put_dec(e, f->time_self, 12);
		*e++ = ' ';
		e = put_dec(e, f->time_total, 12);
		*e++ = ' ';
		e = put_dec(e, mn, 10);
		for (int i = 0; i < 3; i++) {
			*e++ = ' ';
			e = put_dec(e, rows[k].q[i], 10);
		}
		*e++ = ' ';
		e = put_dec(e, mx, 10);
		e = put_left(e, "  ", 2, 2);
		e = put_left(e, obj, olen, 16);
		e = put_left(e, "  ", 2, 2);
		e = put_left(e, name, nlen, 0);
		if (f->d.hist)
			e = put_left(e, " ~", 2, 2);
		*e++ = '\n';
		dout_write(o, line, (size_t)(e - line) < OUTF_MAX ? (size_t)(e - line) :
			   OUTF_MAX - 1);
	}
	if (rc->json) {
		if (group != NONE) {
			jsonw_close(&w, ']');
			jsonw_close(&w, '}');
		}
		jsonw_close(&w, ']');
		jsonw_close(&w, '}');
		jsonw_raw(&w, "\n");
		s->oom = s->oom || w.oom;
		json_flush(o, &w, 0);
	} else if (rc->outliers) {
		char head[128], *e;
		size_t hlen;

		hlen = (size_t)snprintf(head, sizeof(head), "%12s %20s %16s  %s\n", "duration",
					s->clock_time ? "start (ns)" : "start (insn)", "pid/tid",
					"called");
		group = NONE;
		for (uint32_t k = 0, shown2 = 0; k < n; k++) {
			struct func *f = &s->funcs[rows[k].func];

			if (k + 8 < n)
				__builtin_prefetch(&s->funcs[rows[k + 8].func]);
			if (rows[k].group != group) {
				group = rows[k].group;
				shown2 = 0;
			}
			if ((rc->top && shown2++ >= rc->top) || !f->nout)
				continue;
			if (f->nout)
				qsort(f->out, f->nout, sizeof(*f->out), cmp_out);
			e = put_left(line, "\nslowest calls of ", 18, 18);
			e = put_left(e, name, printable_to(name, sizeof(name), sym_text(s, f->name)), 0);
			e = put_left(e, ":\n", 2, 2);
			e = put_left(e, head, hlen, 0);
			dout_write(o, line, (size_t)(e - line) < OUTF_MAX ? (size_t)(e - line) :
				   OUTF_MAX - 1);
			for (uint32_t i = 0; i < f->nout; i++) {
				const struct outlier *x = &f->out[i];
				char thr[24], *t = thr;
				size_t clen;

				t = put_dec(t, x->pid, 0);
				*t++ = '/';
				t = put_dec(t, x->tid, 0);
				e = put_dec(line, x->dur, 12);
				*e++ = ' ';
				if (start_known(s, x))
					e = put_dec(e, x->start, 20);
				else
					e = put_left(put_left(e, "", 0, 19), "-", 1, 1);
				*e++ = ' ';
				e = put_left(put_left(e, "", 0, t - thr < 16 ? 16 - (size_t)(t - thr) :
						      0), thr, (size_t)(t - thr), 0);
				e = put_left(e, "  ", 2, 2);
				clen = called_text(s, x, e, CALLED_MAX);
				e += clen;
				*e++ = '\n';
				dout_write(o, line, (size_t)(e - line));
			}
		}
	}
	jsonw_free(&w);
	free(rows);
}

/* Names in a folded stack: printable, and no ';' (the separator). */
static void folded_name(char *buf, size_t n, const char *s)
{
	printable_to(buf, n, s);
	for (char *p = buf; *p; p++)
		if (*p == ';')
			*p = ':';
}

/*
 * A function's frame in a folded stack, spelt once (object`function, as DTrace's stacks and
 * stackcollapse spell it): its text in one arena, by sym.
 */
struct spelt {
	char *text;
	size_t len, cap;
	size_t *off;			/* by sym; SIZE_MAX: not spelt yet */
	uint32_t *n;
};

static bool spell_frame(struct spelt *sp, const struct rstate *s, uint32_t y)
{
	char name[4 * NAME_LEN + 1];
	size_t need = 2 * sizeof(name) + 1, start = sp->len;

	if (sp->len + need > sp->cap) {
		size_t cap = sp->cap ? 2 * sp->cap : 1 << 16;
		char *t;

		while (cap < sp->len + need)
			cap *= 2;
		t = realloc(sp->text, cap);
		if (!t)
			return false;
		sp->text = t;
		sp->cap = cap;
	}
	if (s->sym_obj[y] != NONE) {
		folded_name(name, sizeof(name), obj_text(s, y));
		sp->len = (size_t)(stpcpy(sp->text + sp->len, name) - sp->text);
		sp->text[sp->len++] = '`';
	}
	folded_name(name, sizeof(name), sym_text(s, y));
	sp->len = (size_t)(stpcpy(sp->text + sp->len, name) - sp->text);
	sp->off[y] = start;
	sp->n[y] = (uint32_t)(sp->len - start);
	return true;
}

/*
 * Each node with a weight, its stack from the root: a line. Frames are spelt once
 * (spell_frame()), and a line starts from the one before it as far as their stacks share
 * nodes (depth[]: a node's parent is made before it, so one pass tells every depth): the
 * walk's --weight insns is 584,000 lines of some 200 frames each.
 */
static void folded(struct dout *o, struct rstate *s)
{
	uint32_t path[REPORT_DEPTH_MAX + 2], prev[REPORT_DEPTH_MAX + 2];
	size_t ends[REPORT_DEPTH_MAX + 2], cap = 1 << 16;
	struct spelt sp = { 0 };
	uint32_t *depth = malloc(((size_t)s->nnodes + 1) * sizeof(*depth));
	char *line = malloc(cap);
	int prev_d = -1;

	sp.off = malloc(((size_t)s->nsyms + 1) * sizeof(*sp.off));
	sp.n = malloc(((size_t)s->nsyms + 1) * sizeof(*sp.n));
	if (!depth || !line || !sp.off || !sp.n) {
		s->oom = true;
		goto out;
	}
	for (uint32_t y = 0; y < s->nsyms; y++)
		sp.off[y] = SIZE_MAX;
	for (uint32_t i = 0; i < s->nnodes; i++) {
		uint32_t p = s->nodes[i].parent;

		depth[i] = p == NONE ? 0 : p < i && depth[p] != NONE ? depth[p] + 1 : NONE;
	}
	for (uint32_t i = 0; i < s->nnodes; i++) {
		uint64_t w = s->rc->weight_insns ? s->nodes[i].insns : s->nodes[i].time;
		uint32_t d = 0, k = i;
		size_t len = 0;
		bool chain = depth[i] != NONE && depth[i] < REPORT_DEPTH_MAX + 2, first = true;

		if (!w)
			continue;
		if (!chain) {
			/* the nearest REPORT_DEPTH_MAX + 2 frames, no line to start from */
			for (; k != NONE && d < REPORT_DEPTH_MAX + 2; k = s->nodes[k].parent)
				path[d++] = k;
			prev_d = -1;
		} else {
			/* up to the first node the line before has at its depth */
			for (; k != NONE && !((int)depth[k] <= prev_d && prev[depth[k]] == k);
			     k = s->nodes[k].parent)
				path[d++] = k;
			len = k == NONE ? 0 : ends[depth[k]];
			first = k == NONE;
		}
		while (d--) {
			uint32_t y = s->nodes[path[d]].name;

			if (sp.off[y] == SIZE_MAX && !spell_frame(&sp, s, y)) {
				s->oom = true;
				goto out;
			}
			if (len + sp.n[y] + 32 > cap) {
				char *l;

				while (len + sp.n[y] + 32 > cap)
					cap *= 2;
				l = realloc(line, cap);
				if (!l) {
					s->oom = true;
					goto out;
				}
				line = l;
			}
			if (!first)
				line[len++] = ';';
			first = false;
			memcpy(line + len, sp.text + sp.off[y], sp.n[y]);
			len += sp.n[y];
			if (chain) {
				prev[depth[path[d]]] = path[d];
				ends[depth[path[d]]] = len;
			}
		}
		if (chain)
			prev_d = (int)depth[i];
		line[len] = ' ';
		len = (size_t)(put_dec(line + len + 1, w, 0) - line);
		line[len++] = '\n';
		dout_write(o, line, len);
	}
out:
	free(sp.text);
	free(sp.off);
	free(sp.n);
	free(line);
	free(depth);
}

void report_finish(struct dout *o)
{
	struct report_state *rs = o->state;
	struct rstate *s = rs->s;

	if (!s)
		return;
	streams_end(s);
	if (s->rc->view == REPORT_FOLDED)
		folded(o, s);
	else
		functions(o, s);
	if (s->oom)
		o->err = o->err ? o->err : -12;
	report_free(s);
	rs->s = NULL;
}
