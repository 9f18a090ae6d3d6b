// SPDX-License-Identifier: MIT
/* Ordered output for parallel decoders: memory (bounded), a temporary file, then the output. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "dsink.h"
#include "fileio.h"
#include "monotime.h"

#define DOUT_BUF (256u << 10)
/* A sink's first buffer: 80 KiB doubled, 320 KiB, what a sink flushed at 256 KiB fills. */
#define SINK_FIRST (80u << 10)
/* A first buffer's size at most, whatever the sink before let go of. */
#define SINK_FIRST_MAX (4u << 20)

/*
 * A sink's buffer (and a block's, the pool's): mapped for it and unmapped when given back,
 * so that what is given back is the kernel's again. Through malloc, the buffers that went
 * to and fro between the threads' arenas were kept there, fragmented: the peak grew with
 * the trace's length after the waiting output reached its mark (-J 2 --insn on the walk
 * of bench/decode: 28 MB at 0.2 s, 35 MB at 4.7 s; 29 MB at 4.7 s so). And each is
 * mapped whole (MAP_POPULATE): what the waiting output counts (its buffers' sizes) is
 * what is resident, from the first chunks on; else a buffer's pages came as later chunks
 * wrote further into it, and the peak grew with the run (the loop's -J 2 --insn: 15 MB
 * at 52 M instructions, 22 MB at 209 M; 27 MB at both so), and the kernel maps them in
 * one call, not a fault a page. Under ASan, malloc (and memset): its checks see the
 * writes, and its allocator maps buffers this large itself. Under TSan too: with the
 * mappings it reported races on the writes into the buffers (the loop at -J 2/4: 3 to 31
 * a run), which go from thread to thread under the pool's lock; through malloc, none.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
static void *buf_map(size_t size)
{
	void *p = malloc(size);

	return p ? memset(p, 0, size) : NULL;
}

static void *buf_remap(void *p, size_t old, size_t size)
{
	(void)old;
	return realloc(p, size);
}

static void buf_unmap(void *p, size_t size)
{
	(void)size;
	free(p);
}
#else
static void *buf_map(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void *buf_remap(void *p, size_t old, size_t size)
{
	if (!p)
		return buf_map(size);
	p = mremap(p, old, size, MREMAP_MAYMOVE);
	return p == MAP_FAILED ? NULL : p;
}

static void buf_unmap(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}
#endif

/* Bytes a sink let go of before its turn, kept in memory: its buffer, handed over. */
struct dblock {
	struct dblock *next;
	uint8_t *buf;
	size_t len, size;	/* size: what it counts against the bound */
	bool conv;		/* what the output's convert made (else records) */
	bool refs;		/* may hold references (dsink_ref()) */
	uint64_t ref_text;	/* the text they stand for beyond their bytes (dbudget.ref_held) */
};

