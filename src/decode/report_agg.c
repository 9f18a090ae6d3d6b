// SPDX-License-Identifier: MIT
/*
 * ptcollect report, at the merge (report_agg.h): the chunks' records (render_report.c), in
 * stream order, make call stacks per thread and one row per function; report_out.c prints
 * the rows.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "memimage.h"
#include "report_agg.h"


static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	return k ^ (k >> 33);
}

static uint32_t map_get(const struct map *m, uint64_t key)
{
	if (!m->cap)
		return NONE;
	for (size_t i = hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].val == NONE)
			return NONE;
		if (m->slots[i].key == key)
			return m->slots[i].val;
	}
}

static bool map_set(struct map *m, uint64_t key, uint32_t val)
{
	if (2 * (m->n + 1) > m->cap) {
		struct map n = { .cap = m->cap ? 2 * m->cap : 1024 };

		n.slots = malloc(n.cap * sizeof(*n.slots));
		if (!n.slots)
			return false;
		for (size_t i = 0; i < n.cap; i++)
			n.slots[i].val = NONE;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].val != NONE)
				map_set(&n, m->slots[i].key, m->slots[i].val);
		free(m->slots);
		*m = n;
	}
	for (size_t i = hash64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].val == NONE) {
			m->slots[i].key = key;
			m->slots[i].val = val;
			m->n++;
			return true;
		}
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return true;
		}
	}
}

static void map_free(struct map *m)
{
	free(m->slots);
}

/* Room for @need elements of @size bytes at *@p, doubling from GROW_FIRST. */
#define GROW_FIRST 4

static bool grow(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t n;
	void *q;

	if (need <= *cap)
		return true;
	n = *cap ? 2 * *cap : GROW_FIRST;
	while (n < need)
		n *= 2;
	q = realloc(*p, (size_t)n * size);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	return h;
}

/* A copy of @p (@n bytes and a NUL) in the string blocks; NULL when out of memory. */
static char *str_copy(struct rstate *s, const char *p, size_t n)
{
	char *c;

	if (n + 1 > s->strblk_left) {
		size_t size = n + 1 > STRBLK_SIZE ? n + 1 : STRBLK_SIZE;
		struct strblk *b = malloc(sizeof(*b) + size);

		if (!b)
			return NULL;
		b->next = s->strblk;
		s->strblk = b;
		s->strblk_at = b->text;
		s->strblk_left = size;
	}
	c = s->strblk_at;
	memcpy(c, p, n);
	c[n] = '\0';
	s->strblk_at += n + 1;
	s->strblk_left -= n + 1;
	return c;
}

/* strtab twice as large (1,024 slots at first), its strings where their hashes go. */
static bool strtab_grow(struct rstate *s)
{
	uint32_t cap = s->capstrtab ? 2 * s->capstrtab : 1024;
	struct pair *q = malloc(cap * sizeof(*q));

	if (!q)
		return false;
	for (uint32_t i = 0; i < cap; i++)
		q[i].val = NONE;
	for (uint32_t k = 0; k < s->capstrtab; k++) {
		uint32_t i = s->strtab[k].key & (cap - 1);

		if (s->strtab[k].val == NONE)
			continue;
		while (q[i].val != NONE)
			i = (i + 1) & (cap - 1);
		q[i] = s->strtab[k];
	}
	free(s->strtab);
	s->strtab = q;
	s->capstrtab = cap;
	return true;
}

/* The id of a string (@n bytes), NONE when out of memory. */
static uint32_t intern(struct rstate *s, const char *p, size_t n)
{
	uint32_t h = (uint32_t)(hash64(str_hash(p, n)) >> 32), i;

	if (2 * (s->nstr + 1) > s->capstrtab && !strtab_grow(s))
		goto oom;
	for (i = h & (s->capstrtab - 1); s->strtab[i].val != NONE; i = (i + 1) & (s->capstrtab - 1)) {
		const char *t = s->str[s->strtab[i].val];

		if (s->strtab[i].key == h && !strncmp(t, p, n) && !t[n])
			return s->strtab[i].val;
	}
	if (s->nstr + 1 > s->capstr) {
		uint32_t cap = s->capstr;
		struct pair *ss;

		if (!grow((void **)&s->str, &cap, s->nstr + 1, sizeof(*s->str)))
			goto oom;
		ss = realloc(s->str_sym, cap * sizeof(*ss));
		if (!ss)
			goto oom;
		s->str_sym = ss;
		s->capstr = cap;
	}
	s->str[s->nstr] = str_copy(s, p, n);
	if (!s->str[s->nstr])
		goto oom;
	s->strtab[i] = (struct pair){ h, s->nstr };
	s->str_sym[s->nstr] = (struct pair){ NOBJ, NONE };
	return s->nstr++;
oom:
	s->oom = true;
	return NONE;
}

static uint32_t intern_str(struct rstate *s, const char *p)
{
	return intern(s, p, strlen(p));
}

/* The function @name (a string) in @obj (a string, NONE: none); NONE when out of memory. */
static uint32_t sym_get(struct rstate *s, uint32_t name, uint32_t obj)
{
	uint64_t key = (uint64_t)name << 32 | obj;
	uint32_t id, cap = s->capsyms;
	struct pair *first;

	if (name == NONE)
		return NONE;
	first = &s->str_sym[name];
	if (first->key == obj)
		return first->val;
	if (first->key != NOBJ && (id = map_get(&s->symmap, key)) != NONE)
		return id;
	if (s->nsyms + 1 > cap) {
		struct pair *r;

		if (!grow((void **)&s->sym_name, &cap, s->nsyms + 1, sizeof(*s->sym_name)))
			goto oom;
		cap = s->capsyms;
		if (!grow((void **)&s->sym_obj, &cap, s->nsyms + 1, sizeof(*s->sym_obj)))
			goto oom;
		r = realloc(s->sym_row, cap * sizeof(*r));
		if (!r)
			goto oom;
		s->sym_row = r;
		s->capsyms = cap;
	}
	if (first->key == NOBJ)
		*first = (struct pair){ obj, s->nsyms };
	else if (!map_set(&s->symmap, key, s->nsyms))
		goto oom;
	s->sym_name[s->nsyms] = name;
	s->sym_obj[s->nsyms] = obj;
	s->sym_row[s->nsyms] = (struct pair){ NONE, NONE };
	return s->nsyms++;
oom:
	s->oom = true;
	return NONE;
}

/* A function named @p (a C string) without an object: "[interrupt]", a thread's label. */
static uint32_t sym_str(struct rstate *s, const char *p)
{
	return sym_get(s, intern_str(s, p), NONE);
}

/*
 * Room for one more row. From FUNCS_MAPPED rows, a mapping of its own grown by mremap()
 * (page aligned, as struct func wants): realloc() would copy the rows at each doubling, into
 * pages faulted in anew (on the walk's 21,000 rows, 2.7 MB written twice, some 1,000 page
 * faults). Below, aligned_alloc() and a copy as before: with the rows in a mapping from the
 * first, the loop's report --folded (a few rows) took 1.8 % more CPU (15 pairs).
 */
#define FUNCS_MAPPED 1024

static bool funcs_grow(struct rstate *s)
{
	uint32_t n = s->capfuncs ? 2 * s->capfuncs : 64;
	size_t size = (size_t)n * sizeof(*s->funcs);
	struct fstack *o;
	void *q;

	if (s->nfuncs < s->capfuncs)
		return true;
	o = realloc(s->fstack, (size_t)n * sizeof(*o));
	if (!o)
		return false;
	s->fstack = o;
	if (n < FUNCS_MAPPED) {
		q = aligned_alloc(_Alignof(struct func), size);
	} else if (s->capfuncs >= FUNCS_MAPPED) {
		q = mremap(s->funcs, (size_t)s->capfuncs * sizeof(*s->funcs), size,
			   MREMAP_MAYMOVE);
		q = q == MAP_FAILED ? NULL : q;
	} else {
		q = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		q = q == MAP_FAILED ? NULL : q;
	}
	if (!q)
		return false;
	if (s->capfuncs < FUNCS_MAPPED) {
		if (s->nfuncs)
			memcpy(q, s->funcs, (size_t)s->nfuncs * sizeof(*s->funcs));
		free(s->funcs);
	}
	s->funcs = q;
	s->capfuncs = n;
	return true;
}

/* The row of @name (a sym) in @group, else NONE (sym_row, funcmap). */
static uint32_t row_find(const struct rstate *s, uint32_t group, uint32_t name)
{
	const struct pair *first = &s->sym_row[name];

	if (first->key == group)
		return first->val;
	if (first->key == NONE)
		return NONE;
	return map_get(&s->funcmap, (uint64_t)group << 32 | name);
}

/* The row of @name in @group; rows past REPORT_FUNCS_MAX go to "[other]". */
static uint32_t func_get(struct rstate *s, uint32_t group, uint32_t name)
{
	uint32_t id;
	struct func *f;

	if (name == NONE || group == NONE)
		return NONE;
	id = row_find(s, group, name);
	if (id != NONE)
		return id;
	if (s->nfuncs >= REPORT_FUNCS_MAX) {
		s->funcs_full = true;
		name = sym_str(s, "[other]");
		if (name == NONE)
			return NONE;
		id = row_find(s, group, name);
		if (id != NONE || s->nfuncs >= REPORT_FUNCS_MAX + 256)
			return id;
	}
	if (!funcs_grow(s))
		goto oom;
	if (s->sym_row[name].key == NONE)
		s->sym_row[name] = (struct pair){ group, s->nfuncs };
	else if (!map_set(&s->funcmap, (uint64_t)group << 32 | name, s->nfuncs))
		goto oom;
	f = &s->funcs[s->nfuncs];
	memset(f, 0, sizeof(*f));
	f->name = name;
	f->group = group;
	f->d.min = UINT64_MAX;
	s->fstack[s->nfuncs] = (struct fstack){ .open = 0, .thr = NONE };
	return s->nfuncs++;
oom:
	s->oom = true;
	return NONE;
}

uint32_t report_sym(struct rstate *s, const char *name, const char *obj)
{
	return sym_get(s, intern_str(s, name), *obj ? intern_str(s, obj) : NONE);
}

uint32_t report_row(struct rstate *s, const char *group, uint32_t sym)
{
	return func_get(s, intern_str(s, group), sym);
}

static uint32_t node_get(struct rstate *s, uint32_t parent, uint32_t name)
{
	uint64_t key = (uint64_t)parent << 32 | name;
	uint32_t id = map_get(&s->nodemap, key);

	if (id != NONE)
		return id;
	if (s->nnodes >= REPORT_NODES_MAX || name == NONE)
		return parent;
	if (!grow((void **)&s->nodes, &s->capnodes, s->nnodes + 1, sizeof(*s->nodes)) ||
	    !map_set(&s->nodemap, key, s->nnodes)) {
		s->oom = true;
		return parent;
	}
	s->nodes[s->nnodes] = (struct node){ .parent = parent, .name = name };
	return s->nnodes++;
}

