/* SPDX-License-Identifier: MIT */
/*
 * Ordered output for decoders that run in parallel. Each piece of work (a
 * chunk of a trace) writes into its own sink; the pieces reach the real
 * output (a struct dout: a file descriptor) in their order, whatever order
 * they finish in:
 *
 * - a sink keeps its newest bytes in memory; what it lets go of before its
 *   turn stays in memory while every sink of the run together holds no more
 *   than the run's bound (struct dbudget), and beyond the bound goes to a
 *   temporary file (memory stays bounded however long the trace); after its
 *   turn it goes straight to the output. With the budget's wait_at, a sink
 *   before its turn that would take the memory held past it waits instead,
 *   until what the merge passed on is given back or its turn comes;
 * - dsink_promote() gives a sink its turn: what it let go of so far reaches
 *   the output (the sink's writer goes on meanwhile), and so will everything
 *   after; or dsink_turn() does, and the output stays the merge's to write
 *   (dsink_pass()) until dsink_promote(): the writer only hands its buffers
 *   over, holding at most DSINK_TURN_HOLD bytes not yet passed on;
 * - a sink can take back what it has not let go of (dsink_truncate()): a
 *   chunk's last instructions belong to the next chunk.
 *
 * An output can have a filter that turns what sinks write (records) into
 * what the file gets (text, JSON); records are never split between two
 * hand-overs, so the filter always sees whole ones.
 */
#ifndef PTC_DSINK_H
#define PTC_DSINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dout;

/* Turn @len bytes of whole records into output through dout_write(). */
typedef void dout_filter_fn(struct dout *o, const uint8_t *data, size_t len);

struct dsink;
/*
 * Turn @len bytes of whole records a sink lets go of before its turn into what the
 * output's unframe filter takes (into dsink.cbuf: dsink_conv_room()), in the writer's
 * thread: 0, 1 when it leaves them records (for the filter), or -ENOMEM.
 */
typedef int dout_convert_fn(struct dsink *s, const uint8_t *data, size_t len);

/* What sinks before their turn may hold in memory, all together. */
struct dbudget {
	uint64_t bound;		/* bytes */
	uint64_t held;		/* now (atomic) */
	uint64_t peak;		/* the most held at once (atomic) */
	uint64_t spilled;	/* bytes that went to temporary files (atomic) */
	/*
	 * Bytes sinks let go of before their turn and kept in memory, and the sizes of the
	 * buffers that held them (atomic, for the run): what the bytes a chunk prints take of
	 * the waiting output (the walk of bench/decode, --insn: 0.77 MB in each 1.25 MiB).
	 */
	uint64_t gave, gave_size;
	/*
	 * 0, or what sinks before their turn hold at most before their writers wait (for
	 * the merge to pass some on, or for their turn): below the bound, so that nothing
	 * reaches a file while the output's reader keeps up, and the memory is what this
	 * says however long the trace. dbudget_stop() ends the waits.
	 */
	uint64_t wait_at;
	/*
	 * The text that references held in memory stand for (dsink_ref()), for the merge to
	 * make (atomic): writers write text themselves past wait_at of it.
	 */
	uint64_t ref_held;
	bool stop;
	pthread_mutex_t lock;
	/*
	 * Two waits, each woken only while someone waits in it (the counts, under the lock):
	 * @cond the merge's (dbudget_wait(): a sink at its turn let go of bytes, a chunk's
	 * end), @room the writers' (memory given back, a sink's turn). One for both woke
	 * every thread at each hand-over, and the waits that found nobody still took the
	 * lock: -J 2 --calls on the walk of bench/decode made 4,863 futex calls, 2,486 of
	 * them the lock's.
	 */
	pthread_cond_t cond;
	pthread_cond_t room;
	unsigned waiting, waiting_room;
	struct dblock *pool;	/* buffers passed on, for sinks to write into again */
	unsigned nr_pool;
	uint64_t pool_bytes;	/* their sizes */
};