static bool budget_take(struct dbudget *b, size_t n)
{
	uint64_t held = __atomic_add_fetch(&b->held, n, __ATOMIC_RELAXED);
	uint64_t peak = __atomic_load_n(&b->peak, __ATOMIC_RELAXED);

	if (held > b->bound) {
		__atomic_sub_fetch(&b->held, n, __ATOMIC_RELAXED);
		return false;
	}
	while (held > peak && !__atomic_compare_exchange_n(&b->peak, &peak, held, true,
							    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return true;
}

/* @n bytes a sink let go of before its turn, held in buffers of @size bytes. */
static void budget_gave(struct dbudget *b, size_t n, size_t size)
{
	__atomic_add_fetch(&b->gave, n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&b->gave_size, size, __ATOMIC_RELAXED);
}

/* Buffers kept for reuse: a fresh one would cost the kernel its pages each time. */
#define POOL_MAX 1024

void dbudget_init(struct dbudget *b, uint64_t bound)
{
	memset(b, 0, sizeof(*b));
	b->bound = bound;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	pthread_cond_init(&b->room, NULL);
}

void dbudget_stop(struct dbudget *b)
{
	pthread_mutex_lock(&b->lock);
	__atomic_store_n(&b->stop, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&b->cond);
	pthread_cond_broadcast(&b->room);
	pthread_mutex_unlock(&b->lock);
}

/*
 * Wake the waiters of @cond if @waiting says there are any. The fence pairs with
 * wait_enter()'s: either the waiter sees what the caller changed before it sleeps, or the
 * caller sees the waiter (and the lock orders the broadcast after its sleep).
 */
static void kick(struct dbudget *b, pthread_cond_t *cond, const unsigned *waiting)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(waiting, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&b->lock);
	pthread_cond_broadcast(cond);
	pthread_mutex_unlock(&b->lock);
}

/* A waiter counted (the budget's lock held), before it looks at what it waits for. */
static void wait_enter(unsigned *waiting)
{
	__atomic_store_n(waiting, *waiting + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void wait_leave(unsigned *waiting)
{
	__atomic_store_n(waiting, *waiting - 1, __ATOMIC_RELAXED);
}

void dbudget_kick(struct dbudget *b)
{
	kick(b, &b->cond, &b->waiting);
}

/* Wake the writers waiting for room (wait_room()), if any do. */
static void kick_room(struct dbudget *b)
{
	kick(b, &b->room, &b->waiting_room);
}

/*
 * A writer that waits for memory given back waits until a quarter of the mark of it is free beside
 * its buffer, and blocks given back wake it only then: woken at each block, it wrote one
 * buffer more and waited again, a hand-over each (-J 2 --calls on the walk of
 * bench/decode: 360 wakes a worker).
 */
static uint64_t room_slack(const struct dbudget *b)
{
	return b->wait_at / 4;
}

bool dbudget_wait(struct dbudget *b, bool (*ready)(void *), void *arg, uint64_t ns)
{
	struct timespec ts;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)(ns / 1000000000u);
	ts.tv_nsec += (long)(ns % 1000000000u);
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&b->lock);
	wait_enter(&b->waiting);
	while (ok && !__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE) && !ready(arg))
		ok = pthread_cond_timedwait(&b->cond, &b->lock, &ts) != ETIMEDOUT;
	wait_leave(&b->waiting);
	pthread_mutex_unlock(&b->lock);
	return ok;
}

void dbudget_destroy(struct dbudget *b)
{
	while (b->pool) {
		struct dblock *next = b->pool->next;

		buf_unmap(b->pool->buf, b->pool->size);
		free(b->pool);
		b->pool = next;
	}
	pthread_cond_destroy(&b->cond);
	pthread_cond_destroy(&b->room);
	pthread_mutex_destroy(&b->lock);
}

/*
 * A block from the pool (its buffer touched already) of @size bytes at least, the largest
 * there: the sizes sinks grow to in a run change (the walk's --insn: 1.25 MiB), or NULL.
 */
static struct dblock *pool_take(struct dbudget *b, size_t size)
{
	struct dblock *blk = NULL, **pp, **best = NULL;

	pthread_mutex_lock(&b->lock);
	for (pp = &b->pool; *pp; pp = &(*pp)->next)
		if ((*pp)->size >= size && (!best || (*pp)->size > (*best)->size))
			best = pp;
	if (best) {
		blk = *best;
		*best = blk->next;
		b->nr_pool--;
		b->pool_bytes -= blk->size;
	}
	pthread_mutex_unlock(&b->lock);
	return blk;
}

/*
 * Into the pool, while it and what sinks hold before their turn come to no more than the
 * waiting output's mark and DSINK_TURN_HOLD (the smallest there makes room for a larger
 * one): before, the pool kept a mark's worth beside what was held (the walk's -J 2 --insn:
 * 32 MB held and 32 MB kept, half of them never used again). The hold is what a sink at
 * its turn holds beside the mark: without it, --calls' buffers (held over the mark) were
 * given back and mapped again each time (-J 2 on the loop of bench/decode: 1,377 buffers,
 * 117,000 page faults; 100 and 11,500 so). False: not taken.
 */
