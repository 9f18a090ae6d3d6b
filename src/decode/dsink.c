// SPDX-License-Identifier: MIT
/* Ordered output for parallel decoders: memory (bounded), a temporary file, then the output. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dsink.h"
#include "fileio.h"

#define DOUT_BUF (256u << 10)

/* Bytes a sink let go of before its turn, kept in memory: its buffer, handed over. */
struct dblock {
	struct dblock *next;
	uint8_t *buf;
	size_t len, size;	/* size: what it counts against the bound */
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

/* Buffers kept for reuse: a fresh one would cost the kernel its pages each time. */
#define POOL_MAX 1024

void dbudget_init(struct dbudget *b, uint64_t bound)
{
	memset(b, 0, sizeof(*b));
	b->bound = bound;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
}

void dbudget_stop(struct dbudget *b)
{
	pthread_mutex_lock(&b->lock);
	__atomic_store_n(&b->stop, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

void dbudget_kick(struct dbudget *b)
{
	pthread_mutex_lock(&b->lock);
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
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
	while (ok && !b->stop && !ready(arg))
		ok = pthread_cond_timedwait(&b->cond, &b->lock, &ts) != ETIMEDOUT;
	pthread_mutex_unlock(&b->lock);
	return ok;
}

void dbudget_destroy(struct dbudget *b)
{
	while (b->pool) {
		struct dblock *next = b->pool->next;

		free(b->pool->buf);
		free(b->pool);
		b->pool = next;
	}
	pthread_cond_destroy(&b->cond);
	pthread_mutex_destroy(&b->lock);
}

/* A block with a buffer of @size bytes: from the pool, or new. */
static struct dblock *block_get(struct dbudget *b, size_t size)
{
	struct dblock *blk = NULL, **pp;

	pthread_mutex_lock(&b->lock);
	for (pp = &b->pool; *pp; pp = &(*pp)->next)
		if ((*pp)->size == size) {
			blk = *pp;
			*pp = blk->next;
			b->nr_pool--;
			break;
		}
	pthread_mutex_unlock(&b->lock);
	if (blk)
		return blk;
	blk = malloc(sizeof(*blk));
	if (blk && !(blk->buf = malloc(size))) {
		free(blk);
		blk = NULL;
	}
	if (blk)
		blk->size = size;
	return blk;
}

static void blocks_free(struct dsink *s, struct dblock *b)
{
	struct dbudget *bg = s->out ? s->out->budget : NULL;

	while (b) {
		struct dblock *next = b->next;

		if (bg) {
			uint64_t keep = bg->wait_at ? bg->wait_at : bg->bound / 2;

			__atomic_sub_fetch(&bg->held, b->size, __ATOMIC_RELAXED);
			pthread_mutex_lock(&bg->lock);
			if (bg->wait_at)
				pthread_cond_broadcast(&bg->cond);
			if (bg->nr_pool < POOL_MAX && bg->nr_pool * (uint64_t)b->size < keep) {
				b->next = bg->pool;
				bg->pool = b;
				bg->nr_pool++;
				b = NULL;
			}
			pthread_mutex_unlock(&bg->lock);
		}
		if (b) {
			free(b->buf);
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

void dsink_init(struct dsink *s, struct dout *out)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->out = out;
	s->spill = -1;
}

void dsink_destroy(struct dsink *s)
{
	blocks_free(s, s->head);
	if (s->spill >= 0)
		close(s->spill);
	free(s->buf);
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
	s->spill = -1;
}

uint8_t *dsink_grow(struct dsink *s, size_t n)
{
	if (s->len + n > s->cap) {
		/* 80 KiB doubled: 320 KiB, what a sink flushed at 256 KiB (decode_chunk.c) fills. */
		size_t cap = s->cap ? s->cap : 80u << 10;
		uint8_t *b;

		while (cap < s->len + n)
			cap *= 2;
		b = realloc(s->buf, cap);
		if (!b)
			return NULL;
		s->buf = b;
		s->cap = cap;
	}
	return s->buf + s->len;
}

void dsink_put(struct dsink *s, const void *p, size_t n)
{
	uint8_t *d = dsink_room(s, n);

	if (!d) {
		s->err = -ENOMEM;
		return;
	}
	memcpy(d, p, n);
	s->len += n;
}

void dsink_truncate(struct dsink *s, uint64_t pos)
{
	if (pos >= s->base && pos - s->base < s->len)
		s->len = (size_t)(pos - s->base);
}

/* Before its turn: into the temporary file, as a frame (length, bytes) of whole records. */
static int spill(struct dsink *s, const uint8_t *p, size_t len)
{
	uint64_t n = len;
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

/*
 * Before its turn, within the bound: hand the buffer (its first @n bytes) over to the
 * list, and go on in a new one. False when the bound or memory says no.
 */
static bool keep(struct dsink *s, size_t n)
{
	struct dbudget *b = s->out->budget;
	struct dblock *blk;
	uint8_t *full = s->buf;

	if (!b || s->spilling || !budget_take(b, s->cap))
		return false;
	blk = block_get(b, s->cap);
	if (!blk) {
		__atomic_sub_fetch(&b->held, s->cap, __ATOMIC_RELAXED);
		return false;
	}
	/* The block's buffer (a free one) and the sink's swap: the sink's is handed over. */
	s->buf = blk->buf;
	memcpy(s->buf, full + n, s->len - n);
	blk->next = NULL;
	blk->buf = full;
	blk->len = n;
	if (s->tail)
		s->tail->next = blk;
	else
		s->head = blk;
	s->tail = blk;
	return true;
}

/*
 * Whether the writer waits: before its turn, while another buffer would take what the
 * sinks hold past the budget's wait_at; at its turn for the merge (dsink_turn()),
 * while the merge has not taken DSINK_TURN_HOLD bytes it let go of.
 */
static bool must_wait(const struct dsink *s, const struct dbudget *b)
{
	if (__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&s->direct, __ATOMIC_ACQUIRE))
		return false;
	if (__atomic_load_n(&s->turn, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&s->own, __ATOMIC_ACQUIRE) > DSINK_TURN_HOLD;
	return __atomic_load_n(&b->held, __ATOMIC_RELAXED) + s->cap > b->wait_at;
}

/*
 * With the budget's wait_at: wait (must_wait()) for memory given back, the merge taking
 * what the sink let go of, or the turn (the sink's lock is not held: dsink_promote()
 * takes it).
 */
static void wait_room(struct dsink *s)
{
	struct dbudget *b = s->out->budget;

	if (!b || !b->wait_at || !must_wait(s, b))
		return;
	pthread_mutex_lock(&b->lock);
	while (must_wait(s, b))
		pthread_cond_wait(&b->cond, &b->lock);
	pthread_mutex_unlock(&b->lock);
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
	pthread_mutex_lock(&s->lock);
	if (s->direct) {
		pass(s->out, s->buf, n);
		ret = s->out->err;
	} else {
		uint64_t own = __atomic_add_fetch(&s->own, n, __ATOMIC_RELEASE);
		/* The merge waits for DSINK_TURN_PASS bytes (or the chunk's end). */
		bool turn = s->turn && own >= DSINK_TURN_PASS && own - n < DSINK_TURN_PASS;

		if (keep(s, n)) {
			pthread_mutex_unlock(&s->lock);
			if (turn)
				dbudget_kick(s->out->budget);
			s->len -= n;
			s->base += n;
			return s->err;
		}
		ret = spill(s, s->buf, n);
		s->spilling = true;
		kick = turn;
	}
	pthread_mutex_unlock(&s->lock);
	if (kick && s->out->budget)
		dbudget_kick(s->out->budget);
	if (ret && !s->err)
		s->err = ret;
	memmove(s->buf, s->buf + n, s->len - n);
	s->len -= n;
	s->base += n;
	return s->err;
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
		ssize_t r = read(fd, &n, sizeof(n));

		if (!r)
			break;
		if (r != (ssize_t)sizeof(n)) {
			ret = r < 0 ? -errno : -EIO;
			break;
		}
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
		pass(s->out, buf, (size_t)n);
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

		pass(s->out, head->buf, head->len);
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
		dbudget_kick(b);	/* its writer may wait for this */
	return ret ? ret : s->out->err;
}

void dsink_turn(struct dsink *s)
{
	if (!s->out)
		return;
	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&s->turn, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->lock);
	if (s->out->budget)
		dbudget_kick(s->out->budget);	/* its writer may wait before its turn */
}

int dsink_pass(struct dsink *s)
{
	int ret = 0;

	if (!s->out)
		return 0;
	if (pass_held(s, false, &ret) && s->out->budget)
		dbudget_kick(s->out->budget);	/* its writer may wait for the merge */
	return ret ? ret : s->out->err;
}