void dbudget_init(struct dbudget *b, uint64_t bound);
void dbudget_destroy(struct dbudget *b);
/* No writer waits any longer (the merge stopped): what is over the bound goes to files. */
void dbudget_stop(struct dbudget *b);
/* Wake whoever waits in dbudget_wait(), if any does: what it waits for may have come. */
void dbudget_kick(struct dbudget *b);
/*
 * Wait until @ready(@arg) (the budget's lock held), the budget stops or @ns pass: false
 * when the time ran out. Sinks at their turn (dsink_turn()) kick as they let go of bytes.
 */
bool dbudget_wait(struct dbudget *b, bool (*ready)(void *), void *arg, uint64_t ns);

struct dblock;

struct dout {
	int fd;
	struct dbudget *budget;	/* NULL: nothing kept in memory before its turn */
	uint8_t *buf;
	size_t len, cap;
	int err;		/* the first write error (negative errno), 0 while none */
	dout_filter_fn *filter;	/* NULL: bytes as they are */
	void *state;		/* the filter's */
	size_t sink_cap;	/* the buffer a sink last let go of whole (atomic) */
	size_t conv_len;	/* the text (dsink.cbuf) a sink last handed over (atomic) */
	/*
	 * NULL, or: what a sink lets go of while its writer does not write to the file
	 * itself may be turned by @convert in the writer's thread, and what it made goes
	 * through @unframe at the merge, not @filter (-J 2 --calls: a worker prints its
	 * lines once it knows the depth its chunk started at). @seed: at dsink_turn(), what
	 * the output's state says for @convert from then on (dsink.seed).
	 */
	dout_convert_fn *convert;
	dout_filter_fn *unframe;
	uint64_t (*seed)(struct dout *o);
};

struct dsink {
	pthread_mutex_t lock;
	struct dout *out;	/* NULL: a sink that keeps nothing */
	uint8_t *buf;
	size_t len, cap;
	uint64_t base;		/* how many bytes the sink let go of before buf[0] */
	struct dblock *head, *tail;	/* what it let go of before its turn, in memory */
	int spill;		/* temporary file for what it let go of before its turn, or -1 */
	bool spilling;		/* what comes next goes after the file, not to memory */
	bool direct;		/* its turn came: let go of means written */
	bool turn;		/* its turn came: let go of means for the merge to pass on */
	bool cold;		/* the writer's: not yet seen direct (dsink_room()'s hint) */
	uint64_t own;		/* bytes let go of since the merge last took them (atomic) */
	uint64_t seen;		/* the writer's: its position at the last dsink_due() */
	size_t step;		/* the writer's: the most it wrote between two dsink_due() */
	int err;
	/* The output's convert: what it made of the last bytes let go of, its own state. */
	uint8_t *cbuf;
	size_t clen, ccap;
	uint64_t conv[4];
	uint64_t seed;		/* dout.seed's, once seeded (atomic) says so */
	bool seeded;
	/*
	 * The writer's references before its turn (dsink_ref()): whether it may write them
	 * (an output with neither filter nor convert), where the bytes with the last one end
	 * (a stream position: what was let go of below it is passed on through the references),
	 * and the text they stand for beyond their own bytes.
	 */
	bool ref_ok;
	uint64_t ref_end;
	uint64_t ref_text;
	uint64_t ref_kept;	/* of ref_text, what is in blocks handed over */
};

int dout_init(struct dout *o, int fd, dout_filter_fn *filter, void *state);
/* Bytes for the file (filters call this). */
void dout_write(struct dout *o, const void *p, size_t len);
/* Everything buffered to the file; returns dout's error. */
int dout_flush(struct dout *o);
void dout_destroy(struct dout *o);

void dsink_init(struct dsink *s, struct dout *out);
void dsink_destroy(struct dsink *s);