static bool pool_put(struct dbudget *b, struct dblock *blk)
{
	uint64_t keep = (b->wait_at ? b->wait_at : b->bound / 2) + DSINK_TURN_HOLD;
	struct dblock *out = NULL, **pp, **small = NULL;
	bool taken = false;
	uint64_t held = __atomic_load_n(&b->held, __ATOMIC_RELAXED);

	keep = keep > held ? keep - held : 0;
	pthread_mutex_lock(&b->lock);
	if (b->nr_pool >= POOL_MAX || b->pool_bytes + blk->size > keep) {
		for (pp = &b->pool; *pp; pp = &(*pp)->next)
			if (!small || (*pp)->size < (*small)->size)
				small = pp;
		if (small && (*small)->size < blk->size &&
		    b->pool_bytes - (*small)->size + blk->size <= keep) {
			out = *small;
			*small = out->next;
			b->nr_pool--;
			b->pool_bytes -= out->size;
		}
	}
	if (b->nr_pool < POOL_MAX && b->pool_bytes + blk->size <= keep) {
		blk->next = b->pool;
		b->pool = blk;
		b->nr_pool++;
		b->pool_bytes += blk->size;
		taken = true;
	}
	pthread_mutex_unlock(&b->lock);
	if (out) {
		buf_unmap(out->buf, out->size);
		free(out);
	}
	return taken;
}

/* A block with a buffer of @size bytes at least: from the pool, or new. */
static struct dblock *block_get(struct dbudget *b, size_t size)
{
	struct dblock *blk = pool_take(b, size);

	if (blk)
		return blk;
	blk = malloc(sizeof(*blk));
	if (blk && !(blk->buf = buf_map(size))) {
		free(blk);
		blk = NULL;
	}
	if (blk) {
		blk->size = size;
		blk->ref_text = 0;
	}
	return blk;
}

static void blocks_free(struct dsink *s, struct dblock *b)
{
	struct dbudget *bg = s->out ? s->out->budget : NULL;

	while (b) {
		struct dblock *next = b->next;

		if (bg) {
			__atomic_sub_fetch(&bg->held, b->size, __ATOMIC_RELAXED);
			if (b->ref_text)
				__atomic_sub_fetch(&bg->ref_held, b->ref_text, __ATOMIC_RELAXED);
			b->ref_text = 0;
			if (bg->wait_at && __atomic_load_n(&bg->held, __ATOMIC_RELAXED) +
					   room_slack(bg) <= bg->wait_at)
				kick_room(bg);
			if (pool_put(bg, b))
				b = NULL;
		}
		if (b) {
			buf_unmap(b->buf, b->size);
			free(b);
		}
		b = next;
	}
}

int dout_init(struct dout *o, int fd, dout_filter_fn *filter, void *state)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->filter = filter;
	o->state = state;
	o->cap = DOUT_BUF;
	o->buf = malloc(o->cap);
	return o->buf ? 0 : -ENOMEM;
}

int dout_flush(struct dout *o)
{
	if (o->len && !o->err) {
		int ret = write_all(o->fd, o->buf, o->len);

		if (ret)
			o->err = ret;
	}
	o->len = 0;
	return o->err;
}

void dout_write(struct dout *o, const void *p, size_t len)
{
	if (o->err)
		return;
	/* A big piece (a sink's buffer) is written as it is: copying it costs more. */
	if (o->len + len > o->cap || len >= o->cap / 4) {
		dout_flush(o);
		if (len >= o->cap / 4) {
			int ret = write_all(o->fd, p, len);

			if (ret)
				o->err = ret;
			return;
		}
	}
	memcpy(o->buf + o->len, p, len);
	o->len += len;
}

void dout_destroy(struct dout *o)
{
	free(o->buf);
	o->buf = NULL;
}

/* Bytes that reached their turn: through the output's filter. */
static void pass(struct dout *o, const uint8_t *p, size_t len)
{
	if (!len)
		return;
	if (o->filter)
		o->filter(o, p, len);
	else
		dout_write(o, p, len);
}

/*
 * Bytes with references (dsink_ref()) among them: the references' text in their place,
 * copied into the output's buffer where it fits. References come one after another (a
 * block's each): a search for the next only past a run of bytes of its own, and no call
 * a reference (the walk's merge: 820 of its samples in memchr() and dout_write()).
 */
static void pass_refs(struct dout *o, const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;

	while (p < end) {
		const char *t;
		uint32_t n;

		if (*p) {
			const uint8_t *z = memchr(p, 0, (size_t)(end - p));

			if (!z)
				z = end;
			dout_write(o, p, (size_t)(z - p));
			p = z;
			continue;
		}
		memcpy(&t, p + 1, 8);
		memcpy(&n, p + 9, 4);
		p += DSINK_REF_LEN;
		if (o->len + n <= o->cap && !o->err) {
			memcpy(o->buf + o->len, t, n);
			o->len += n;
		} else {
			dout_write(o, t, n);
		}
	}
}