/* ---- durations ---- */

static size_t bucket(uint64_t v)
{
	int e;

	if (v < 2 * REPORT_HIST_SUB)
		return (size_t)v;
	e = 63 - __builtin_clzll(v);	/* >= 6 */
	return 2 * REPORT_HIST_SUB + (size_t)(e - 6) * REPORT_HIST_SUB +
	       ((v >> (e - 5)) & (REPORT_HIST_SUB - 1));
}

#define BUCKETS (2 * REPORT_HIST_SUB + 58 * REPORT_HIST_SUB)

/* The middle of bucket @b. */
static uint64_t bucket_value(size_t b)
{
	size_t e, sub;
	uint64_t lo;

	if (b < 2 * REPORT_HIST_SUB)
		return b;
	e = (b - 2 * REPORT_HIST_SUB) / REPORT_HIST_SUB + 6;
	sub = (b - 2 * REPORT_HIST_SUB) % REPORT_HIST_SUB;
	lo = (1ull << e) | ((uint64_t)sub << (e - 5));
	return lo + (1ull << (e - 6));
}

/* the pool's sizes, doubled from EXACT_FIRST, reach REPORT_EXACT_MAX and no further:
 * dist_add() appends while below its capacity */
_Static_assert(EXACT_FIRST << (EXACT_CLASSES - 1) == REPORT_EXACT_MAX &&
	       REPORT_EXACT_MAX <= XBLK_VALUES, "EXACT_CLASSES: 4 ... REPORT_EXACT_MAX");

static unsigned exact_class(uint32_t cap)
{
	return (unsigned)__builtin_ctz(cap / EXACT_FIRST);
}

/* @p (@cap values) back to the pool: its first bytes link it into its class's free list. */
static void exact_put(struct rstate *s, uint32_t *p, uint32_t cap)
{
	unsigned k = exact_class(cap);

	memcpy(p, &s->xfree[k], sizeof(s->xfree[k]));
	s->xfree[k] = p;
}

/* An array of @cap values (a pool size), NULL when out of memory. */
static uint32_t *exact_get(struct rstate *s, uint32_t cap)
{
	unsigned k = exact_class(cap);
	uint32_t *p = s->xfree[k];

	if (p) {
		memcpy(&s->xfree[k], p, sizeof(s->xfree[k]));
		return p;
	}
	if (!s->xblk || s->xblk_used + cap > XBLK_VALUES) {
		struct xblk *b = malloc(sizeof(*b));

		if (!b)
			return NULL;
		/* the old block's rest to the lists, largest sizes first (all are powers of 2) */
		while (s->xblk && XBLK_VALUES - s->xblk_used >= EXACT_FIRST) {
			uint32_t left = XBLK_VALUES - s->xblk_used, c = EXACT_FIRST;

			while (2 * c <= left && 2 * c <= REPORT_EXACT_MAX)
				c *= 2;
			exact_put(s, &s->xblk->v[s->xblk_used], c);
			s->xblk_used += c;
		}
		b->next = s->xblk;
		s->xblk = b;
		s->xblk_used = 0;
	}
	p = &s->xblk->v[s->xblk_used];
	s->xblk_used += cap;
	return p;
}

/* @v (EXACT_BIG or more) to @d's big (false: out of memory). */
static bool big_add(struct rstate *s, struct dist *d, uint64_t v)
{
	uint64_t n = d->big ? d->big[0] : 0;

	/* (room for 2^k - 1 values after the count: grown at each power of 2) */
	if (!((n + 1) & n)) {
		uint64_t *b = realloc(d->big, 2 * (n + 1) * sizeof(*b));

		if (!b)
			return false;
		s->nbig += !d->big;
		d->big = b;
	}
	d->big[++n] = v;
	d->big[0] = n;
	return true;
}

/* dist_add() before its histogram: the exact durations, then the histogram they go into. */
static void dist_add_slow(struct rstate *s, struct dist *d, uint64_t v)
{
	if (d->nexact < REPORT_EXACT_MAX) {
		if (d->nexact == d->cap) {
			uint32_t cap = d->cap ? 2 * d->cap : EXACT_FIRST;
			uint32_t *q = exact_get(s, cap);

			if (!q) {
				s->oom = true;
				return;
			}
			if (d->exact) {
				memcpy(q, d->exact, d->nexact * sizeof(*q));
				exact_put(s, d->exact, d->cap);
			}
			d->exact = q;
			d->cap = cap;
		}
		if (v >= EXACT_BIG && !big_add(s, d, v)) {
			s->oom = true;
			return;
		}
		d->exact[d->nexact++] = v < EXACT_BIG ? (uint32_t)v : EXACT_BIG;
		return;
	}
	d->hist = calloc(BUCKETS, sizeof(*d->hist));
	if (!d->hist) {
		s->oom = true;
		return;
	}
	s->nhist++;
	for (uint32_t i = 0; i < d->nexact; i++)
		if (d->exact[i] != EXACT_BIG)
			d->hist[bucket(d->exact[i])]++;
	for (uint64_t i = 1; d->big && i <= d->big[0]; i++)
		d->hist[bucket(d->big[i])]++;
	s->nbig -= !!d->big;
	free(d->big);
	d->big = NULL;
	exact_put(s, d->exact, d->cap);
	d->exact = NULL;
	d->nexact = d->cap = 0;
	d->hist[bucket(v)]++;
}

static inline void dist_add(struct rstate *s, struct dist *d, uint64_t v)
{
	d->n++;
	d->min = v < d->min ? v : d->min;
	d->max = v > d->max ? v : d->max;
	if (d->hist)
		d->hist[bucket(v)]++;
	else if (d->nexact < d->cap && v < EXACT_BIG)	/* (cap: see dist_add_slow()) */
		d->exact[d->nexact++] = (uint32_t)v;
	else
		dist_add_slow(s, d, v);
}

void report_dist_add(struct rstate *s, struct dist *d, uint64_t v)
{
	dist_add(s, d, v);
}

/* @c durations of @v (a T_SUM's run). */
static void dist_add_n(struct rstate *s, struct dist *d, uint64_t v, uint64_t c)
{
	if (d->hist) {
		d->n += c;
		d->min = v < d->min ? v : d->min;
		d->max = v > d->max ? v : d->max;
		d->hist[bucket(v)] += c;
		return;
	}
	while (c--)
		dist_add(s, d, v);
}

static inline void swap_u32(uint32_t *a, uint32_t *b)
{
	uint32_t t = *a;

	*a = *b;
	*b = t;
}

/*
 * Reorders @a[0..@n) so that @a[@k] is the value a sort would put there, none before it
 * larger and none after it smaller (a selection: quickselect, the median of three as pivot).
 */
