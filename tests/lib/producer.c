// SPDX-License-Identifier: MIT
/* The kernel's side of the AUX protocol, played by a thread on ordinary memory. */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "producer.h"
#include "xorshift.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define TRAILER 32	/* sample_id for TID|TIME|CPU|IDENTIFIER */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int producer_init(struct producer *p, const struct producer_cfg *cfg)
{
	long pg = sysconf(_SC_PAGESIZE);

	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	if (!p->cfg.seed)
		p->cfg.seed = 0x9e3779b9;
	/* Resident from the start, as the kernel's ring pages are: no faults while tracing. */
	p->base = mmap(NULL, pg + cfg->data_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	p->aux = mmap(NULL, cfg->aux_size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p->base == MAP_FAILED || p->aux == MAP_FAILED)
		return -1;
	p->pc = p->base;
	p->pc->data_offset = pg;
	p->pc->data_size = cfg->data_size;
	p->pc->aux_offset = pg + cfg->data_size;
	p->pc->aux_size = cfg->aux_size;
	if (!p->cfg.watermark)
		p->cfg.watermark = auxring_watermark(cfg->aux_size);
	/* Regions are whole pages and tile the buffer. */
	if (p->cfg.region && (p->cfg.region % 4096 || p->cfg.region & (p->cfg.region - 1) ||
			      p->cfg.region > cfg->aux_size))
		return -1;
	p->enabled = 1;
	return 0;
}

void producer_free(struct producer *p)
{
	long pg = sysconf(_SC_PAGESIZE);

	munmap(p->base, pg + p->cfg.data_size);
	munmap(p->aux, p->cfg.aux_size);
	free(p->log);
}

void producer_ring(struct producer *p, struct auxring *r)
{
	auxring_attach(r, p->base, p->cfg.data_size, p->aux, p->cfg.aux_size, p->cfg.overwrite);
}

static void log_add(struct producer *p, const void *rec, uint64_t n)
{
	if (!p->cfg.keep_log)
		return;
	if (p->log_len + n > p->log_cap) {
		p->log_cap = (p->log_len + n) * 2;
		p->log = realloc(p->log, p->log_cap);
		if (!p->log)
			abort();
	}
	memcpy(p->log + p->log_len, rec, n);
	p->log_len += n;
}

/* The consumer's poll() returns: the kernel's perf_output_wakeup(). */
static void wake(struct producer *p)
{
	__atomic_add_fetch(&p->wakeups, 1, __ATOMIC_RELEASE);
}

/*
 * Copy a record into the data ring at head, across the wrap; false when it
 * does not fit. The kernel takes a record only if CIRC_SPACE (one byte short
 * of the free space) holds it, and wakes the reader each time head moves
 * another watermark (half the ring, its default) past the last wakeup.
 */
static bool ring_put(struct producer *p, const uint8_t *rec, uint64_t n)
{
	uint8_t *data = (uint8_t *)p->base + p->pc->data_offset;
	uint64_t tail = __atomic_load_n(&p->pc->data_tail, __ATOMIC_ACQUIRE);
	uint64_t mask = p->cfg.data_size - 1, off = p->data_head & mask;

	if (p->cfg.data_size - (p->data_head - tail) - 1 < n)
		return false;
	if (off + n <= p->cfg.data_size) {
		memcpy(data + off, rec, n);
	} else {
		memcpy(data + off, rec, p->cfg.data_size - off);
		memcpy(data, rec + (p->cfg.data_size - off), n - (p->cfg.data_size - off));
	}
	p->data_head += n;
	__atomic_store_n(&p->pc->data_head, p->data_head, __ATOMIC_RELEASE);
	if (p->data_head - p->data_wakeup > p->cfg.data_size / 2) {
		p->data_wakeup += p->cfg.data_size / 2;
		wake(p);
	}
	return true;
}

static void put_trailer(struct producer *p, uint8_t *at)
{
	uint32_t tid[2] = { 4242, 4243 }, cpu[2] = { 0, 0 };
	uint64_t time = ++p->next_time, id = 77;

	memcpy(at, tid, 8);
	memcpy(at + 8, &time, 8);
	memcpy(at + 16, cpu, 8);
	memcpy(at + 24, &id, 8);
}

/*
 * Emit a record, or count it dropped and say so with PERF_RECORD_LOST once
 * there is room. Returns whether the record was written.
 */
static bool emit(struct producer *p, uint8_t *rec, uint64_t n)
{
	if (p->dropped) {
		uint8_t lost[8 + 16 + TRAILER];
		struct perf_event_header *h = (void *)lost;
		uint64_t body[2] = { 77, p->dropped };

		h->type = PERF_RECORD_LOST;
		h->misc = 0;
		h->size = sizeof(lost);
		memcpy(lost + 8, body, 16);
		put_trailer(p, lost + 24);
		if (!ring_put(p, lost, sizeof(lost))) {
			p->dropped++;
			return false;
		}
		log_add(p, lost, sizeof(lost));
		p->lost_records++;
		p->lost_sum += p->dropped;
		p->dropped = 0;
	}
	if (!ring_put(p, rec, n)) {
		p->dropped++;
		return false;
	}
	log_add(p, rec, n);
	p->records++;
	return true;
}

static void emit_aux(struct producer *p, uint64_t off, uint64_t size, uint64_t flags)
{
	uint8_t rec[8 + 24 + TRAILER];
	struct perf_event_header *h = (void *)rec;
	uint64_t body[3] = { off, size, flags };
	bool trunc = flags & PERF_AUX_FLAG_TRUNCATED;

	h->type = PERF_RECORD_AUX;
	h->misc = 0;
	h->size = sizeof(rec);
	memcpy(rec + 8, body, sizeof(body));
	put_trailer(p, rec + 32);
	p->aux_records++;
	p->truncated += trunc;
	if (!emit(p, rec, sizeof(rec)))
		p->dropped_truncated += trunc;
}

/* A COMM record of random length: sideband of sizes that straddle the wrap. */
static void emit_comm(struct producer *p, uint32_t *seed)
{
	uint8_t rec[8 + 8 + 64 + TRAILER];
	struct perf_event_header *h = (void *)rec;
	uint32_t len = 8 * (1 + xorshift32(seed) % 8);	/* comm padded to 8 bytes */

	h->type = PERF_RECORD_COMM;
	h->misc = 0;
	h->size = (uint16_t)(8 + 8 + len + TRAILER);
	for (uint32_t i = 0; i < 8 + len; i++)
		rec[8 + i] = (uint8_t)(p->records + i);
	put_trailer(p, rec + 16 + len);
	emit(p, rec, h->size);
}

/*
 * Intel PT's output stores are write-combining (SDM Vol. 3C, "Flushing Trace
 * Output"): they go around the core's caches, so the drain reads trace bytes
 * from memory, not from the writing core's cache. Streaming stores do the
 * same here; producer_fence() orders them before the record and aux_head
 * report them, as the SFENCE of clearing TraceEn does before the PMI
 * handler reads the output offset.
 */
void producer_store_wc(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
#ifdef __SSE2__
	size_t lead = (size_t)(-(uintptr_t)d & 15);

	if (lead > n)
		lead = n;
	memcpy(d, s, lead);
	d += lead;
	s += lead;
	n -= lead;
	for (; n >= 16; n -= 16, d += 16, s += 16)
		_mm_stream_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
#endif
	memcpy(d, s, n);
}

void producer_fence(void)
{
#ifdef __SSE2__
	_mm_sfence();
#endif
}

/* Bytes at ring position @pos, each the function of its absolute offset @abs. */
static void write_aux(struct producer *p, uint64_t pos, uint64_t abs, uint64_t n)
{
	static uint8_t table[1 << 16];
	uint64_t mask = p->cfg.aux_size - 1;
	uint8_t piece[256];

	if (p->cfg.fast_fill && !table[1])
		for (size_t i = 0; i < sizeof(table); i++)
			table[i] = producer_byte(i);
	while (n) {
		uint64_t off = pos & mask, k = n;

		if (k > p->cfg.aux_size - off)
			k = p->cfg.aux_size - off;
		if (p->cfg.fast_fill) {
			/* As fast as memory goes, so that the bench measures the drain. */
			if (k > sizeof(table) - (abs & (sizeof(table) - 1)))
				k = sizeof(table) - (abs & (sizeof(table) - 1));
			producer_store_wc(p->aux + off, table + (abs & (sizeof(table) - 1)), k);
		} else {
			if (k > sizeof(piece))
				k = sizeof(piece);
			for (uint64_t i = 0; i < k; i++)
				piece[i] = producer_byte(abs + i);
			producer_store_wc(p->aux + off, piece, k);
		}
		pos += k;
		abs += k;
		n -= k;
	}
}

/*
 * Hold the rate. Hardware that fell behind (this thread was descheduled)
 * does not catch up in a burst: the schedule moves on instead.
 */
static void pace(struct producer *p, uint64_t *start_ns)
{
	uint64_t due, t;

	if (!p->cfg.rate)
		return;
	due = *start_ns + p->offered * 1000000000ull / p->cfg.rate;
	t = now_ns();
	if (t > due + 1000000) {
		*start_ns += t - due;
		return;
	}
	while (now_ns() < due && !__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
		sched_yield();
}

/*
 * The next chunk's size for the hardware writing at @pos: random in
 * [chunk_min, chunk_max], or (1 in wrap_every) what ends exactly at the
 * wrap; at most what is left to offer.
 */
static uint64_t next_chunk(struct producer *p, uint32_t *seed, uint64_t pos)
{
	uint64_t chunk = p->cfg.chunk_min +
			 xorshift32(seed) % (p->cfg.chunk_max - p->cfg.chunk_min + 1);

	if (p->cfg.sideband_every && xorshift32(seed) % p->cfg.sideband_every == 0)
		emit_comm(p, seed);
	if (p->cfg.wrap_every && xorshift32(seed) % p->cfg.wrap_every == 0)
		chunk = p->cfg.aux_size - (pos & (p->cfg.aux_size - 1));
	return chunk < p->cfg.total - p->offered ? chunk : p->cfg.total - p->offered;
}

/*
 * perf_aux_output_end() for the @size bytes from @head: the record, then
 * aux_head, then the wakeup (at a watermark mark, or for a stop). A stop
 * disables the event before anyone can see it.
 */
static void aux_end(struct producer *p, uint64_t head, uint64_t size, uint64_t flags)
{
	bool wakeup = flags & PERF_AUX_FLAG_TRUNCATED;

	/* The hardware's output is out of its buffers before the handler reports it. */
	producer_fence();
	if (flags & PERF_AUX_FLAG_TRUNCATED)
		__atomic_store_n(&p->enabled, 0, __ATOMIC_RELEASE);
	if (size || flags)
		emit_aux(p, head, size, flags);
	/* The kernel too moves aux_head after the record: a reader may see the record first. */
	if ((flags & PERF_AUX_FLAG_TRUNCATED) && p->cfg.head_lag_us)
		usleep(p->cfg.head_lag_us);
	head += size;
	p->produced = head;
	__atomic_store_n(&p->pc->aux_head, head, __ATOMIC_RELEASE);
	if (head >= p->aux_wakeup + p->cfg.watermark) {
		p->aux_wakeup = head - head % p->cfg.watermark;
		wakeup = true;
	}
	if (wakeup)
		wake(p);
}

/* perf_aux_output_begin() found no room: no record, the event stops. */
static void begin_failed(struct producer *p)
{
	p->begin_fail++;
	__atomic_store_n(&p->enabled, 0, __ATOMIC_RELEASE);
	wake(p);
}

/* Overwrite (snapshot) mode: intel_pt's in-buffer head, one record per stop. */
static void run_snapshot(struct producer *p)
{
	uint64_t mask = p->cfg.aux_size - 1, pos = 0, start = now_ns();
	uint32_t seed = p->cfg.seed;

	while (p->offered < p->cfg.total && !__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		uint64_t chunk;

		if (__atomic_load_n(&p->pause_req, __ATOMIC_ACQUIRE)) {
			if (!p->paused) {
				emit_aux(p, pos, p->offered < p->cfg.aux_size ? p->offered :
					 p->cfg.aux_size, PERF_AUX_FLAG_OVERWRITE);
				__atomic_store_n(&p->paused, 1, __ATOMIC_RELEASE);
			}
			sched_yield();
			continue;
		}
		chunk = next_chunk(p, &seed, pos);
		write_aux(p, pos, p->produced, chunk);
		p->offered += chunk;
		p->produced += chunk;
		pos = (pos + chunk) & mask;
		producer_fence();
		__atomic_store_n(&p->pc->aux_head, pos, __ATOMIC_RELEASE);
		p->chunks++;
		pace(p, &start);
	}
}

/* The generic model: every chunk is published at once. */
static void run_generic(struct producer *p)
{
	uint64_t head = 0, mask = p->cfg.aux_size - 1, start = now_ns();
	uint32_t seed = p->cfg.seed;

	while (p->offered < p->cfg.total && !__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		uint64_t chunk, tail, space, n;

		/* The room is taken per chunk: a restart is the next chunk. */
		__atomic_store_n(&p->restarted, __atomic_load_n(&p->restarts, __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		if (!__atomic_load_n(&p->enabled, __ATOMIC_ACQUIRE)) {
			sched_yield();
			continue;
		}
		chunk = next_chunk(p, &seed, head);
		tail = __atomic_load_n(&p->pc->aux_tail, __ATOMIC_ACQUIRE);
		/* The kernel's CIRC_SPACE: one byte always stays free. */
		space = (tail - head - 1) & mask;
		if (!space) {
			begin_failed(p);
			continue;
		}
		n = chunk < space ? chunk : space;
		write_aux(p, head, head, n);
		p->offered += chunk;	/* what did not fit is lost with the truncation */
		/* Reaching the end of the room is intel_pt's STOP marker: TRUNCATED. */
		aux_end(p, head, n, n == space ? PERF_AUX_FLAG_TRUNCATED : 0);
		head += n;
		p->chunks++;
		pace(p, &start);
	}
}

#define PT_PAGE 4096ull

/* intel_pt's output state, in absolute AUX offsets. */
struct pt_state {
	uint64_t head;		/* published aux_head */
	uint64_t hw;		/* where the hardware writes next */
	uint64_t stop, intr;	/* the STOP and the next INT region boundary */
	bool running;
};

static uint64_t region_floor(const struct producer *p, uint64_t off)
{
	return off & ~(p->cfg.region - 1);
}

/*
 * perf_aux_output_begin() and pt_buffer_reset_markers(): take the room the
 * tail leaves, refuse a start that cannot reach the end of the current
 * region, and place STOP and INT on region boundaries: STOP ends the region
 * before the one holding the page the room reaches, INT the region before
 * the one holding the next watermark mark (or the page before the STOP).
 */
static void pt_begin(struct producer *p, struct pt_state *s)
{
	uint64_t tail = __atomic_load_n(&p->pc->aux_tail, __ATOMIC_ACQUIRE);
	uint64_t size, npages, idx, ipage;

	s->running = false;
	if (s->head - tail >= p->cfg.aux_size) {
		begin_failed(p);
		return;
	}
	size = p->cfg.aux_size - 1 - (s->head - tail);
	if (s->head % p->cfg.region + size + 1 < p->cfg.region) {
		p->start_truncated++;
		aux_end(p, s->head, 0, PERF_AUX_FLAG_TRUNCATED);
		return;
	}
	npages = size / PT_PAGE + ((s->head + size + 1) % PT_PAGE == 0);
	idx = s->head / PT_PAGE + npages;
	s->stop = region_floor(p, idx * PT_PAGE);
	ipage = (p->aux_wakeup + p->cfg.watermark) / PT_PAGE;
	if (ipage > idx - 1)
		ipage = idx - 1;
	s->intr = region_floor(p, ipage * PT_PAGE);
	/* An INT behind the head is a whole lap away: the STOP comes first. */
	if (s->intr <= s->head)
		s->intr = s->stop;
	s->running = true;
}

/* A PMI, or the event stopping: publish what the hardware wrote. */
static void pt_publish(struct producer *p, struct pt_state *s, uint64_t flags)
{
	aux_end(p, s->head, s->hw - s->head, flags);
	s->head = s->hw;
}

static void run_intel_pt(struct producer *p)
{
	uint64_t start = now_ns();
	struct pt_state s = { 0 };
	uint32_t seed = p->cfg.seed;

	while (p->offered < p->cfg.total && !__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		int restarts = __atomic_load_n(&p->restarts, __ATOMIC_ACQUIRE);
		uint64_t chunk, end, n;

		/* DISABLE stops a running event (pt_event_stop()), ENABLE starts it. */
		if (restarts != p->restarted) {
			if (s.running)
				pt_publish(p, &s, 0);
			s.running = false;
			if (__atomic_load_n(&p->enabled, __ATOMIC_ACQUIRE))
				pt_begin(p, &s);
			__atomic_store_n(&p->restarted, restarts, __ATOMIC_RELEASE);
			continue;
		}
		if (!s.running) {
			/* Only the first start comes without an enable. */
			if (!p->chunks && __atomic_load_n(&p->enabled, __ATOMIC_ACQUIRE))
				pt_begin(p, &s);
			if (!s.running)
				sched_yield();
			continue;
		}
		chunk = next_chunk(p, &seed, s.hw);
		end = s.intr < s.stop ? s.intr : s.stop;
		n = chunk < end - s.hw ? chunk : end - s.hw;
		write_aux(p, s.hw, s.hw, n);
		s.hw += n;
		p->chunks++;
		if (s.hw == s.stop) {
			p->offered += chunk;	/* the rest is lost with the stop */
			pt_publish(p, &s, PERF_AUX_FLAG_TRUNCATED);
			s.running = false;
		} else {
			p->offered += n;
			if (s.hw == s.intr) {
				pt_publish(p, &s, 0);
				pt_begin(p, &s);
			}
		}
		pace(p, &start);
	}
	/* The event stops at the end: what the hardware wrote is published. */
	if (s.hw != s.head)
		pt_publish(p, &s, 0);
}

static void *run(void *arg)
{
	struct producer *p = arg;

	if (p->cfg.overwrite)
		run_snapshot(p);
	else if (p->cfg.region)
		run_intel_pt(p);
	else
		run_generic(p);
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	wake(p);
	return NULL;
}

void producer_start(struct producer *p)
{
	if (pthread_create(&p->thread, NULL, run, p))
		abort();
}

void producer_join(struct producer *p)
{
	pthread_join(p->thread, NULL);
}

void producer_enable(struct producer *p)
{
	int want;

	__atomic_store_n(&p->enabled, 1, __ATOMIC_RELEASE);
	want = __atomic_add_fetch(&p->restarts, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&p->restarted, __ATOMIC_ACQUIRE) - want < 0 &&
	       !__atomic_load_n(&p->done, __ATOMIC_ACQUIRE))
		sched_yield();
}

void producer_restart_fn(void *producer)
{
	producer_enable(producer);
}

void producer_wait(struct producer *p, uint64_t seen)
{
	while (__atomic_load_n(&p->wakeups, __ATOMIC_ACQUIRE) == seen &&
	       !__atomic_load_n(&p->done, __ATOMIC_ACQUIRE))
		sched_yield();
}

int producer_consume(struct producer *p, struct auxring *r, int trace_fd, int sb_fd, bool slow,
		     uint64_t *max_gap_ns)
{
	uint64_t last = now_ns();
	int ret;

	if (max_gap_ns)
		*max_gap_ns = 0;
	for (;;) {
		bool done = __atomic_load_n(&p->done, __ATOMIC_ACQUIRE);
		uint64_t seen = __atomic_load_n(&p->wakeups, __ATOMIC_ACQUIRE);

		if (max_gap_ns) {
			uint64_t t = now_ns();

			if (t - last > *max_gap_ns)
				*max_gap_ns = t - last;
			last = t;
		}
		ret = auxring_pass(r, trace_fd, sb_fd, false, producer_restart_fn, p);
		if (ret || done)
			break;
		if (slow)
			usleep(200);
		else
			producer_wait(p, seen);
	}
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
	producer_join(p);
	if (!ret)
		ret = auxring_pass(r, trace_fd, sb_fd, true, NULL, NULL);
	return ret;
}

void producer_pause(struct producer *p)
{
	__atomic_store_n(&p->pause_req, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&p->paused, __ATOMIC_ACQUIRE) &&
	       p->offered < p->cfg.total)
		sched_yield();
}

void producer_resume(struct producer *p)
{
	__atomic_store_n(&p->paused, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&p->pause_req, 0, __ATOMIC_RELEASE);
}