/*
 * Bytes a sink let go of before (memory, file); @conv: its output's convert made them;
 * @refs: references may be among them.
 */
static void pass_held_bytes(struct dout *o, const uint8_t *p, size_t len, bool conv,
			    bool refs)
{
	if (len && conv)
		o->unframe(o, p, len);
	else if (refs)
		pass_refs(o, p, len);
	else
		pass(o, p, len);
}

void dsink_init(struct dsink *s, struct dout *out)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->out = out;
	s->spill = -1;
	s->cold = true;
	s->ref_ok = out && !out->filter && !out->convert && out->budget && out->budget->wait_at;
}

/*
 * The sink's buffer, at its chunk's end, into the pool with the blocks passed on: the next
 * chunk's sink writes into pages the kernel gave already (-J 2 --insn on the walk of
 * bench/decode: 25,500 page faults, 60 % of them a sink's first writes to a new buffer).
 */
static void buf_free(struct dsink *s)
{
	struct dbudget *bg = s->out ? s->out->budget : NULL;
	struct dblock *blk;

	if (bg && s->buf && (blk = malloc(sizeof(*blk)))) {
		blk->buf = s->buf;
		blk->size = s->cap;
		blk->len = 0;
		blk->ref_text = 0;
		if (pool_put(bg, blk))
			return;
		free(blk);
	}
	buf_unmap(s->buf, s->cap);
}

void dsink_destroy(struct dsink *s)
{
	blocks_free(s, s->head);
	if (s->spill >= 0)
		close(s->spill);
	buf_free(s);
	if (s->cbuf) {
		s->buf = s->cbuf;
		s->cap = s->ccap;
		buf_free(s);
	}
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
	s->spill = -1;
}

/*
 * Room for @n bytes past @len in *@buf (*@cap bytes): at first one another sink gave back
 * to @bg's pool (each doubling is new pages, and a copy), else @first doubled until they
 * fit.
 */
static uint8_t *buf_room(struct dbudget *bg, uint8_t **buf, size_t *cap, size_t len, size_t n,
			 size_t first)
{
	size_t c;
	uint8_t *b;

	if (!*cap && bg) {
		struct dblock *blk = pool_take(bg, n);

		if (blk) {
			*buf = blk->buf;
			*cap = blk->size;
			free(blk);
		}
	}
	if (len + n <= *cap)
		return *buf + len;
	for (c = *cap ? *cap : first; c < len + n; c *= 2)
		;
	b = buf_remap(*buf, *cap, c);
	if (!b)
		return NULL;
	*buf = b;
	*cap = c;
	return b + len;
}

uint8_t *dsink_grow(struct dsink *s, size_t n)
{
	/*
	 * SINK_FIRST doubled (dec_records.c flushes at 256 KiB); or at once what the
	 * output's last sink let go of in one piece (the fast path's chunks: 1.25 MiB of the
	 * walk's --insn; each doubling is new pages, and a copy).
	 */
	size_t first = SINK_FIRST;
	uint8_t *p;

	if (!s->cap && s->out) {
		size_t last = __atomic_load_n(&s->out->sink_cap, __ATOMIC_RELAXED);

		if (last > first)
			first = last < SINK_FIRST_MAX ? last : SINK_FIRST_MAX;
	}
	p = buf_room(s->out ? s->out->budget : NULL, &s->buf, &s->cap, s->len, n, first);
	/* Recorded here, so that no renderer has to: the sink's first error stays. */
	if (!p && !s->err)
		s->err = -ENOMEM;
	return p;
}

/*
 * A new text buffer (each flush hands its own over) has room at once for what the last
 * one handed over held, from the pool or mapped whole (SINK_FIRST doubled, the sizes
 * the pool has): grown from SINK_FIRST by mremap(), the
 * pages each doubling added came a fault each, and each mremap() with the other threads
 * running sent them a TLB flush (-J 2 --calls on the walk of bench/decode: 1,900 faults
 * writing the text, 60 mremap() calls).
 */
