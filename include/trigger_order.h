/* SPDX-License-Identifier: MIT */
/*
 * Trigger fires put in time order across reads, for trigger.c. The backends'
 * rings are read one after the other, so a fire written to a ring just after
 * we read it comes in the next read, older than fires of other rings read
 * now. Fires are therefore held here until a watermark says that no fire
 * still to come can be older (the caller takes it before reading the rings,
 * minus what a fire can be older than its write), then released in time
 * order, each trigger's limit applied in that order. Plain data, no kernel
 * call: the unit tests drive it with fires of their own.
 */
#ifndef PTC_TRIGGER_ORDER_H
#define PTC_TRIGGER_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "trigger_backend.h"

/* A watermark for trigger_order_release() that releases every fire held (the last read). */
#define TRIGGER_ORDER_ALL UINT64_MAX

struct fire_vec {
	struct trigger_fire *f;
	size_t off, nr, cap;	/* f[off..nr) are in use */
};

struct trigger_order {
	struct fire_vec held;	/* read, younger than the watermark: any order */
	struct fire_vec ready;	/* released in time order, not yet taken */
	uint64_t released;	/* the highest watermark so far: every fire before it is out */
	unsigned int nr;	/* triggers: fires of a higher index are dropped */
	uint64_t limit[TRIGGER_MAX], fires[TRIGGER_MAX], late[TRIGGER_MAX];
	uint64_t kept[TRIGGER_MAX];	/* the youngest fire released of each */
	int err;		/* -ENOMEM from a sink, until trigger_order_error() */
};

/* Called when a release reaches trigger @idx's limit: its last fire is released. */
typedef void (*trigger_reached_fn)(void *ctx, unsigned int idx);

/* Trigger @idx (below TRIGGER_MAX) fires at most @limit times (0: no limit). */
void trigger_order_set_limit(struct trigger_order *o, unsigned int idx, uint64_t limit);
/* A trigger_sink_fn (@ctx: the order): holds the fire. */
void trigger_order_sink(void *ctx, const struct trigger_fire *f);
/*
 * Release, in time order, every held fire older than @before under its
 * trigger's limit (fires past it are dropped); @reached (may be NULL) hears of
 * each limit reached. A fire older than an earlier watermark (its writer was
 * held up longer than the caller's margin) is released at once and counted
 * late: it may come after younger fires already taken. One past the limit
 * that is older than a fire the limit kept is counted late too: the limit
 * kept the wrong one.
 */
void trigger_order_release(struct trigger_order *o, uint64_t before, trigger_reached_fn reached,
			   void *ctx);
/* Up to @max released fires, oldest first, into @out; how many. */
size_t trigger_order_take(struct trigger_order *o, struct trigger_fire *out, size_t max);
/* Fires read and not yet taken (held or released). */
size_t trigger_order_pending(const struct trigger_order *o);
/*
 * When the caller should read again, on CLOCK_MONOTONIC: 0 when nothing
 * waits, 1 (at once) when released fires wait to be taken, else the time at
 * which the oldest held fire is @margin old.
 */
uint64_t trigger_order_wake(const struct trigger_order *o, uint64_t margin);
/* The sinks' error since the last call (-ENOMEM), then 0. */
int trigger_order_error(struct trigger_order *o);
void trigger_order_free(struct trigger_order *o);

#endif