static void select_u32(uint32_t *a, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (hi - lo >= 16) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		uint32_t pivot;

		if (a[mid] < a[lo])
			swap_u32(&a[mid], &a[lo]);
		if (a[hi] < a[lo])
			swap_u32(&a[hi], &a[lo]);
		if (a[hi] < a[mid])
			swap_u32(&a[hi], &a[mid]);
		pivot = a[mid];
		/* Hoare's: runs of equal values split in the middle */
		for (;;) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i >= j)
				break;
			swap_u32(&a[i++], &a[j--]);
		}
		/* [lo, j] <= pivot <= [j + 1, hi] */
		if (k <= j)
			hi = j;
		else
			lo = j + 1;
	}
	for (size_t i = lo + 1; i <= hi; i++) {
		uint32_t v = a[i];
		size_t j = i;

		for (; j > lo && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Quantiles @q (per mille, ascending) into @v: nearest rank; exact, or a bucket's middle in
 * [min, max].
 */
void dist_quantiles(struct dist *d, const unsigned *q, uint64_t *v, size_t nq)
{
	uint64_t rank[8], seen = 0, hi;
	size_t b = 0;

	for (size_t i = 0; i < nq; i++) {
		rank[i] = d->n ? (d->n * q[i] + 999) / 1000 : 0;
		rank[i] = rank[i] ? rank[i] - 1 : 0;
		v[i] = 0;
	}
	if (!d->n)
		return;
	if (!d->hist) {
		/*
		 * The big ones (EXACT_BIG in exact[]) rank above all the others: a rank among
		 * them is read from big, sorted. The highest rank first: the lower ones are
		 * then among the values below it.
		 */
		uint64_t nb = d->big ? d->big[0] : 0, small = d->nexact - nb;

		if (nb)
			qsort(d->big + 1, nb, sizeof(*d->big), cmp_u64);
		hi = d->nexact;
		for (size_t i = nq; i-- > 0;) {
			if (rank[i] >= d->nexact)	/* out of memory on the way */
				continue;
			if (rank[i] >= small) {
				v[i] = d->big[1 + rank[i] - small];
				continue;
			}
			if (rank[i] < hi) {
				select_u32(d->exact, hi, rank[i]);
				hi = rank[i];
			}
			v[i] = d->exact[rank[i]];
		}
		return;
	}
	/* one walk of the buckets for all @q */
	for (size_t i = 0; i < nq; i++) {
		for (; b < BUCKETS; b++) {
			if (seen + d->hist[b] > rank[i]) {
				v[i] = bucket_value(b);
				break;
			}
			seen += d->hist[b];
		}
		v[i] = v[i] < d->min ? d->min : v[i] > d->max ? d->max : v[i];
	}
}

/* ---- outliers ---- */

/* A min-heap by out_before(): its root is the call that goes first when a better comes. */
static void heap_down(struct outlier *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		struct outlier t;

		if (l < n && out_before(&h[m], &h[l]))
			m = l;
		if (r < n && out_before(&h[m], &h[r]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void outlier_add(struct rstate *s, struct func *f, const struct frame *fr,
			const struct thr *t, uint64_t dur)
{
	uint64_t n = s->rc->outliers;
	struct outlier o;

	if (!n)
		return;
	o.dur = dur;
	o.start = fr->start;
	o.seq = fr->seq;
	if (f->nout == n && !out_before(&o, &f->out[0]))
		return;
	if (!f->out && !(f->out = calloc(n, sizeof(*f->out)))) {
		s->oom = true;
		return;
	}
	o.timed = fr->timed;
	o.pid = t->pid;
	o.tid = t->tid;
	memcpy(o.callee, fr->callee, sizeof(o.callee));
	memcpy(o.ncalls, fr->ncalls, sizeof(o.ncalls));
	o.more = fr->more;
	if (f->nout < n) {
		uint32_t i = f->nout++;

		f->out[i] = o;
		/* up */
		while (i && out_before(&f->out[(i - 1) / 2], &f->out[i])) {
			struct outlier tmp = f->out[i];

			f->out[i] = f->out[(i - 1) / 2];
			f->out[(i - 1) / 2] = tmp;
			i = (i - 1) / 2;
		}
		return;
	}
	f->out[0] = o;
	heap_down(f->out, f->nout, 0);
}

/* ---- stacks ---- */

static uint64_t now(const struct rstate *s, const struct thr *t)
{
	return s->clock_time ? t->last_time : t->insns;
}

static uint64_t paused_now(const struct rstate *s, const struct thr *t)
{
	return s->clock_time ? t->paused_total : t->intr_insns;
}

/* @f leaves @t's stack. */
static void frame_gone(struct rstate *s, const struct frame *f)
{
	if (f->func != NONE && !--s->fstack[f->func].open)
		s->fstack[f->func].thr = NONE;
}

static void cut_frame(struct rstate *s, struct thr *t)
{
	struct frame *f = &t->st[--t->depth];

	frame_gone(s, f);
	if (f->func != NONE)
		s->funcs[f->func].insns_self += f->insns_self;

	if (f->ret == UINT64_MAX) {
		t->intr--;
		return;
	}
	if (f->func != NONE) {
		s->funcs[f->func].calls++;
		s->funcs[f->func].incomplete++;
	}
}

/* Trace is missing: every open call of @t is incomplete, what runs next is not known. */
static void cut_all(struct rstate *s, struct thr *t)
{
	if (t->depth || t->over)
		s->cut++;
	while (t->depth)
		cut_frame(s, t);
	t->over = 0;
	t->intr = 0;
	if (t->pending) {
		uint32_t u = func_get(s, t->group, s->unknown);

		if (u != NONE)
			s->funcs[u].insns_self += t->pending;
		t->pending = 0;
	}
	t->base = NONE;
	t->paused = false;
}

/* What @e adds to its row, added now. */
static inline void rlog_apply(struct rstate *s, const struct rlog *e)
{
	struct func *fn = &s->funcs[e->func];

	fn->calls += e->flags & RLOG_CALL;
	fn->insns_self += e->insns;
	if (e->flags & RLOG_OUTER) {
		fn->insns_total += e->total;
		fn->time_total += e->dur;
	}
	fn->time_self += e->self;
	if (e->flags & RLOG_DIST)
		dist_add(s, &fn->d, e->dur);
}

/*
 * @e added to its row ROW_LOG entries later (or by rlog_now()), the row's two lines
 * fetched meanwhile: on many functions each is a miss, and the call or return that adds
 * waits for neither.
 */
static inline __attribute__((always_inline)) void rlog_put(struct rstate *s,
							    const struct rlog *e)
{
	struct rlog *q = &s->rlog[s->nrlog++ % ROW_LOG];

	if (s->nrlog > ROW_LOG)
		rlog_apply(s, q);
	/* (field by field: a copy of the whole from the caller's stack waited on the store
	 * of its narrow fields, measured) */
	q->insns = e->insns;
	q->total = e->total;
	q->dur = e->dur;
	q->self = e->self;
	q->func = e->func;
	q->flags = e->flags;
	__builtin_prefetch(&s->funcs[e->func], 1);
	__builtin_prefetch((const char *)&s->funcs[e->func] + 64, 1);
}

/* What rlog_put() keeps, added now, in its order (the distributions' exact durations). */
static void rlog_now(struct rstate *s)
{
	uint32_t n = s->nrlog < ROW_LOG ? s->nrlog : ROW_LOG;
	uint32_t first = s->nrlog > ROW_LOG ? s->nrlog % ROW_LOG : 0;

	for (uint32_t k = 0; k < n; k++)
		rlog_apply(s, &s->rlog[(first + k) % ROW_LOG]);
	s->nrlog = 0;
}

/* @e to its row: later, or (--outliers: outlier_add() reads the row) now. */
static inline __attribute__((always_inline)) void rlog_add(struct rstate *s,
							    const struct rlog *e)
{
	if (s->rc->outliers)
		rlog_apply(s, e);
	else
		rlog_put(s, e);
}

static inline __attribute__((always_inline)) void pop_complete(struct rstate *s,
							       struct thr *t)
{
	struct frame *f = &t->st[--t->depth];
	struct frame *parent = t->depth ? &t->st[t->depth - 1] : NULL;
	uint64_t dur, incl, self;

	frame_gone(s, f);
	dur = now(s, t) - f->start - (paused_now(s, t) - f->paused0);
	if (now(s, t) < f->start + (paused_now(s, t) - f->paused0))
		dur = 0;
	incl = (t->insns - f->insns0) - (t->intr_insns - f->intr0);
	if (f->ret == UINT64_MAX) {
		/* An interrupt ends: its time is not the interrupted function's. */
		if (f->func != NONE)
			s->funcs[f->func].insns_self += f->insns_self;
		t->intr--;
		t->intr_insns += incl;
		if (s->clock_time)
			t->paused_total += dur;
		return;
	}
	self = dur > f->child_dur ? dur - f->child_dur : 0;
	if (parent && parent->ret != UINT64_MAX)
		parent->child_dur += dur;
	if (f->func == NONE)
		return;
	if (f->node != NONE)
		s->nodes[f->node].time += self;
	rlog_add(s, &(struct rlog){ .func = f->func, .insns = f->insns_self, .total = incl,
				    .dur = dur, .self = self, .flags = RLOG_CALL | RLOG_DIST |
				    (f->outer ? RLOG_OUTER : 0) });
	if (s->rc->outliers)
		outlier_add(s, &s->funcs[f->func], f, t, dur);
}

static struct thr *thread_get(struct rstate *s, uint32_t pid, uint32_t tid)
{
	struct thr *t, *old = NULL, *free_one = NULL;
	char label[128];

	for (size_t i = 0; i < REPORT_THREADS_MAX; i++) {
		t = &s->thr[i];
		if (!t->used) {
			free_one = free_one ? free_one : t;
			continue;
		}
		if (t->pid == pid && t->tid == tid)
			return t;
		if (!old || t->lru < old->lru)
			old = t;
	}
	t = free_one;
	if (!t) {
		/* The longest idle thread's stack is given up. */
		t = old;
		cut_all(s, t);
		s->evicted++;
	}
	free(t->st);
	memset(t, 0, sizeof(*t));
	t->used = true;
	t->pid = pid;
	t->tid = tid;
	t->base = NONE;
	snprintf(label, sizeof(label), "%" PRIu32 "/%" PRIu32, pid, tid);
	t->root = !s->nodes_on ? NONE :
		  node_get(s, NONE, tid || pid ? sym_str(s, label) :
			   sym_get(s, s->stream_name, NONE));
	if (s->rc->per_thread && s->rc->per_stream)
		snprintf(label, sizeof(label), "%s %" PRIu32 "/%" PRIu32,
			 s->str[s->stream_name], pid, tid);
	else if (s->rc->per_stream)
		snprintf(label, sizeof(label), "%s", s->str[s->stream_name]);
	else if (!s->rc->per_thread)
		label[0] = '\0';
	t->group = intern_str(s, label);
	return t;
}

void streams_end(struct rstate *s)
{
	report_settle(s);
	for (size_t i = 0; i < REPORT_THREADS_MAX; i++) {
		if (s->thr[i].used)
			cut_all(s, &s->thr[i]);
		free(s->thr[i].st);
		memset(&s->thr[i], 0, sizeof(s->thr[i]));
	}
	s->cur = NULL;
}

static struct thr *current(struct rstate *s)
{
	if (!s->cur)
		s->cur = thread_get(s, 0, 0);
	return s->cur;
}

static inline void account(struct rstate *s, uint64_t n)
{
	struct thr *t = current(s);

	s->insns += n;
	t->insns += n;
	if (t->depth) {
		struct frame *f = &t->st[t->depth - 1];

		if (f->node != NONE)
			s->nodes[f->node].insns += n;
		/* (its row's, when it leaves the stack: the row is not waited for here) */
		f->insns_self += n;
		return;
	}
	if (t->root != NONE)
		s->nodes[t->root].insns += n;
	if (t->base != NONE)
		s->funcs[t->base].insns_self += n;
	else
		t->pending += n;
}

/* Whether the trace's time moves: a trace with one timestamp times nothing. */
static void note_time(struct rstate *s, const struct prec *p)
{
	if (!p->has_time)
		return;
	if (!s->have_t0) {
		s->have_t0 = true;
		s->t0 = p->time;
	} else if (p->time != s->t0) {
		s->time_moves = true;
	}
}

static void set_time(struct thr *t, const struct prec *p)
{
	if (p->has_time && p->time > t->last_time)
		t->last_time = p->time;
}

/* note_time() and the clock (as report_filter() sets it) for the time T_TIME said. */
static void note_a_time(struct rstate *s)
{
	struct prec p = { .has_time = s->a_has_time, .time = s->a_time };

	note_time(s, &p);
	if (!s->clock_known && p.has_time && !s->rc->clock_insns) {
		s->clock_known = true;
		s->clock_time = true;
	}
	s->a_noted = true;
}

/* What a call called: its outliers' "called" column, kept only for --outliers. */
static inline void count_callee(const struct rstate *s, struct frame *parent, uint32_t func)
{
	int i;

	if (!parent || func == NONE || !s->rc->outliers)
		return;
	for (i = 0; i < CALLEES && parent->ncalls[i] && parent->callee[i] != func; i++)
		;
	if (i == CALLEES) {
		parent->more++;
	} else {
		parent->callee[i] = func;
		parent->ncalls[i]++;
	}
}

/* What a row_later() entry @e adds to its row. */
static inline void later_add(struct rstate *s, uint32_t e)
{
	struct func *fn = &s->funcs[e & ~LATER_INC_ONLY];

	fn->calls += !(e & LATER_INC_ONLY);
	fn->incomplete++;
}

/*
 * A call over the depth bound (no frame) in the row @e (| LATER_INC_ONLY: an interrupt's,
 * not a call): its call and its incomplete, added ROW_LATER calls later (or by rows_now()),
 * meanwhile its row is fetched. Nothing else of the row is wanted there, and nothing reads
 * these two before the output; on many functions the row is a miss.
 */
static inline void row_later(struct rstate *s, uint32_t e)
{
	uint32_t *q = &s->later[s->nlater++ % ROW_LATER];

	if (s->nlater > ROW_LATER)
		later_add(s, *q);
	*q = e;
	__builtin_prefetch(&s->funcs[e & ~LATER_INC_ONLY], 1);
}

static inline void sc_add(struct rstate *s, struct sc_later e)
{
	s->funcs[e.func].calls += e.n;
	s->funcs[e.func].incomplete += e.n;
}

/* What sc_settle_one() keeps, added now. */
static void scl_now(struct rstate *s)
{
	uint32_t n = s->nscl < ROW_LATER ? s->nscl : ROW_LATER;

	for (uint32_t i = 0; i < n; i++)
		sc_add(s, s->scl[i]);
	s->nscl = 0;
}

/* What row_later() and sc_settle_one() keep, added now. */
static void rows_now(struct rstate *s)
{
	uint32_t n = s->nlater < ROW_LATER ? s->nlater : ROW_LATER;

	for (uint32_t i = 0; i < n; i++)
		later_add(s, s->later[i]);
	s->nlater = 0;
	scl_now(s);
}

/*
 * A call's frame (@ret UINT64_MAX: an interrupt's, not a call). The call is counted in its
 * row when its frame leaves the stack (pop_complete(), cut_frame()), with what its return
 * adds to the same line: one row entry a call, not one at the call and one at its return.
 * Over the depth bound (no frame) here (row_later()).
 */
static inline __attribute__((always_inline)) void push(struct rstate *s, struct thr *t,
						       uint32_t func, uint32_t name,
						       uint64_t ret, bool timed)
{
	struct frame *f, *parent;
	struct fstack *fo;
	uint32_t pnode, ti = (uint32_t)(t - s->thr);

	if (t->depth >= REPORT_DEPTH_MAX) {
		t->over++;
		s->deep++;
		if (func != NONE)
			row_later(s, func | (ret == UINT64_MAX ? LATER_INC_ONLY : 0));
		return;
	}
	/* The stack may move: the caller's frame is taken after (its callees were counted into
	 * the freed one, lost or not by how malloc reused it: -J N and -J 1 differed). */
	if (!grow((void **)&t->st, &t->cap, t->depth + 1, sizeof(*t->st))) {
		s->oom = true;
		if (func != NONE && ret != UINT64_MAX)
			s->funcs[func].calls++;
		return;
	}
	parent = t->depth ? &t->st[t->depth - 1] : NULL;
	pnode = parent ? parent->node : t->root;
	count_callee(s, parent, func);
	f = &t->st[t->depth++];
	f->child_dur = 0;
	f->insns_self = 0;
	if (s->rc->outliers) {
		memset(f->callee, 0, sizeof(f->callee));
		memset(f->ncalls, 0, sizeof(f->ncalls));
		f->more = 0;
	}
	f->func = func;
	f->ret = ret;
	f->node = pnode == NONE ? NONE : node_get(s, pnode, name);
	f->start = now(s, t);
	f->paused0 = paused_now(s, t);
	f->insns0 = t->insns;
	f->intr0 = t->intr_insns;
	f->seq = s->calls;
	f->outer = true;
	f->timed = timed;
	if (func == NONE)
		return;
	fo = &s->fstack[func];
	if (fo->open && fo->thr == ti) {
		f->outer = false;
	} else if (fo->open && fo->thr == NONE) {
		for (uint32_t i = 0; i + 1 < t->depth; i++)
			if (t->st[i].func == func)
				f->outer = false;
	}
	fo->thr = !fo->open++ || fo->thr == ti ? ti : NONE;
}

/* An object's name (@n bytes), NONE for none. */
static uint32_t intern_obj(struct rstate *s, const char *p, size_t n)
{
	return n ? intern(s, p, n) : NONE;
}

/* A record's N_*: any other is taken as N_UNKNOWN (as name_of() spells it). */
static uint8_t how_of(unsigned how)
{
	return how == N_SYM || how == N_SYMOFF ? (uint8_t)how : N_UNKNOWN;
}

/*
 * The name @e gives: spelt here, only when it is needed, as decoding spells a symbol
 * (image_sym_format(), by hand: snprintf() was 1.3 % of the walk's report, at its 21,245
 * names). Not kept by @e (a table of them was tried): func_of() asks at calls_seen's misses,
 * mostly once a function (the walk: 92 of 21,245 asked again), and the table cost 1 MiB and
 * 500 page faults.
 */
static uint32_t name_of(struct rstate *s, const struct fref *e)
{
	struct image_sym y = { .off = e->off };
	char b[4 * NAME_LEN];

	if (e->how == N_SYM || e->how == N_NAME)
		return e->base;
	if (e->how == N_SYMOFF) {
		if (e->base == NONE)
			return NONE;
		y.name = s->str[e->base];
	} else if (e->obj != NONE) {
		y.object = y.file = s->str[e->obj];
	}
	return intern(s, b, image_sym_format(&y, b, sizeof(b)));
}

/* For the unit tests: name_of() of a name or object and an offset. */
uint32_t report_name(struct rstate *s, unsigned how, const char *base, const char *obj,
		     uint64_t off)
{
	struct fref e = { .off = off, .how = how_of(how) };

	e.base = *base ? intern_str(s, base) : NONE;
	e.obj = *obj ? intern_str(s, obj) : NONE;
	return name_of(s, &e);
}

/* @e's set in calls_seen for @group (func_of()): CALL_WAYS slots, the latest first. */
static struct call_slot *call_slot_of(struct rstate *s, uint32_t group, const struct fref *e)
{
	uint64_t off = e->how == N_SYM || e->how == N_NAME ? 0 : e->off;
	uint32_t base = e->how == N_UNKNOWN ? NONE : e->base;
	uint64_t h;

	h = ((uint64_t)base << 32 ^ e->obj ^ (uint64_t)group << 16 ^ (uint64_t)e->how << 62) *
	    0x9e3779b97f4a7c15ull ^ off * 0xc2b2ae3d27d4eb4full;
	return &s->calls_seen[h >> (64 - CALL_BITS) & ~(uint64_t)(CALL_WAYS - 1)];
}

/*
 * The function @e names (a sym, into @sym) and its row in @group (the return; NONE: none,
 * or out of memory), by calls_seen: name_of(), sym_get() and func_get() once per function,
 * then one slot (calls and returns name the same few over and over).
 */
static uint32_t func_of(struct rstate *s, uint32_t group, const struct fref *e, uint32_t *sym)
{
	uint64_t off = e->how == N_SYM || e->how == N_NAME ? 0 : e->off;	/* (ignored) */
	uint32_t base = e->how == N_UNKNOWN ? NONE : e->base, name, n, func;
	struct call_slot *set = call_slot_of(s, group, e), *c;

	for (c = set; c < set + CALL_WAYS; c++)
		if (c->used && c->off == off && c->base == base && c->obj == e->obj &&
		    c->group == group && c->how == e->how) {
			*sym = c->sym;
			return c->func;
		}
	name = name_of(s, e);
	n = sym_get(s, name, e->obj);
	func = func_get(s, group, n);
	*sym = n;
	if (name != NONE && n != NONE && func != NONE) {
		memmove(set + 1, set, (CALL_WAYS - 1) * sizeof(*set));
		*set = (struct call_slot){ .off = off, .base = base, .obj = e->obj,
					   .group = group, .sym = n, .func = func, .how = e->how,
					   .used = 1 };
	}
	return func;
}

/* @a's function (a sym, into @sym) and its row in @group, as func_of() gives them. */
static uint32_t aslot_func(struct rstate *s, uint32_t group, struct aslot *a, uint32_t *sym)
{
	uint32_t func;

	if (a->group == group && group != NONE) {
		*sym = a->sym;
		return a->func;
	}
	func = func_of(s, group, &s->aslot_e[a - s->aslots], sym);
	if (func != NONE) {
		a->group = group;
		a->sym = *sym;
		a->func = func;
	}
	return func;
}

/*
 * Slot @slot's count of calls past the depth bound (rstate's sc[]) added to its row: at once,
 * or (@later: a T_ADEF's, one a new function in the slot; on the walk at -J 2, 66,000) ROW_LATER
 * such later, or by rows_now(), the row fetched meanwhile.
 */
static void sc_settle_one(struct rstate *s, uint32_t slot, bool later)
{
	struct sc_later *q, e = { .n = s->sc[slot] };
	uint32_t n;

	s->sc[slot] = 0;
	e.func = aslot_func(s, s->sc_group, &s->aslots[slot], &n);
	if (e.func == NONE)
		return;
	if (!later) {
		sc_add(s, e);
		return;
	}
	q = &s->scl[s->nscl++ % ROW_LATER];
	if (s->nscl > ROW_LATER)
		sc_add(s, *q);
	*q = e;
	__builtin_prefetch(&s->funcs[e.func], 1);
}

void report_settle(struct rstate *s)
{
	/* (a slot settled by its T_ADEF and counted again is listed twice: 0 the second time) */
	for (uint32_t i = 0; i < s->nsc_dirty; i++)
		if (s->sc[s->sc_dirty[i]])
			sc_settle_one(s, s->sc_dirty[i], false);
	s->nsc_dirty = 0;
	scl_now(s);
}

/* The slots' counts kept for @group from here (the other group's added to their rows). */
static inline void sc_group_is(struct rstate *s, uint32_t group)
{
	if (s->sc_group != group) {
		report_settle(s);
		s->sc_group = group;
	}
}

/*
 * A call past the depth bound counted by its slot @to (sc_settle_one() adds it to the row).
 * @func: the slot's function in sc_group, wanted only at the slot's first count (its
 * function found then, as push() would have found it: rows made in the same order).
 */
static inline void sc_take(struct rstate *s, uint16_t to, uint32_t func)
{
	uint32_t c = s->sc[to];

	if (!c) {
		if (func == NONE)
			return;
		if (s->nsc_dirty == ADDR_SLOTS)
			report_settle(s);
		s->sc_dirty[s->nsc_dirty++] = to;
	}
	s->sc[to] = ++c;
	if (c == UINT32_MAX)
		sc_settle_one(s, to, false);
}

/*
 * The clock settled at the first call (time where the records carry it and --clock insns was
 * not asked for), and @t's last time moved to the records' time.
 */
static inline void a_clock(struct rstate *s, struct thr *t)
{
	if (!s->clock_known) {
		s->clock_known = true;
		s->clock_time = s->a_has_time && !s->rc->clock_insns;
	}
	if (s->a_has_time && s->a_time > t->last_time)
		t->last_time = s->a_time;
}

/* A call of @t into the function @n (a sym) whose row is @func. */
static void on_call_row(struct rstate *s, struct thr *t, const struct prec *p, uint32_t n,
			uint32_t func)
{
	if (!s->clock_known) {
		s->clock_known = true;
		s->clock_time = p->has_time && !s->rc->clock_insns;
	}
	set_time(t, p);
	s->calls++;
	push(s, t, func, n, p->a ? p->a : UINT64_MAX - 1, p->has_time);
}

/* A call of the function @e names, or (@a not NULL) the one at an address slot. */
static void on_call(struct rstate *s, const struct prec *p, const struct fref *e,
		    struct aslot *a)
{
	struct thr *t = current(s);
	uint32_t n, func = a ? aslot_func(s, t->group, a, &n) : func_of(s, t->group, e, &n);

	on_call_row(s, t, p, n, func);
}

/* A return that closes an open call (true); false: on_ret_unmatched() with its names. */
static bool on_ret_match(struct rstate *s, const struct prec *p)
{
	struct thr *t = current(s);
	uint32_t i;

	set_time(t, p);
	if (t->over) {
		t->over--;
		return true;
	}
	for (i = t->depth; i > 0; i--) {
		if (t->st[i - 1].ret == UINT64_MAX)
			break;
		if (t->st[i - 1].ret == p->b) {
			/* What is above it returns with it (the stack unwinds). */
			while (t->depth >= i)
				pop_complete(s, t);
			return true;
		}
	}
	return false;
}

/*
 * A return that closes no open call, from the function @from names to the one @to names
 * (or, @afrom and @ato not NULL, the ones at those address slots).
 */
static void on_ret_unmatched(struct rstate *s, const struct fref *from, const struct fref *to,
			     struct aslot *afrom, struct aslot *ato)
{
	struct thr *t = current(s);
	uint32_t fn, sym;

	/* A return from a call before the trace (or a gap): its function is now known. */
	if (t->depth)
		cut_all(s, t);
	fn = afrom ? aslot_func(s, t->group, afrom, &sym) : func_of(s, t->group, from, &sym);
	if (fn != NONE) {
		if (t->base != fn)
			s->funcs[fn].incomplete++;
		s->funcs[fn].insns_self += t->pending;
		t->pending = 0;
	}
	t->base = ato ? aslot_func(s, t->group, ato, &sym) : func_of(s, t->group, to, &sym);
	if (t->base != NONE && t->base != fn)
		s->funcs[t->base].incomplete++;
	if (t->base == NONE) {
		uint32_t u = func_get(s, t->group, s->unknown);

		if (u != NONE)
			s->funcs[u].insns_self += t->pending;
		t->pending = 0;
	}
}

static void on_thread(struct rstate *s, const struct prec *p)
{
	struct thr *t = current(s), *n;

	set_time(t, p);
	if (t->pid == p->pid && t->tid == p->tid)
		return;
	if (!t->paused) {
		t->paused = true;
		t->pause_at = t->last_time;
	}
	n = thread_get(s, p->pid, p->tid);
	n->lru = ++s->lru;
	if (p->has_time && p->time > n->last_time)
		n->last_time = p->time;
	if (n->paused) {
		n->paused = false;
		n->paused_total += n->last_time - n->pause_at;
	}
	s->cur = n;
}

static void on_rec(struct rstate *s, const struct prec *p, const char *s1, const char *s2,
		   const char *s3, const char *s4)
{
	struct thr *t;

	note_time(s, p);
	/* The clock: the trace's time when it has any before the first call. */
	if (!s->clock_known && p->has_time && !s->rc->clock_insns) {
		s->clock_known = true;
		s->clock_time = true;
	}

	switch (p->kind) {
	case P_STREAM:
		streams_end(s);
		s->stream = (uint32_t)p->a;
		s->stream_name = intern(s, s1, p->len1);
		break;
	case P_CALL: {
		struct fref e = { .how = N_NAME, .base = intern(s, s1, p->len1),
				  .obj = intern_obj(s, s3, p->len3) };

		on_call(s, p, &e, NULL);
		break;
	}
	case P_RET:
		if (!on_ret_match(s, p)) {
			struct fref from = { .how = N_NAME, .base = intern(s, s1, p->len1),
					     .obj = intern_obj(s, s3, p->len3) };
			struct fref to = { .how = N_NAME, .base = intern(s, s2, p->len2),
					   .obj = intern_obj(s, s4, p->len4) };

			on_ret_unmatched(s, &from, &to, NULL, NULL);
		}
		break;
	case P_GAP:
		t = current(s);
		set_time(t, p);
		cut_all(s, t);
		break;
	case P_THREAD:
		on_thread(s, p);
		break;
	case P_END:
		streams_end(s);
		break;
	case P_OFF:
		t = current(s);
		set_time(t, p);
		t->paused = true;
		t->pause_at = t->last_time;
		t->resume_ip = p->a;
		break;
	case P_ON:
		t = current(s);
		set_time(t, p);
		if (!t->paused)
			break;
		t->paused = false;
		/* Where it stopped: the thread goes on (the time between is not its). */
		if (p->b || p->a == t->resume_ip)
			t->paused_total += t->last_time - t->pause_at;
		else
			cut_all(s, t);
		break;
	case P_INTR:
		t = current(s);
		set_time(t, p);
		push(s, t, func_get(s, t->group, sym_str(s, "[interrupt]")),
		     sym_str(s, "[interrupt]"), UINT64_MAX, p->has_time);
		if (t->depth && t->st[t->depth - 1].ret == UINT64_MAX)
			t->intr++;
		break;
	default:
		break;
	}
}

static void far_return(struct rstate *s)
{
	struct thr *t = current(s);

	if (!t->intr)
		return;
	while (t->depth && t->st[t->depth - 1].ret != UINT64_MAX)
		cut_frame(s, t);
	if (t->depth)
		pop_complete(s, t);
}

/* A varint at *@at of @data (@len bytes), *@at moved past it; false: none whole there. */
static inline bool get_varint(const uint8_t *data, size_t len, size_t *at, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned sh = 0; sh < 7 * VARINT_MAX && *at < len; sh += 7) {
		uint8_t b = data[(*at)++];

		x |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/*
 * get_varint() for one that ends in the 8 bytes at *@at (8 there), with no branch on its
 * length: a T_CALLV's return address delta takes 1 to 4 bytes at random on a trace of many
 * functions, a mispredicted branch at each byte. false: not so, *@at unmoved.
 */
static inline bool get_varint8(const uint8_t *data, size_t len, size_t *at, uint64_t *v)
{
	uint64_t w, stop, x;

	if (len - *at < sizeof(w))
		return false;
	memcpy(&w, data + *at, sizeof(w));
	stop = ~w & 0x8080808080808080ull;
	if (!stop)
		return false;
	/* (its bytes: the bits below the lowest stop, the first byte without the high bit,
	 * whose high bit is 0 in @w) */
	x = w & (stop - 1);
	/* (each byte's 7 bits to their place, in three steps: pairs, fours, the eight) */
	x = (x & 0x007f007f007f007full) | (x >> 1 & 0x3f803f803f803f80ull);
	x = (x & 0x00003fff00003fffull) | (x >> 2 & 0x0fffc0000fffc000ull);
	*v = (x & 0x000000000fffffffull) | (x >> 4 & 0x00fffffff0000000ull);
	*at += (unsigned)__builtin_ctzll(stop) / 8 + 1;
	return true;
}

/* For the unit tests: the varint at *@at as report_filter() reads a T_CALLV's. */
bool report_varint(const uint8_t *data, size_t len, size_t *at, uint64_t *v)
{
	return get_varint8(data, len, at, v) || get_varint(data, len, at, v);
}

/* The size of the T_SUM at @i of @data (@len bytes), 0: not whole there. */
static size_t sum_size(const uint8_t *data, size_t len, size_t i)
{
	size_t at = i + 1, nev = 0;
	struct psum p;

	if (len - i < 1 + sizeof(p))
		return 0;
	memcpy(&p, data + at, sizeof(p));
	at += sizeof(p) + p.nent * sizeof(struct psent) + p.nrun * sizeof(struct psrun);
	if (at > len || len - at < p.nshape * sizeof(uint16_t))
		return 0;
	for (uint32_t j = 0; j < p.nshape; j++) {
		uint16_t l;

		memcpy(&l, data + at + j * sizeof(l), sizeof(l));
		nev += l;
	}
	at += p.nshape * sizeof(uint16_t) + nev * sizeof(struct psev) +
	      p.nord * sizeof(struct psord);
	return at <= len ? at - i : 0;
}

static __attribute__((noinline)) size_t rec_size_var(const uint8_t *data, size_t len,
						      size_t i)
{
	size_t n = 0;

	if (data[i] == T_CALLV || data[i] == T_CALLV0 || data[i] == T_RETTOP) {
		size_t at = i + 1;
		uint64_t v;

		if (!get_varint(data, len, &at, &v))
			return 0;
		if (data[i] != T_RETTOP &&
		    (len - at < sizeof(uint16_t) || (at += sizeof(uint16_t),
						     !get_varint(data, len, &at, &v))))
			return 0;
		return at - i;
	}
	if (data[i] == T_SUM) {
		n = sum_size(data, len, i);
	} else if (data[i] == T_DEF && len - i >= 1 + sizeof(struct pdef)) {
		struct pdef d;

		memcpy(&d, data + i + 1, sizeof(d));
		n = 1 + sizeof(d) + d.len;
	} else if (data[i] == T_REC && len - i >= 1 + sizeof(struct prec)) {
		struct prec p;

		memcpy(&p, data + i + 1, sizeof(p));
		n = 1 + sizeof(p) + (size_t)p.len1 + p.len2 + p.len3 + p.len4;
	}
	return n <= len - i ? n : 0;
}

/* The size of the record at @i of @data (@len bytes); 0: none whole there. */
static inline __attribute__((always_inline)) size_t rec_size(const uint8_t *data, size_t len,
							     size_t i)
{
	static const uint8_t fixed[] = {
		[T_INSN] = 1, [T_FARRET] = 1, [T_RUN] = 5, [T_RUNFAR] = 5,
		[T_CALL] = 1 + sizeof(struct pcall), [T_RET] = 1 + sizeof(struct pret),
		[T_ADEF] = 1 + sizeof(struct padef), [T_TIME] = 1 + sizeof(struct ptime),
		[T_RETA] = 1 + sizeof(struct preta), [T_RETN] = 5 + sizeof(struct preta),
	};
	size_t n = data[i] < sizeof(fixed) ? fixed[data[i]] : 0;

	/* (T_RETTOP and T_CALLV with one-byte varints: most records) */
	if (data[i] == T_RETTOP && len - i >= 2 && data[i + 1] < 0x80)
		return 2;
	if (data[i] == T_CALLV && len - i >= 5 && data[i + 1] < 0x80 && data[i + 4] < 0x80)
		return 5;
	if (!n)
		return rec_size_var(data, len, i);
	return n <= len - i ? n : 0;
}

/*
 * What a call will touch, fetched ahead of it (on a trace of many functions each is a miss):
 * at PREFETCH_FAR records ahead, a T_ADEF's calls_seen set or a T_CALLV's address slot; when
 * the cursor is PREFETCH_NEAR records from it, the row that set or slot holds (both its
 * lines: the call adds to the first, its return to the distribution in the second). Only
 * hints: a record's handling looks everything up again.
 */
#define PREFETCH_FAR 16
#define PREFETCH_NEAR 6
#define PREFETCH_RING 16

struct ahead {
	size_t at;			/* the cursor: the record after the last one seen */
	uint64_t n;			/* records seen */
	struct call_slot *slot[PREFETCH_RING];	/* a T_ADEF's set */
	const struct aslot *aslot[PREFETCH_RING];	/* or (slot NULL) a T_CALLV's slot */
	uint64_t seen[PREFETCH_RING];
	unsigned head, tail;
};

/* @data's T_ADEF at @at (whole), its calls_seen slot fetched and queued for its row. */
static void ahead_adef(struct rstate *s, struct ahead *h, const uint8_t *data, size_t at)
{
	struct padef d;
	struct fref e;

	memcpy(&d, data + at + 1, sizeof(d));
	if (d.name >= DEF_MAX || d.obj >= DEF_MAX || h->tail - h->head == PREFETCH_RING)
		return;
	e = (struct fref){ .how = how_of(d.how), .base = s->defs[d.name], .obj = s->defs[d.obj],
			   .off = d.off };
	h->slot[h->tail % PREFETCH_RING] = call_slot_of(s, s->cur->group, &e);
	h->seen[h->tail % PREFETCH_RING] = h->n;
	__builtin_prefetch(h->slot[h->tail % PREFETCH_RING]);
	__builtin_prefetch(h->slot[h->tail++ % PREFETCH_RING] + CALL_WAYS - 1);
}

/* @data's T_CALLV at @at (@n bytes, whole): its address slot fetched and queued for its row. */
static inline void ahead_callv(struct rstate *s, struct ahead *h, const uint8_t *data,
			       size_t at, size_t n)
{
	size_t end = at + n;
	uint64_t run;
	uint16_t to;

	if (h->tail - h->head == PREFETCH_RING)
		return;
	/* (the tag, the run's varint, then the slot) */
	at++;
	if (!get_varint(data, end, &at, &run) || end - at < sizeof(to))
		return;
	memcpy(&to, data + at, sizeof(to));
	if (to >= ADDR_SLOTS)
		return;
	h->slot[h->tail % PREFETCH_RING] = NULL;
	h->aslot[h->tail % PREFETCH_RING] = &s->aslots[to];
	h->seen[h->tail++ % PREFETCH_RING] = h->n;
	__builtin_prefetch(&s->aslots[to]);
}

static inline void ahead_row(const struct rstate *s, uint32_t func)
{
	if (func < s->nfuncs) {
		__builtin_prefetch(&s->funcs[func]);
		__builtin_prefetch((const char *)&s->funcs[func] + 64);
	}
}

/* The cursor one record on, not behind @i (main loop's record). */
static inline __attribute__((always_inline)) void ahead_step(struct rstate *s, struct ahead *h,
							     const uint8_t *data, size_t len,
							     size_t i)
{
	size_t n;

	if (h->at < i)
		h->at = i;
	if (h->head != h->tail && h->n - h->seen[h->head % PREFETCH_RING] >=
	    PREFETCH_FAR - PREFETCH_NEAR) {
		const struct call_slot *c = h->slot[h->head % PREFETCH_RING];
		const struct aslot *a = h->aslot[h->head++ % PREFETCH_RING];

		/* (the set's every row: one is the T_ADEF's, where it is known) */
		if (c) {
			for (int w = 0; w < CALL_WAYS; w++)
				if (c[w].used)
					ahead_row(s, c[w].func);
		} else if (s->cur && a->group == s->cur->group) {
			ahead_row(s, a->func);
		}
	}
	if (h->at >= len || !(n = rec_size(data, len, h->at)))
		return;
	if (data[h->at] == T_ADEF && s->cur)
		ahead_adef(s, h, data, h->at);
	else if (data[h->at] == T_CALLV && s->cur)
		ahead_callv(s, h, data, h->at, n);
	h->at += n;
	h->n++;
}

/* A T_RETTOP after @k instructions: @t's top frame returns (or one past the depth bound). */
static inline void ret_top(struct rstate *s, struct thr *t, uint64_t k)
{
	if (k)
		account(s, k);
	if (t->over)
		t->over--;
	else
		pop_complete(s, t);
}

/*
 * A call of @func (a sym @name; @timed as push() has it, @ret its return address) that the
 * very next record, a T_RETTOP after @k instructions, closes: what push(), ret_top() and
 * pop_complete() do for it, without its frame (half the calls of a trace are leaves). No
 * time passes between: the duration is @k on the instruction clock, 0 on the trace's.
 * Only where push() makes a frame that the T_RETTOP pops (the caller checks: no frame
 * over the depth bound, none pending there, @ret not an interrupt's).
 */
static inline __attribute__((always_inline)) void leaf(struct rstate *s, struct thr *t,
						       uint32_t func, uint32_t name, bool timed,
						       uint64_t k)
{
	struct frame *parent = t->depth ? &t->st[t->depth - 1] : NULL;
	uint32_t pnode = parent ? parent->node : t->root, node;
	uint64_t dur = s->clock_time ? 0 : k;
	uint32_t ti = (uint32_t)(t - s->thr);
	struct fstack *fo;
	bool outer = true;

	count_callee(s, parent, func);
	node = pnode == NONE ? NONE : node_get(s, pnode, name);
	s->insns += k;
	t->insns += k;
	if (node != NONE)
		s->nodes[node].insns += k;
	if (parent && parent->ret != UINT64_MAX)
		parent->child_dur += dur;
	if (func == NONE)
		return;
	if (node != NONE)
		s->nodes[node].time += dur;
	fo = &s->fstack[func];
	if (fo->open && fo->thr == ti) {
		outer = false;
	} else if (fo->open) {
		if (fo->thr == NONE)
			for (uint32_t i = 0; i < t->depth; i++)
				if (t->st[i].func == func)
					outer = false;
		/* (push() forgets the one thread; the return does not bring it back) */
		fo->thr = NONE;
	}
	/* (its call's count too, as pop_complete() adds it) */
	rlog_add(s, &(struct rlog){ .func = func, .insns = k, .total = k, .dur = dur,
				    .self = dur, .flags = RLOG_CALL | RLOG_DIST |
				    (outer ? RLOG_OUTER : 0) });
	if (s->rc->outliers) {
		struct frame f = { .start = now(s, t) - dur, .seq = s->calls, .timed = timed };

		outlier_add(s, &s->funcs[func], &f, t, dur);
	}
}

/* The row of @t's group for the function at address slot @aid, its sym in @n. */
static inline uint32_t slot_func(struct rstate *s, const struct thr *t, uint16_t aid,
				 uint32_t *n)
{
	struct aslot *a = &s->aslots[aid];

	if (a->group == t->group && t->group != NONE) {
		*n = a->sym;
		return a->func;
	}
	return aslot_func(s, t->group, a, n);
}

#define FOLD_MAX 256

/* The T_DEF at @i of @data (@len bytes) taken in: its size, 0: not whole. */
static size_t take_def(struct rstate *s, const uint8_t *data, size_t len, size_t i)
{
	struct pdef d;

	if (len - i < 1 + sizeof(d))
		return 0;
	memcpy(&d, data + i + 1, sizeof(d));
	if (d.id >= DEF_MAX || len - i - 1 - sizeof(d) < d.len)
		return 0;
	s->defs[d.id] = intern_obj(s, (const char *)data + i + 1 + sizeof(d), d.len);
	return 1 + sizeof(d) + d.len;
}

/* The T_ADEF at @i: its size, 0: not whole or not valid. */
static size_t take_adef(struct rstate *s, const uint8_t *data, size_t len, size_t i)
{
	struct padef d;
	struct aslot *a;

	if (len - i < 1 + sizeof(d))
		return 0;
	memcpy(&d, data + i + 1, sizeof(d));
	if (d.aid >= ADDR_SLOTS || d.name >= DEF_MAX || d.obj >= DEF_MAX)
		return 0;
	a = &s->aslots[d.aid];
	if (s->sc[d.aid])
		sc_settle_one(s, d.aid, true);
	s->aslot_e[d.aid] = (struct fref){ .how = how_of(d.how), .base = s->defs[d.name],
					   .obj = s->defs[d.obj], .off = d.off };
	a->group = NONE;
	s->adefs++;
	return 1 + sizeof(d);
}

/*
 * The trees of the T_SUM @p at @at (struct psum after its tag) as their records would go
 * (the T_CALLV and T_RETTOP branches of report_filter()), in the order they ran: where the
 * stack does not allow the sums. false: not a T_SUM a worker writes.
 */
static bool play_sum(struct rstate *s, struct thr *t, const struct psum *p, const uint8_t *data,
		     size_t at)
{
	size_t lens = at + sizeof(*p) + p->nent * sizeof(struct psent) +
		      p->nrun * sizeof(struct psrun);
	size_t evs = lens + p->nshape * sizeof(uint16_t), ords, shape_at[FOLD_MAX + 1];

	if (p->nshape > FOLD_MAX)
		return false;
	shape_at[0] = 0;
	for (uint32_t j = 0; j < p->nshape; j++) {
		uint16_t l;

		memcpy(&l, data + lens + j * sizeof(l), sizeof(l));
		shape_at[j + 1] = shape_at[j] + l;
	}
	ords = evs + shape_at[p->nshape] * sizeof(struct psev);
	for (uint32_t o = 0; o < p->nord; o++) {
		struct psord d;

		memcpy(&d, data + ords + o * sizeof(d), sizeof(d));
		if (d.shape >= p->nshape)
			return false;
		for (uint32_t r = 0; r < d.n; r++)
			for (size_t e = shape_at[d.shape]; e < shape_at[d.shape + 1]; e++) {
				struct psev v;
				uint32_t n, func;

				memcpy(&v, data + evs + e * sizeof(v), sizeof(v));
				if (v.aid == SUM_RET) {
					/* (a return to no frame the sums' calls made: not what they
					 * hold; its instructions counted, as a run) */
					if (!t->over && (!t->depth ||
							 t->st[t->depth - 1].ret == UINT64_MAX)) {
						account(s, v.k);
						continue;
					}
					if (!s->a_noted)
						note_a_time(s);
					if (s->a_has_time && s->a_time > t->last_time)
						t->last_time = s->a_time;
					ret_top(s, t, v.k);
					continue;
				}
				if (v.aid >= ADDR_SLOTS)
					return false;
				if (v.k)
					account(s, v.k);
				if (!s->a_noted)
					note_a_time(s);
				func = slot_func(s, t, v.aid, &n);
				a_clock(s, t);
				s->calls++;
				s->summed++;
				s->ret_prev = v.next;
				push(s, t, func, n, v.next ? v.next : UINT64_MAX - 1, s->a_has_time);
			}
	}
	return true;
}

/*
 * The T_SUM @p at @at folded in where @t's stack is at the depth bound: each of its calls
 * goes over it (push(): its row's call, incomplete, no frame) and each return comes back
 * to it (ret_top(): over--), so that what its records would do is, per slot, the calls
 * and, for the top frame, every instruction (account() adds them up the same at once).
 * false: a slot no worker writes.
 */
static bool fold_over(struct rstate *s, struct thr *t, const struct psum *p,
		      const uint8_t *data, size_t at)
{
	for (uint32_t e = 0; e < p->nent; e++) {
		struct psent x;
		uint32_t n, func;

		memcpy(&x, data + at + sizeof(*p) + e * sizeof(x), sizeof(x));
		if (x.aid >= ADDR_SLOTS)
			return false;
		/* (the rows made in the order the calls made them: the entries') */
		func = slot_func(s, t, x.aid, &n);
		s->calls += x.calls;
		s->summed += x.calls;
		s->deep += x.calls;
		if (func != NONE) {
			s->funcs[func].calls += x.calls;
			s->funcs[func].incomplete += x.calls;
		}
	}
	if (!s->a_noted)
		note_a_time(s);
	a_clock(s, t);
	if (p->top + p->roots)
		account(s, p->top + p->roots);
	s->ret_prev = p->ret;
	return true;
}

/*
 * The T_SUM at @i of @data (@len bytes) folded in: what the records of its calls would have
 * done (see leaf(), push() and pop_complete(): every call opens and closes in it, no time
 * passes), where no frame goes over the depth bound and its slots are each a function of
 * their own; else its trees played (play_sum()). Its size; 0: not whole or not valid.
 */
static size_t fold_sum(struct rstate *s, const uint8_t *data, size_t len, size_t i)
{
	uint32_t func[FOLD_MAX], seen[2 * FOLD_MAX], n, ti;
	size_t at = i + 1, size = sum_size(data, len, i);
	struct frame *parent;
	struct psum p;
	struct thr *t;
	bool fold;

	if (!size)
		return 0;
	memcpy(&p, data + at, sizeof(p));
	if (p.nent > FOLD_MAX)
		return 0;
	t = current(s);
	ti = (uint32_t)(t - s->thr);
	/* (the rows' distributions take their durations in the calls' order) */
	rlog_now(s);
	/* (a thread over the bound has its whole depth: far_return() may leave it less) */
	if (t->depth >= REPORT_DEPTH_MAX && !s->rc->sum_play)
		return fold_over(s, t, &p, data, at) ? size : 0;
	fold = !t->over && t->depth + p.depth <= REPORT_DEPTH_MAX && !s->rc->outliers &&
	       !s->nodes_on && !s->rc->sum_play;
	/* The rows, in the order the calls made them; two slots of one function: its calls'
	 * outer-ness is not the worker's (it went by slot). */
	memset(seen, 0xff, sizeof(seen));
	for (uint32_t e = 0; e < p.nent && fold; e++) {
		struct psent x;
		uint32_t h;

		memcpy(&x, data + at + sizeof(p) + e * sizeof(x), sizeof(x));
		if (x.aid >= ADDR_SLOTS)
			return 0;
		func[e] = slot_func(s, t, x.aid, &n);
		if (func[e] == NONE)
			continue;
		for (h = (func[e] * 0x9e3779b1u) >> 23;; h = (h + 1) % (2 * FOLD_MAX)) {
			if (seen[h] == func[e])
				fold = false;
			if (seen[h] == NONE || seen[h] == func[e])
				break;
		}
		seen[h] = func[e];
	}
	if (!fold) {
		if (!play_sum(s, t, &p, data, at))
			return 0;
		s->ret_prev = p.ret;
		return size;
	}
	if (!s->a_noted)
		note_a_time(s);
	a_clock(s, t);
	if (p.top)
		account(s, p.top);
	parent = t->depth ? &t->st[t->depth - 1] : NULL;
	if (parent && parent->ret != UINT64_MAX && !s->clock_time)
		parent->child_dur += p.roots;
	for (uint32_t e = 0; e < p.nent; e++) {
		struct psent x;
		struct func *fn;
		bool outer;

		memcpy(&x, data + at + sizeof(p) + e * sizeof(x), sizeof(x));
		s->calls += x.calls;
		s->summed += x.calls;
		s->insns += x.self;
		t->insns += x.self;
		if (func[e] == NONE)
			continue;
		fn = &s->funcs[func[e]];
		fn->calls += x.calls;
		fn->insns_self += x.self;
		if (!s->clock_time)
			fn->time_self += x.self;
		outer = !s->fstack[func[e]].open || s->fstack[func[e]].thr != ti;
		if (s->fstack[func[e]].open && s->fstack[func[e]].thr == NONE)
			for (uint32_t d = 0; d < t->depth && outer; d++)
				outer = t->st[d].func != func[e];
		if (outer) {
			fn->insns_total += x.outer;
			if (!s->clock_time)
				fn->time_total += x.outer;
		}
		/* (push() forgets the one thread; the return does not bring it back) */
		if (s->fstack[func[e]].open && s->fstack[func[e]].thr != ti)
			s->fstack[func[e]].thr = NONE;
	}
	for (uint32_t e = 0; e < p.nrun; e++) {
		struct psrun x;
		uint32_t f;

		memcpy(&x, data + at + sizeof(p) + p.nent * sizeof(struct psent) +
		       e * sizeof(x), sizeof(x));
		if (x.aid >= ADDR_SLOTS)
			continue;
		f = slot_func(s, t, x.aid, &n);
		if (f != NONE)
			dist_add_n(s, &s->funcs[f].d, s->clock_time ? 0 : x.insns, x.n);
	}
	s->ret_prev = p.ret;
	return size;
}

/*
 * The T_CALLV and T_RETTOP records from @i of @data (@len bytes) while @t stays past the
 * depth bound: what push() and ret_top() do there (a call: its row's call and incomplete, no
 * frame; a return: over--), one record after another without the main loop's per-record
 * work, and their instructions accounted once (to the same top frame: account() adds them
 * up the same). On a walk of deep recursion most calls are here. Stops at the first record
 * that is neither, or that would leave the bound (a return to a frame), or not whole; @recs
 * counts those taken. Where it stopped.
 */
static size_t over_run(struct rstate *s, struct thr *t, const uint8_t *data, size_t len,
		       size_t i, size_t *recs)
{
	uint64_t insns = 0, ret = s->ret_prev, k, v;
	/* (the thread's in locals: row_later()'s stores could be to them, for the compiler) */
	uint32_t over = t->over, group = t->group, calls = 0, took = 0;
	bool deep = t->depth >= REPORT_DEPTH_MAX;

	if (!s->a_noted)
		note_a_time(s);
	sc_group_is(s, group);
	while (i < len) {
		size_t at = i + 1;

		if (data[i] == T_CALLV ? !deep : data[i] != T_RETTOP || !over)
			break;
		if (at < len && data[at] < 0x80)
			k = data[at++];
		else if (!get_varint(data, len, &at, &k) || k > UINT32_MAX)
			break;
		if (data[i] == T_CALLV) {
			struct aslot *a;
			uint32_t n, func;
			uint16_t to;

			if (len - at < sizeof(to))
				break;
			memcpy(&to, data + at, sizeof(to));
			at += sizeof(to);
			if ((!get_varint8(data, len, &at, &v) && !get_varint(data, len, &at, &v)) ||
			    to >= ADDR_SLOTS)
				break;
			ret += (v >> 1) ^ -(v & 1);
			calls++;
			over++;
			/* (a call's return address is never UINT64_MAX: not an interrupt's) */
			func = NONE;
			if (!s->sc[to]) {
				a = &s->aslots[to];
				if (a->group == group && group != NONE)
					func = a->func;
				else
					func = aslot_func(s, group, a, &n);
			}
			sc_take(s, to, func);
		} else {
			over--;
		}
		insns += k;
		i = at;
		took++;
	}
	*recs += took;
	t->over = over;
	s->calls += calls;
	s->deep += calls;
	s->ret_prev = ret;
	if (calls)
		a_clock(s, t);
	else if (s->a_has_time && s->a_time > t->last_time)
		t->last_time = s->a_time;
	if (insns)
		account(s, insns);
	return i;
}

void report_filter(struct dout *o, const uint8_t *data, size_t len)
{
	struct rstate *s = ((struct report_state *)o->state)->s;
	struct ahead h = { 0 };
	size_t i = 0, recs = 0, adefs = 0;
	bool on;

	if (!s)
		return;
	on = s->ahead_on;
	for (int k = 0; on && k < PREFETCH_FAR; k++)
		ahead_step(s, &h, data, len, 0);
	for (; i < len; recs++) {
		struct prec p;
		size_t run = i;

		if (on)
			ahead_step(s, &h, data, len, i);

		/*
		 * T_CALLV and T_RETTOP, the most of a trace's records: what the branch below
		 * does for them, without its struct prec; note_time() and the clock see each
		 * time T_TIME says once (they keep nothing else of it).
		 */
		if (data[i] == T_CALLV || data[i] == T_RETTOP) {
			size_t at = i + 1;
			uint64_t k, v;
			struct thr *t;

			if (at < len && data[at] < 0x80)
				k = data[at++];
			else if (!get_varint(data, len, &at, &k) || k > UINT32_MAX)
				break;
			if (data[i] == T_CALLV) {
				uint64_t ret;
				uint32_t n, func;
				struct aslot *a;
				uint16_t to;

				if (len - at < sizeof(to))
					break;
				memcpy(&to, data + at, sizeof(to));
				at += sizeof(to);
				if (!get_varint8(data, len, &at, &v) &&
				    !get_varint(data, len, &at, &v))
					break;
				if (to >= ADDR_SLOTS)
					break;
				s->ret_prev += (v >> 1) ^ -(v & 1);
				if (k)
					account(s, k);
				if (!s->a_noted)
					note_a_time(s);
				t = current(s);
				a = &s->aslots[to];
				if (a->group == t->group && t->group != NONE) {
					n = a->sym;
					func = a->func;
				} else {
					func = aslot_func(s, t->group, a, &n);
				}
				a_clock(s, t);
				s->calls++;
				ret = s->ret_prev ? s->ret_prev : UINT64_MAX - 1;
				i = at;
				/* A T_RETTOP next that closes this call: a leaf (above). */
				if (i + 1 < len && data[i] == T_RETTOP && data[i + 1] < 0x80 &&
				    !t->over && t->depth < REPORT_DEPTH_MAX && ret != UINT64_MAX) {
					if (on)
						ahead_step(s, &h, data, len, i);
					recs++;
					leaf(s, t, func, n, s->a_has_time, data[i + 1]);
					i += 2;
					continue;
				}
				if (t->depth >= REPORT_DEPTH_MAX && ret != UINT64_MAX) {
					/* past the bound: by its slot, as over_run() counts */
					sc_group_is(s, t->group);
					t->over++;
					s->deep++;
					sc_take(s, to, func);
				} else {
					push(s, t, func, n, ret, s->a_has_time);
				}
				/*
				 * A T_RETTOP next (a leaf call) at once: its time is this call's,
				 * its thread this one (what the T_RETTOP below does, less what
				 * this call did already).
				 */
				if (i < len && data[i] == T_RETTOP && (t->over || (t->depth &&
				    t->st[t->depth - 1].ret != UINT64_MAX))) {
					at = i + 1;
					if (at < len && data[at] < 0x80)
						k = data[at++];
					else if (!get_varint(data, len, &at, &k) || k > UINT32_MAX)
						continue;
					if (on)
						ahead_step(s, &h, data, len, i);
					recs++;
					ret_top(s, t, k);
					i = at;
				}
				if (t->over)
					i = over_run(s, t, data, len, i, &recs);
				continue;
			}
			/* (a return to no call the chunk saw: not what a chunk writes) */
			t = current(s);
			if (!t->over && (!t->depth || t->st[t->depth - 1].ret == UINT64_MAX))
				break;
			if (!s->a_noted)
				note_a_time(s);
			if (s->a_has_time && s->a_time > t->last_time)
				t->last_time = s->a_time;
			ret_top(s, t, k);
			i = at;
			if (t->over)
				i = over_run(s, t, data, len, i, &recs);
			continue;
		}
		if (data[i] == T_SUM) {
			size_t n = fold_sum(s, data, len, i);

			if (!n)
				break;
			i += n;
			continue;
		}
		while (run < len && data[run] == T_INSN)
			run++;
		if (run > i) {
			account(s, run - i);
			i = run;
			continue;
		}
		if (data[i] == T_FARRET) {
			account(s, 1);
			far_return(s);
			i++;
			continue;
		}
		if (data[i] == T_RUN || data[i] == T_RUNFAR) {
			uint32_t k;

			if (len - i < 1 + sizeof(k))
				break;
			memcpy(&k, data + i + 1, sizeof(k));
			account(s, k);
			if (data[i] == T_RUNFAR)
				far_return(s);
			i += 1 + sizeof(k);
			continue;
		}
		if (data[i] == T_DEF || data[i] == T_ADEF) {
			size_t n;

			adefs += data[i] == T_ADEF;
			n = data[i] == T_DEF ? take_def(s, data, len, i) : take_adef(s, data, len, i);
			if (!n)
				break;
			i += n;
			continue;
		}
		if (data[i] == T_TIME) {
			struct ptime t;

			if (len - i < 1 + sizeof(t))
				break;
			memcpy(&t, data + i + 1, sizeof(t));
			s->a_has_time = t.has_time;
			s->a_time = t.time;
			s->a_noted = false;
			i += 1 + sizeof(t);
			continue;
		}
		/*
		 * T_CALLV0, T_RETA (and T_RETN: a run before it): as T_CALL and T_RET (below)
		 * with the functions at the slots, the time T_TIME said (T_CALLV and T_RETTOP
		 * went above).
		 */
		if (data[i] == T_CALLV0 || data[i] == T_RETA || data[i] == T_RETN) {
			uint8_t tag = data[i];
			bool call = tag == T_CALLV0;
			size_t at = i + 1;
			uint16_t from = 0, to = 0;
			uint64_t addr = 0, k = 0;

			if (call) {
				if (!get_varint(data, len, &at, &k) || k > UINT32_MAX ||
				    len - at < sizeof(to))
					break;
				memcpy(&to, data + at, sizeof(to));
				at += sizeof(to);
				if (!get_varint(data, len, &at, &addr))
					break;
			} else {
				struct preta x;

				if (tag == T_RETN) {
					uint32_t n;

					if (len - at < sizeof(n))
						break;
					memcpy(&n, data + at, sizeof(n));
					at += sizeof(n);
					k = n;
				}
				if (len - at < sizeof(x))
					break;
				memcpy(&x, data + at, sizeof(x));
				at += sizeof(x);
				from = x.from;
				to = x.to;
				addr = x.b;
			}
			if (from >= ADDR_SLOTS || to >= ADDR_SLOTS)
				break;
			if (call)
				s->ret_prev = addr;
			if (k)
				account(s, k);
			memset(&p, 0, sizeof(p));
			p.kind = call ? P_CALL : P_RET;
			p.has_time = s->a_has_time;
			p.time = s->a_time;
			if (call)
				p.a = addr;
			else
				p.b = addr;
			note_time(s, &p);
			/* (a call sets it too, in on_call_row(), to what this sets) */
			if (!s->clock_known && p.has_time && !s->rc->clock_insns) {
				s->clock_known = true;
				s->clock_time = true;
			}
			if (call)
				on_call(s, &p, NULL, &s->aslots[to]);
			else if (!on_ret_match(s, &p))
				on_ret_unmatched(s, NULL, NULL, &s->aslots[from], &s->aslots[to]);
			i = at;
			continue;
		}
		if (data[i] == T_CALL) {
			struct pcall c;

			if (len - i < 1 + sizeof(c))
				break;
			memcpy(&c, data + i + 1, sizeof(c));
			if (c.name >= DEF_MAX || c.obj >= DEF_MAX)
				break;
			memset(&p, 0, sizeof(p));
			p.kind = P_CALL;
			p.has_time = c.has_time;
			p.time = c.time;
			p.a = c.a;
			note_time(s, &p);
			{
				struct fref e = { .how = how_of(c.how), .base = s->defs[c.name],
						  .obj = s->defs[c.obj], .off = c.off };

				on_call(s, &p, &e, NULL);
			}
			i += 1 + sizeof(c);
			continue;
		}
		if (data[i] == T_RET) {
			struct pret x;

			if (len - i < 1 + sizeof(x))
				break;
			memcpy(&x, data + i + 1, sizeof(x));
			if (x.from >= DEF_MAX || x.to >= DEF_MAX || x.from_obj >= DEF_MAX ||
			    x.to_obj >= DEF_MAX)
				break;
			memset(&p, 0, sizeof(p));
			p.kind = P_RET;
			if (!s->clock_known && x.has_time && !s->rc->clock_insns) {
				s->clock_known = true;
				s->clock_time = true;
			}
			p.has_time = x.has_time;
			p.time = x.time;
			p.b = x.b;
			note_time(s, &p);
			if (!on_ret_match(s, &p)) {
				struct fref from = { .how = how_of(x.how & 3), .base = s->defs[x.from],
						     .obj = s->defs[x.from_obj], .off = x.from_off };
				struct fref to = { .how = how_of(x.how >> 2), .base = s->defs[x.to],
						   .obj = s->defs[x.to_obj], .off = x.to_off };

				on_ret_unmatched(s, &from, &to, NULL, NULL);
			}
			i += 1 + sizeof(x);
			continue;
		}
		if (data[i] != T_REC || len - i < 1 + sizeof(p))
			break;
		memcpy(&p, data + i + 1, sizeof(p));
		if (len - i - 1 - sizeof(p) < (size_t)p.len1 + p.len2 + p.len3 + p.len4)
			break;
		{
			char s1[NAME_LEN + 1], s2[NAME_LEN + 1], s3[NAME_LEN + 1], s4[NAME_LEN + 1];
			const char *d = (const char *)data + i + 1 + sizeof(p);

			if (p.len1 > NAME_LEN || p.len2 > NAME_LEN || p.len3 > NAME_LEN ||
			    p.len4 > NAME_LEN)
				break;
			memcpy(s1, d, p.len1);
			s1[p.len1] = '\0';
			memcpy(s2, d + p.len1, p.len2);
			s2[p.len2] = '\0';
			memcpy(s3, d + p.len1 + p.len2, p.len3);
			s3[p.len3] = '\0';
			memcpy(s4, d + p.len1 + p.len2 + p.len3, p.len4);
			s4[p.len4] = '\0';
			on_rec(s, &p, s1, s2, s3, s4);
		}
		i += 1 + sizeof(p) + p.len1 + p.len2 + p.len3 + p.len4;
	}
	rows_now(s);
	rlog_now(s);
	/* The next buffer looks ahead where this one's T_ADEFs were worth it. */
	s->ahead_on = report_ahead_wanted(adefs, recs);
}

void report_begin(struct dout *o, const struct decode_config *cfg)
{
	struct report_state *rs = o->state;
	struct rstate *s = calloc(1, sizeof(*s));

	rs->s = s;
	if (!s)
		return;
	s->rc = cfg->report;
	s->nr_streams = cfg->nr_streams;
	s->nodes_on = s->rc->view == REPORT_FOLDED;
	for (size_t i = 0; i < ADDR_SLOTS; i++)
		s->aslots[i].group = NONE;
	s->sc_group = NONE;
	s->ahead_on = true;
	s->unknown = sym_str(s, "[unknown]");
	s->stream_name = intern_str(s, "");
}

void report_free(struct rstate *s)
{
	streams_end(s);
	/*
	 * the rows' own allocations: histograms (s->nhist rows), big durations (s->nbig at
	 * most) and outliers (any row)
	 */
	for (uint32_t i = 0, hists = 0, bigs = 0;
	     i < s->nfuncs && (hists < s->nhist || bigs < s->nbig || s->rc->outliers); i++) {
		hists += !!s->funcs[i].d.hist;
		bigs += !!s->funcs[i].d.big;
		free(s->funcs[i].d.hist);
		free(s->funcs[i].d.big);
		free(s->funcs[i].out);
	}
	while (s->xblk) {
		struct xblk *b = s->xblk;

		s->xblk = b->next;
		free(b);
	}
	while (s->strblk) {
		struct strblk *b = s->strblk;

		s->strblk = b->next;
		free(b);
	}
	free(s->str);
	free(s->strtab);
	free(s->str_sym);
	free(s->sym_name);
	free(s->sym_obj);
	free(s->sym_row);
	map_free(&s->symmap);
	if (s->capfuncs >= FUNCS_MAPPED)
		munmap(s->funcs, (size_t)s->capfuncs * sizeof(*s->funcs));
	else
		free(s->funcs);
	free(s->fstack);
	free(s->nodes);
	map_free(&s->funcmap);
	map_free(&s->nodemap);
	free(s);
}