uint8_t *dsink_conv_grow(struct dsink *s, size_t n)
{
	if (!s->ccap && s->out) {
		size_t last = __atomic_load_n(&s->out->conv_len, __ATOMIC_RELAXED);

		if (n < last)
			n = last < SINK_FIRST_MAX ? last : SINK_FIRST_MAX;
	}
	return buf_room(s->out ? s->out->budget : NULL, &s->cbuf, &s->ccap, s->clen, n,
			SINK_FIRST);
}

void dsink_put(struct dsink *s, const void *p, size_t n)
{
	uint8_t *d = dsink_room(s, n);

	if (!d)
		return;
	memcpy(d, p, n);
	s->len += n;
}

void dsink_truncate(struct dsink *s, uint64_t pos)
{
	if (pos >= s->base && pos - s->base < s->len)
		s->len = (size_t)(pos - s->base);
}

/*
 * Before its turn: into the temporary file, as a frame (length, bytes) of whole records;
 * SPILL_CONV in the length: what the output's convert made.
 */
#define SPILL_CONV (1ull << 63)
#define SPILL_REFS (1ull << 62)

static int spill(struct dsink *s, const uint8_t *p, size_t len, bool conv)
{
	uint64_t n = len | (conv ? SPILL_CONV : 0) | (s->base < s->ref_end ? SPILL_REFS : 0);
	int ret;

	if (s->spill < 0) {
		const char *dir = getenv("TMPDIR");

		s->spill = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (s->spill < 0)
			return -errno;
	}
	ret = write_all(s->spill, &n, sizeof(n));
	if (!ret && s->out->budget)
		__atomic_add_fetch(&s->out->budget->spilled, len, __ATOMIC_RELAXED);
	return ret ? ret : write_all(s->spill, p, len);
}

/* @blk after what @s holds before its turn. */
static void held_append(struct dsink *s, struct dblock *blk)
{
	blk->next = NULL;
	if (s->tail)
		s->tail->next = blk;
	else
		s->head = blk;
	s->tail = blk;
}

/*
 * Before its turn, within the bound: hand the buffer (its first @n bytes) over to the
 * list, and go on in a new one. False when the bound or memory says no.
 */
static bool keep(struct dsink *s, size_t n)
{
	struct dbudget *b = s->out->budget;
	struct dblock *blk;
	uint8_t *full = s->buf;
	size_t cap = s->cap;

	if (!b || s->spilling || !budget_take(b, cap))
		return false;
	/* All of it handed over: the next write takes a buffer then (none at a chunk's end). */
	blk = n < s->len ? block_get(b, cap) : malloc(sizeof(*blk));
	if (!blk) {
		__atomic_sub_fetch(&b->held, cap, __ATOMIC_RELAXED);
		return false;
	}
	/* The block's buffer (a free one) and the sink's swap: the sink's is handed over. */
	if (n < s->len) {
		s->buf = blk->buf;
		s->cap = blk->size;
		memcpy(s->buf, full + n, s->len - n);
	} else {
		__atomic_store_n(&s->out->sink_cap, cap, __ATOMIC_RELAXED);
		s->buf = NULL;
		s->cap = 0;
	}
	blk->buf = full;
	blk->size = cap;
	blk->len = n;
	blk->conv = false;
	blk->refs = s->base < s->ref_end;
	blk->ref_text = s->ref_text - s->ref_kept;
	s->ref_kept = s->ref_text;
	if (blk->ref_text)
		__atomic_add_fetch(&b->ref_held, blk->ref_text, __ATOMIC_RELAXED);
	held_append(s, blk);
	budget_gave(b, n, cap);
	return true;
}

/*
 * Before its turn, within the bound: what convert made of @n bytes, handed over whole.
 */
static bool keep_conv(struct dsink *s, size_t n)
{
	struct dbudget *b = s->out->budget;
	struct dblock *blk;

	if (!b || s->spilling || !budget_take(b, s->ccap))
		return false;
	blk = malloc(sizeof(*blk));
	if (!blk) {
		__atomic_sub_fetch(&b->held, s->ccap, __ATOMIC_RELAXED);
		return false;
	}
	__atomic_store_n(&s->out->conv_len, s->clen, __ATOMIC_RELAXED);
	blk->buf = s->cbuf;
	blk->size = s->ccap;
	blk->len = s->clen;
	blk->conv = true;
	blk->refs = false;
	blk->ref_text = 0;
	held_append(s, blk);
	budget_gave(b, n, s->ccap);
	s->cbuf = NULL;
	s->ccap = s->clen = 0;
	return true;
}