uint8_t *dsink_grow(struct dsink *s, size_t n);
/*
 * How far past its end dsink_room() asks for a sink's buffer to be written (prefetchw).
 * Before its turn a sink writes into a buffer the merge passed on a while ago, out of the
 * writer's cache: each new line was read from memory as a store reached it, the stores
 * waited in the store buffer and the decoder behind them (the loop's -J 2 --insn:
 * commit() 2,435 profile samples against 1,061 at -J 1). Asked for this far ahead, the
 * lines are there when the text comes (4 KiB: 0.85x that run's CPU, 1 KiB 0.89x, 8 KiB
 * as 4 KiB). At its turn the buffer is the writer's own, in its cache: no hint (-J 1
 * --branches 2 % more CPU with it).
 */
#define DSINK_AHEAD 4096
/* The hint: the line DSINK_AHEAD past @end asked for, to be written (past a buffer: no fault). */
static inline void dsink_ahead(const uint8_t *end)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw (%0)" : : "r"((uintptr_t)end + DSINK_AHEAD));
#else
	(void)end;
#endif
}
/*
 * Room for @n more bytes at the end: a pointer to write them to, or NULL (out of memory,
 * which the sink's err then holds).
 * Inline: the renderers ask for it once a line. Cold, two lines are asked for: --insn's
 * fast path asks once a block, and the loop's blocks' text is two lines long or so (130
 * bytes), so that one line in two came unasked (-J 2 --insn, two against one: the loop's
 * CPU 0.986x, 0.977-1.015, 7 pairs; the walk's, whose blocks are longer, 1.004x).
 */
static inline uint8_t *dsink_room(struct dsink *s, size_t n)
{
	if (__builtin_expect(s->len + n <= s->cap, 1)) {
		if (s->cold) {
			dsink_ahead(s->buf + s->len);
			dsink_ahead(s->buf + s->len + 64);
		}
		return s->buf + s->len;
	}
	return dsink_grow(s, n);
}
static inline void dsink_commit(struct dsink *s, size_t n)
{
	s->len += n;
}
void dsink_put(struct dsink *s, const void *p, size_t n);
/*
 * A reference to @len bytes of text at @t that stay as they are until the run ends
 * (insnblk_shared's lines), written in place of the text by a writer before its turn
 * (dsink_ref_ok()): a zero byte, the pointer, the length. The text is made where the bytes
 * are passed on to the output, into its buffer: the worker ahead wrote each line into
 * the waiting output's memory, out of its cache. The zero byte marks a reference because
 * nothing else written to such a sink holds one: --insn's lines and the renderers' event
 * lines are text (C strings, formatted). A writer of raw bytes there would need another mark.
 */
#define DSINK_REF_LEN 13
static inline bool dsink_ref_ok(const struct dsink *s)
{
	const struct dbudget *b;

	if (!s->ref_ok || __atomic_load_n(&s->direct, __ATOMIC_RELAXED))
		return false;
	/* The merge, one thread, makes the text of all the workers ahead: not past a mark. */
	b = s->out->budget;
	return __atomic_load_n(&b->ref_held, __ATOMIC_RELAXED) < b->wait_at;
}
static inline bool dsink_ref(struct dsink *s, const char *t, size_t len)
{
	uint8_t *p = dsink_room(s, DSINK_REF_LEN);
	uint32_t n = (uint32_t)len;

	if (!p)
		return false;
	p[0] = 0;
	__builtin_memcpy(p + 1, &t, 8);
	__builtin_memcpy(p + 9, &n, 4);
	s->len += DSINK_REF_LEN;
	s->ref_end = s->base + s->len;
	s->ref_text += len - DSINK_REF_LEN;
	return true;
}
/*
 * Whether the writer lets go of what it holds now (a place where it may, dsink_flush()):
 * past @at bytes; but before its turn, where the output has neither filter nor convert
 * (--insn, --branches: handed over whole buffers, which the waiting output counts by
 * their size), only once the next stretch as long as the longest so far (the fast path's
 * PSB segment: 0.5 MB of the loop's --insn text) might not fit beside what it holds.
 * Let go of at @at, the buffers the worker ahead handed over held 0.38 (the loop's -J 2
 * --insn) and 0.59 (the walk's) of their size: its 16 MiB mark, 6 and 9 MB of text,
 * was met a third of the way into a 20 MB chunk, and it waited there for its turn.
 */
