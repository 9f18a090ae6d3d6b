// SPDX-License-Identifier: MIT
/* Trigger fires held until a watermark passes them, then released in time order under limits. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trigger_order.h"

static int push(struct fire_vec *v, const struct trigger_fire *f)
{
	if (v->nr == v->cap && v->off) {	/* room taken already: move the rest down */
		memmove(v->f, v->f + v->off, (v->nr - v->off) * sizeof(*v->f));
		v->nr -= v->off;
		v->off = 0;
	}
	if (v->nr == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		struct trigger_fire *n = realloc(v->f, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		v->f = n;
		v->cap = cap;
	}
	v->f[v->nr++] = *f;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct trigger_fire *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static void sort(struct fire_vec *v)
{
	if (v->nr - v->off > 1)	/* v->f is NULL before the first fire */
		qsort(v->f + v->off, v->nr - v->off, sizeof(*v->f), by_time);
}

void trigger_order_set_limit(struct trigger_order *o, unsigned int idx, uint64_t limit)
{
	if (idx >= TRIGGER_MAX)
		return;
	o->limit[idx] = limit;
	if (idx >= o->nr)
		o->nr = idx + 1;
}

void trigger_order_sink(void *ctx, const struct trigger_fire *f)
{
	struct trigger_order *o = ctx;

	if (push(&o->held, f))
		o->err = -ENOMEM;
}

void trigger_order_release(struct trigger_order *o, uint64_t before, trigger_reached_fn reached,
			   void *ctx)
{
	struct fire_vec *h = &o->held, *r = &o->ready;
	size_t i, tail = r->nr;
	bool resort = false;

	sort(h);
	for (i = h->off; i < h->nr && h->f[i].time < before; i++) {
		const struct trigger_fire *f = &h->f[i];
		unsigned int idx = f->idx;

		if (idx >= o->nr)
			continue;
		if (o->limit[idx] && o->fires[idx] >= o->limit[idx]) {
			/* A younger fire took its place under the limit: the wrong one was kept. */
			if (f->time < o->kept[idx])
				o->late[idx]++;
			continue;
		}
		if (f->time < o->released)
			o->late[idx]++;
		if (f->time > o->kept[idx])
			o->kept[idx] = f->time;
		/* Older than a fire released before and not yet taken: sort again. */
		if (r->nr > r->off && f->time < r->f[r->nr - 1].time && r->nr == tail)
			resort = true;
		if (push(r, f)) {
			o->err = -ENOMEM;
			break;	/* kept held: the next release tries again */
		}
		if (++o->fires[idx] == o->limit[idx] && reached)
			reached(ctx, idx);
	}
	h->off = i;
	if (h->off == h->nr)
		h->off = h->nr = 0;
	if (resort)
		sort(r);
	if (before != TRIGGER_ORDER_ALL && before > o->released)
		o->released = before;
}

size_t trigger_order_take(struct trigger_order *o, struct trigger_fire *out, size_t max)
{
	struct fire_vec *r = &o->ready;
	size_t n = r->nr - r->off < max ? r->nr - r->off : max;

	if (!n)		/* r->f is NULL before the first fire */
		return 0;
	memcpy(out, r->f + r->off, n * sizeof(*out));
	r->off += n;
	if (r->off == r->nr)
		r->off = r->nr = 0;
	return n;
}

size_t trigger_order_pending(const struct trigger_order *o)
{
	return (o->held.nr - o->held.off) + (o->ready.nr - o->ready.off);
}

uint64_t trigger_order_wake(const struct trigger_order *o, uint64_t margin)
{
	const struct fire_vec *h = &o->held;
	uint64_t oldest = UINT64_MAX;

	if (o->ready.nr > o->ready.off)
		return 1;
	for (size_t i = h->off; i < h->nr; i++)
		if (h->f[i].time < oldest)
			oldest = h->f[i].time;
	if (oldest == UINT64_MAX)
		return 0;
	/* Released once the watermark (now - margin) is past it: strictly after. */
	return oldest + margin + 1 > oldest ? oldest + margin + 1 : UINT64_MAX;
}

int trigger_order_error(struct trigger_order *o)
{
	int err = o->err;

	o->err = 0;
	return err;
}

void trigger_order_free(struct trigger_order *o)
{
	free(o->held.f);
	free(o->ready.f);
	memset(o, 0, sizeof(*o));
}