/*
 * Whether the writer waits: before its turn, while another buffer would take what the
 * sinks hold past the budget's wait_at; at its turn for the merge (dsink_turn()),
 * while the merge has not taken DSINK_TURN_HOLD bytes it let go of.
 */
static bool must_wait(const struct dsink *s, const struct dbudget *b, uint64_t slack)
{
	if (__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&s->direct, __ATOMIC_ACQUIRE))
		return false;
	if (__atomic_load_n(&s->turn, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&s->own, __ATOMIC_ACQUIRE) > DSINK_TURN_HOLD;
	return __atomic_load_n(&b->held, __ATOMIC_RELAXED) + s->cap + slack > b->wait_at;
}

/* The calling thread's waits in wait_room(), and their wall time. */
static __thread uint64_t room_waits, room_wait_ns;

void dsink_thread_waits(uint64_t *n, uint64_t *ns)
{
	*n = room_waits;
	*ns = room_wait_ns;
}

/*
 * With the budget's wait_at: wait (must_wait()) for memory given back, the merge taking
 * what the sink let go of, or the turn (the sink's lock is not held: dsink_promote()
 * takes it).
 */
static void wait_room(struct dsink *s)
{
	struct dbudget *b = s->out->budget;
	uint64_t t0;

	if (!b || !b->wait_at || !must_wait(s, b, 0))
		return;
	t0 = monotime_ns();
	pthread_mutex_lock(&b->lock);
	wait_enter(&b->waiting_room);
	while (must_wait(s, b, room_slack(b)))
		pthread_cond_wait(&b->room, &b->lock);
	wait_leave(&b->waiting_room);
	pthread_mutex_unlock(&b->lock);
	room_waits++;
	room_wait_ns += monotime_ns() - t0;
}

/*
 * @n bytes more of the sink's own before its turn (under its lock): whether they bring it
 * to DSINK_TURN_PASS, which the merge waits for (or the chunk's end).
 */
static bool own_more(struct dsink *s, size_t n)
{
	uint64_t own = __atomic_add_fetch(&s->own, n, __ATOMIC_RELEASE);

	return s->turn && own >= DSINK_TURN_PASS && own - n < DSINK_TURN_PASS;
}

/* The buffer's first @n bytes are let go of (@ret: how), the merge kicked if @kick. */
static int let_go(struct dsink *s, size_t n, int ret, bool kick)
{
	if (kick && s->out->budget)
		dbudget_kick(s->out->budget);
	if (ret && !s->err)
		s->err = ret;
	memmove(s->buf, s->buf + n, s->len - n);
	s->len -= n;
	__atomic_store_n(&s->base, s->base + n, __ATOMIC_RELAXED);
	return s->err;
}

/* dsink_flush() of @n bytes its output's convert made into cbuf (clen). */
static int flush_conv(struct dsink *s, size_t n)
{
	size_t len = s->clen;
	int ret = 0;
	bool turn = false;

	pthread_mutex_lock(&s->lock);
	if (s->direct) {
		/* Its turn came meanwhile: nothing is held, and the output is this writer's. */
		pass_held_bytes(s->out, s->cbuf, len, true, false);
		ret = s->out->err;
	} else {
		turn = own_more(s, len);
		if (!keep_conv(s, n)) {
			ret = spill(s, s->cbuf, len, true);
			s->spilling = true;
		}
	}
	s->clen = 0;
	pthread_mutex_unlock(&s->lock);
	return let_go(s, n, ret, turn);
}