static inline bool dsink_due(struct dsink *s, size_t at)
{
	uint64_t pos = s->base + s->len;
	size_t step = pos > s->seen ? (size_t)(pos - s->seen) : 0;

	s->seen = pos;
	if (step > s->step)
		s->step = step;
	if (s->len <= at)
		return false;
	if (!s->out || s->out->filter || s->out->convert || !s->out->budget ||
	    __atomic_load_n(&s->direct, __ATOMIC_RELAXED))
		return true;
	return s->len + s->step + s->step / 4 > s->cap;
}

/* For dout.convert: room for @n more bytes of what it makes, or NULL (out of memory). */
uint8_t *dsink_conv_grow(struct dsink *s, size_t n);
static inline uint8_t *dsink_conv_room(struct dsink *s, size_t n)
{
	if (__builtin_expect(s->clen + n <= s->ccap, 1))
		return s->cbuf + s->clen;
	return dsink_conv_grow(s, n);
}
/* dout.seed's value for this sink's chunk, once dsink_turn() gave it (a lockless look). */
static inline bool dsink_seeded(const struct dsink *s, uint64_t *seed)
{
	if (!__atomic_load_n(&s->seeded, __ATOMIC_ACQUIRE))
		return false;
	*seed = s->seed;
	return true;
}

/* The position after the last byte written: marks for dsink_truncate() and dsink_flush(). */
static inline uint64_t dsink_pos(const struct dsink *s)
{
	return s->base + s->len;
}

/*
 * What the sink let go of so far, read from another thread than its writer's (a lockless
 * look, as fresh as the writer's last dsink_flush()): how far its chunk has come.
 */
static inline uint64_t dsink_let_go(const struct dsink *s)
{
	return __atomic_load_n(&s->base, __ATOMIC_RELAXED);
}

/* Forget what was written from @pos on (@pos must not be before what was let go of). */
void dsink_truncate(struct dsink *s, uint64_t pos);
/* Let go of the bytes before @upto (a record boundary). Returns 0 or a negative errno. */
int dsink_flush(struct dsink *s, uint64_t upto);
/*
 * Its turn: what it let go of reaches the output; from now on it writes straight there.
 * The sink's writer may go on meanwhile (from another thread).
 */
int dsink_promote(struct dsink *s);

/*
 * A sink at its turn (dsink_turn()): its writer waits while the merge has not taken
 * DSINK_TURN_HOLD bytes it let go of (1 MiB: it waited whenever the merge was not
 * scheduled within a millisecond), and wakes the merge once DSINK_TURN_PASS wait: each
 * buffer the decoder flushes (dec_records.c), read by the merge soon after.
 */
#define DSINK_TURN_HOLD (8u << 20)
#define DSINK_TURN_PASS (256u << 10)
/*
 * Its turn, for the merge to write: what it lets go of from now on, and what it let go
 * of before, is passed on by dsink_pass() (the merge's thread, not the writer's) until
 * dsink_promote(). With -J 2 and more the workers then decode only, and one thread (the
 * merge) turns records into text: the same work each, none waits for the other's filter.
 */
void dsink_turn(struct dsink *s);
/* A sink at its turn: what it let go of so far reaches the output. 0 or the error. */
int dsink_pass(struct dsink *s);
/* DSINK_TURN_PASS bytes let go of and not yet passed on (a lockless look). */
static inline bool dsink_turn_ready(const struct dsink *s)
{
	return __atomic_load_n(&s->own, __ATOMIC_ACQUIRE) >= DSINK_TURN_PASS;
}

/* The calling thread's waits in a sink's writer (wait_room()), and their wall time. */
void dsink_thread_waits(uint64_t *n, uint64_t *ns);

#endif