int dsink_flush(struct dsink *s, uint64_t upto)
{
	size_t n;
	int ret = 0;
	bool kick = false;

	if (!s->out || upto <= s->base)
		return s->err;
	n = (size_t)(upto - s->base);
	if (n > s->len)
		n = s->len;
	if (!n)
		return s->err;
	wait_room(s);
	/*
	 * Before its turn with a convert: turned here, in the writer's thread, outside the
	 * lock (the merge passes on what was let go of before meanwhile); the sink keeps
	 * its buffer, and what convert made is handed over.
	 */
	if (s->out->convert && !__atomic_load_n(&s->direct, __ATOMIC_ACQUIRE)) {
		int c = s->out->convert(s, s->buf, n);

		if (c < 0)
			return s->err = s->err ? s->err : c;
		if (!c)
			return flush_conv(s, n);
	}
	pthread_mutex_lock(&s->lock);
	if (s->direct) {
		s->cold = false;
		if (s->base < s->ref_end)
			pass_refs(s->out, s->buf, n);
		else
			pass(s->out, s->buf, n);
		ret = s->out->err;
	} else {
		bool turn = own_more(s, n);

		if (keep(s, n)) {
			pthread_mutex_unlock(&s->lock);
			if (turn)
				dbudget_kick(s->out->budget);
			s->len -= n;
			__atomic_store_n(&s->base, s->base + n, __ATOMIC_RELAXED);
			return s->err;
		}
		ret = spill(s, s->buf, n, false);
		s->spilling = true;
		kick = turn;
	}
	pthread_mutex_unlock(&s->lock);
	return let_go(s, n, ret, kick);
}

/* Read the temporary file back frame by frame, into the output. */
static int readback(struct dsink *s, int fd)
{
	uint8_t *buf = NULL;
	size_t cap = 0;
	int ret = 0;

	if (lseek(fd, 0, SEEK_SET) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	for (;;) {
		uint64_t n;
		bool conv, refs;
		ssize_t r = read(fd, &n, sizeof(n));

		if (!r)
			break;
		if (r != (ssize_t)sizeof(n)) {
			ret = r < 0 ? -errno : -EIO;
			break;
		}
		conv = n & SPILL_CONV;
		refs = n & SPILL_REFS;
		n &= ~(SPILL_CONV | SPILL_REFS);
		if (n > cap) {
			uint8_t *b = realloc(buf, (size_t)n);

			if (!b) {
				ret = -ENOMEM;
				break;
			}
			buf = b;
			cap = (size_t)n;
		}
		r = pread(fd, buf, (size_t)n, lseek(fd, 0, SEEK_CUR));
		if (r != (ssize_t)n || lseek(fd, (off_t)n, SEEK_CUR) < 0) {
			ret = r < 0 ? -errno : -EIO;
			break;
		}
		pass_held_bytes(s->out, buf, (size_t)n, conv, refs);
	}
	free(buf);
	close(fd);
	return ret;
}

/*
 * What the sink let go of so far is taken off it (memory first, then the file: their
 * order) and passed on without its lock: the writer goes on meanwhile, into a new list.
 * True when there was some; @direct: when there was none, the sink writes straight to
 * the output from now on.
 */
static bool pass_held(struct dsink *s, bool direct, int *ret)
{
	struct dblock *head;
	int fd;

	pthread_mutex_lock(&s->lock);
	if (!s->head && s->spill < 0) {
		if (direct)
			__atomic_store_n(&s->direct, true, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&s->lock);
		return false;
	}
	head = s->head;
	fd = s->spill;
	s->head = s->tail = NULL;
	s->spill = -1;
	s->spilling = false;
	__atomic_store_n(&s->own, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->lock);
	/* Each given back once passed on: a writer waiting for memory goes on. */
	while (head) {
		struct dblock *next = head->next;

		pass_held_bytes(s->out, head->buf, head->len, head->conv, head->refs);
		head->next = NULL;
		blocks_free(s, head);
		head = next;
	}
	if (fd >= 0) {
		int r = readback(s, fd);

		*ret = *ret ? *ret : r;
	}
	return true;
}

int dsink_promote(struct dsink *s)
{
	struct dbudget *b;
	int ret = 0;

	if (!s->out)
		return 0;
	while (pass_held(s, true, &ret))
		;
	b = s->out->budget;
	if (b && b->wait_at)
		kick_room(b);	/* its writer may wait for this */
	return ret ? ret : s->out->err;
}

void dsink_turn(struct dsink *s)
{
	if (!s->out)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->out->seed && !s->seeded) {
		s->seed = s->out->seed(s->out);
		__atomic_store_n(&s->seeded, true, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&s->turn, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->lock);
	if (s->out->budget)
		kick_room(s->out->budget);	/* its writer may wait before its turn */
}

int dsink_pass(struct dsink *s)
{
	int ret = 0;

	if (!s->out)
		return 0;
	if (pass_held(s, false, &ret) && s->out->budget)
		kick_room(s->out->budget);	/* its writer may wait for the merge */
	return ret ? ret : s->out->err;
}
