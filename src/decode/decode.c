// SPDX-License-Identifier: MIT
/*
 * A decode run: streams cut into PSB-delimited chunks, chunks decoded on
 * worker threads, their output merged in order by the calling thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "decode.h"
#include "decode_chunk.h"
#include "fastflow.h"
#include "decode_rec.h"
#include "fileio.h"
#include "insnblk.h"
#include "iptfill.h"
#include "memimage.h"
#include "monotime.h"
#include "render.h"

/*
 * Chunks (bytes of trace) with -J 2 and more, unless --chunk-size says: at least MIN_CHUNK
 * (the output fit below may ask for little trace: the loop of bench/decode makes 0.9 MB
 * of --insn text a KiB of trace, and 32 KiB made 30 MB, above the mark) where chunks
 * are staggered(), else MIN_CHUNK_PLAIN; the first ones FIRST_CHUNK.
 */
#define MIN_CHUNK (4u << 10)
#define MIN_CHUNK_PLAIN (16u << 10)
#define FIRST_CHUNK (32u << 10)
/* What chunks waiting for their turn keep in memory, all together (beyond: files). */
#define MEM_BOUND (256ull << 20)
/*
 * The waiting mark's share per worker but one (budget.wait_at: decode_wait_mark()), and
 * what the first chunk sized by its output prints where chunks are not staggered()
 * (FILL_STAGGERED where they are): more than the share, so that the workers, which start
 * together, bring the waiting output to its mark in their first chunks of full size,
 * whatever the trace, and the peak memory is the same for every length past them (a
 * chunk made half the mark before: the mark was reached only once a worker got a chunk
 * ahead, later the longer the run; the loop of bench/decode, -J 2 --insn: 24.7 MB at
 * 52 M instructions, 44.8 MB at 209 M).
 *
 * After that first one, a chunk is sized to end stagger() (WAIT_SHARE / jobs of the mark)
 * after the chunks still being decoded before it, and no sooner than 3/2 of that after
 * it starts (next_size()): the worker ahead prints about half of what the mark lets it
 * before its turn, whatever the chunks before did, where chunks of 5/4 of the share made
 * it wait at the mark at nearly every chunk (the loop's -J 2 --insn: 121 waits in 128
 * chunks, 103 ms of a 353 ms run): each wait left the next worker ahead a whole share
 * to print, the mark again.
 */
#define WAIT_SHARE (16ull << 20)
#define CHUNK_OUT (WAIT_SHARE + WAIT_SHARE / 4)
/*
 * The first chunk sized by its output where chunks are staggered(): under the share. The
 * worker that starts beside it prints as much before its turn, beside what the merge has
 * not filtered yet of the chunk at its turn; at CHUNK_OUT it met the mark and waited there
 * for the rest of that chunk, and the lead it kept made the next chunks wait too (the
 * walk's -J 2 --stats --timeline: 88, 53 and 30 ms of a worker's, a 895 ms run).
 */
#define FILL_STAGGERED (WAIT_SHARE / 2)
#define PSB_LEN 16
#define AHEAD_PER_JOB 4		/* chunks planned and not yet merged, per worker */
/*
 * A chunk's worker CPU time at least, at the rate the chunks done so far went: each chunk
 * costs a seam (the fast path decodes a chunk's last PSB segment with libipt, 20 times
 * its own cost; the walk of bench/decode --stats: 3 ms a chunk), and 32 KiB chunks at
 * the end of a fast run were each more seam than work.
 */
#define MIN_CHUNK_NS 10000000ull
/*
 * The end of a run (what is left, at the rate so far, under 2 * jobs * MIN_CHUNK_NS): a
 * chunk is what makes every worker end together, its share of what is left and of what
 * the chunks being decoded still have to do (end_size()); but no chunk of less than
 * END_LEAST_NS, and no such piece left behind. Chunks of MIN_CHUNK_NS there left one
 * worker alone at the end (the walk of bench/decode, --stats -J 2: the last chunk 8 ms).
 */
#define END_LEAST_NS 2000000ull

struct mapped {
	const uint8_t *p;	/* the stream's range */
	uint64_t len;
	struct file_map f;	/* the file; its fd open until the run ends */
	uint64_t from;		/* where the range starts in the file */
	uint64_t data_lo, data_hi;	/* the data from the range's start (decode_chunk) */
	uint64_t swept;		/* the merge swept its range up to here (drop_merged()) */
	uint64_t plan_bytes;	/* planning read this much of it (the debug count) */
};

/* What planning reads around a cut: PSB+ is far shorter. */
#define PLAN_READ (64u << 10)
/*
 * What it reads first (find_psb(), psb_state()), PLAN_READ only when that is not enough:
 * PSBs come every few KiB (the walk of bench/decode: 7.5 KiB apart), and each cut read
 * 128 KiB, copied by the kernel and searched (-J 2 --insn on the loop, 384 reads of 64
 * KiB: CPU 0.986 of the base's with a first read of 8 KiB).
 */
#define PLAN_FIRST (8u << 10)
/*
 * A PSB+ read from PLAN_FIRST bytes says what it says from PLAN_READ when libipt's decoder
 * stopped this far before their end: it read nothing further (a packet is at most 16
 * bytes); else it is read again from PLAN_READ.
 */
#define PLAN_MARGIN 1024u

/*
 * Planning's read buffer (PLAN_READ bytes), and what it holds: @n bytes of stream @m from
 * @at on.
 */
struct plan_buf {
	uint8_t *p;
	const struct mapped *m;
	uint64_t at;
	size_t n;
};

struct slot {
	struct decode_chunk *c;
	bool done;
	bool clocked;		/* clk is the CPU clock of the worker decoding it */
	clockid_t clk;
	uint64_t cpu0;		/* that clock when it took the chunk */
};

struct run {
	struct decode_config *cfg;
	const struct decode_io *io;
	unsigned jobs;
	struct mapped *maps;
	struct symcache *syms;
	struct fastflow_table *blocks;	/* the fast path's, shared by the workers (-J 2 on) */
	struct pt_image_section_cache *iscache;	/* libipt's sections, the same (-J 2 on) */
	struct insnblk_shared *lines;	/* --insn: their lines, shared so too */
	struct dout out, tl;
	bool have_out, have_tl;
	const struct renderer *out_rd, *tl_rd;
	struct dbudget budget;
	uint64_t progress, total;
	/* Under the lock: chunks planned as workers ask, in order; what the done ones made. */
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* the workers' wait to start a chunk */
	/*
	 * The merge's wait (wait_chunk()), for chunk want_k planned (want_done: decoded), and
	 * whether it sleeps there: a worker wakes it only when what it waits for is there,
	 * after the lock is let go of. One wait for all, woken under the lock at each chunk's
	 * start and end, woke the merge for chunks it did not wait for, and woke it to wait
	 * for the lock the waker still held (the walk of bench/decode, -J 2 --branches: 120-147
	 * futex calls and 151-164 context switches a run, against 8 and 22 at -J 1).
	 */
	pthread_cond_t merge_cond;
	size_t want_k;
	bool want_done, merge_asleep;
	struct slot *chunks;
	size_t nr_chunks, cap_chunks;
	size_t merged;			/* chunks the merge is done with */
	struct {
		size_t stream;		/* the stream being cut (nr_streams: all are) */
		uint64_t begin;		/* where its next chunk starts */
		uint64_t tsc_lo;	/* and that chunk's first PSB's TSC */
		struct plan_buf buf;	/* its reads */
	} plan;
	uint64_t done_in, done_out;	/* bytes of trace decoded, of output made */
	uint64_t done_ns;		/* the workers' CPU time for done_in */
	bool filled;			/* a chunk was sized to CHUNK_OUT (next_size()) */
	bool stop, nomem;
	/* The debug count (io->acct), and wall times for it: start, first chunk, last. */
	struct decode_acct *acct;
	unsigned acct_next;
	uint64_t t_begin, t_first, t_last;
};

static const uint8_t psb[PSB_LEN] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

static int map_stream(const struct decode_stream *s, struct mapped *m, struct error *e)
{
	/* The descriptor kept until the run ends: planning reads it, chunks find holes. */
	int ret = file_map_input(AT_FDCWD, s->pt, true, &m->f, e);
	uint64_t end;

	m->p = NULL;
	m->len = 0;
	m->from = s->from;
	if (ret)
		return ret;
	end = s->to ? s->to : m->f.len;
	if (end > m->f.len || s->from > end || (s->to && s->to <= s->from)) {
		size_t size = m->f.len;

		file_unmap(&m->f);
		return err_usage(e, "%s: range 0x%" PRIx64 "-0x%" PRIx64 " is not inside the file "
				 "(%zu bytes)", s->pt, s->from, end, size);
	}
	/* Read once, front to back: let the kernel read ahead and drop behind. */
	if (m->f.p)
		madvise(m->f.p, m->f.len, MADV_SEQUENTIAL);
	/*
	 * Where the data from the range's start ends (a hole, or the file's end), found once:
	 * each chunk asked it again at its first PSB, and on tmpfs a SEEK_HOLE walks the
	 * file's pages from the offset on (the walk of bench/decode, --stats -J 2: 9 chunks,
	 * 0.6 % of the run's samples in it, against one at -J 1).
	 */
	m->data_lo = m->data_hi = 0;
	if (file_next_data(m->f.fd, s->from) == s->from) {
		m->data_lo = s->from;
		m->data_hi = file_next_hole(m->f.fd, s->from);
	}
	m->p = m->f.p ? (const uint8_t *)m->f.p + s->from : NULL;
	m->len = end - s->from;
	return 0;
}

static void unmap_stream(struct mapped *m)
{
	file_unmap(&m->f);
}

/*
 * Planning reads the file, not the mapping: the kernel maps whole folios on a touch, and
 * what planning touched would stay resident until its chunk is decoded.
 */
static size_t plan_read(struct mapped *m, uint64_t at, struct plan_buf *b, size_t len)
{
	ssize_t n;

	b->m = NULL;
	if (at >= m->len)
		return 0;
	if (len > m->len - at)
		len = (size_t)(m->len - at);
	n = pread(m->f.fd, b->p, len, (off_t)(m->from + at));
	if (n > 0) {
		m->plan_bytes += (uint64_t)n;
		b->m = m;
		b->at = at;
		b->n = (size_t)n;
	}
	return n > 0 ? (size_t)n : 0;
}

/*
 * @len bytes of @m from @at on where the last read has them (psb_state() right after
 * find_psb() found the PSB in its read: the same bytes read again each cut, half of
 * planning's reads); fewer where it ends first, at least PLAN_VIEW_LEAST. NULL: read.
 */
#define PLAN_VIEW_LEAST (2u * PLAN_MARGIN)

static const uint8_t *plan_view(const struct mapped *m, uint64_t at, const struct plan_buf *b,
				size_t len, size_t *n)
{
	size_t have;

	if (b->m != m || at < b->at || at - b->at >= b->n)
		return NULL;
	have = b->n - (size_t)(at - b->at);
	if (have < len && have < PLAN_VIEW_LEAST && b->at + b->n < m->len)
		return NULL;
	*n = have < len ? have : len;
	return b->p + (at - b->at);
}

/* The first PSB at or after @from, or @len. */
static uint64_t find_psb(struct mapped *m, uint64_t from, struct plan_buf *b)
{
	size_t want = PLAN_FIRST;

	while (from < m->len) {
		uint64_t data = file_next_data(m->f.fd, m->from + from);
		size_t n;
		const uint8_t *p;

		/* A hole of a sparse file is zeroes, no PSB: passed without a read. */
		if (data > m->from + from) {
			from = data - m->from;
			continue;
		}
		n = plan_read(m, from, b, want);
		p = n >= PSB_LEN ? memmem(b->p, n, psb, PSB_LEN) : NULL;

		if (p)
			return from + (uint64_t)(p - b->p);
		if (n <= PSB_LEN)
			break;
		want = PLAN_READ;
		/* A PSB may straddle two reads. */
		from += n - (PSB_LEN - 1);
	}
	return m->len;
}

/*
 * What the PSB+ at @at says: the IP tracing is at (if it is on) and the TSC. False when
 * libipt cannot read that PSB+ (a corrupted trace), or the status packets after it up to
 * the first branch or event: a decoder started there reads those before its first block
 * and fails with no IP of its own (0), where one decoder reports the IP it was at (ptwalk
 * -x's second TMA after a PSBEND: the error's IP differed at -J 2 as the chunks fell).
 */
static bool psb_state(const struct decode_config *cfg, struct mapped *m, uint64_t at,
		      struct plan_buf *b, size_t len, struct decode_chunk *prev,
		      struct decode_chunk *next)
{
	struct pt_query_decoder *q;
	struct pt_config pc;
	uint64_t ip = 0, tsc = 0, off;
	uint32_t lost_mtc, lost_cyc;
	size_t want = len > PLAN_FIRST ? PLAN_FIRST : len, n = 0;
	const uint8_t *buf = plan_view(m, at, b, want, &n);
	bool again = true;
	int status, tstatus;

read:
	if (!buf) {
		n = plan_read(m, at, b, want);
		buf = b->p;
	}
	if (!n)
		return false;
	pt_config_init(&pc);
	pc.begin = (uint8_t *)buf;
	pc.end = (uint8_t *)buf + n;
	pc.cpu = cfg->cpu;
	pc.mtc_freq = cfg->mtc_freq;
	pc.nom_freq = cfg->nom_freq;
	pc.cpuid_0x15_eax = cfg->cpuid_0x15_eax;
	pc.cpuid_0x15_ebx = cfg->cpuid_0x15_ebx;
	if (cfg->cpu.vendor)
		pt_cpu_errata(&pc.errata, &pc.cpu);
	q = pt_qry_alloc_decoder(&pc);
	if (!q)
		return false;
	status = pt_qry_sync_forward(q, &ip);
	tstatus = status >= 0 ? pt_qry_time(q, &tsc, &lost_mtc, &lost_cyc) : -1;
	/* The PSB+'s events, which read ahead to the first branch or event after them. */
	for (int ev = status; ev >= 0 && (ev & pts_event_pending);) {
		struct pt_event event;

		ev = pt_qry_event(q, &event, sizeof(event));
		if (ev < 0 && ev != -pte_eos)
			status = ev;
	}
	/* Read short (not at the stream's end): what libipt saw must end well before it. */
	if (again && n < len && at + n < m->len &&
	    (status < 0 || pt_qry_get_offset(q, &off) < 0 || off + PLAN_MARGIN > n)) {
		pt_qry_free_decoder(q);
		want = len;
		buf = NULL;
		again = false;
		goto read;
	}
	if (status >= 0 && !(status & pts_ip_suppressed)) {
		prev->have_next_ip = true;
		prev->next_ip = ip;
	}
	if (tstatus >= 0) {
		prev->tsc_hi = tsc;
		next->tsc_lo = tsc;
	}
	pt_qry_free_decoder(q);
	return status >= 0;
}

/*
 * PSBs tried for a cut: one whose PSB+ libipt cannot read is passed for the next. Cut
 * there, the next chunk would start with a sync error (at IP 0) and this one would not
 * know where that chunk starts (no trim), where one decoder reports the PSB+'s error at
 * the IP it was at and goes on from the same place: -J 2 would print other lines than
 * -J 1. Past CUT_TRIES (a trace of nothing but broken PSB+s), the first is taken. The
 * PSBs after the first are read CUT_READ bytes far (a PSB+ is far shorter): a flood of
 * PSBs costs 16 small reads a cut, not 16 of PLAN_READ.
 */
#define CUT_TRIES 16
#define CUT_READ 4096

/*
 * A chunk is kept until the run ends (440 bytes each): a run has at most MAX_CHUNKS
 * (and one more per stream), a larger chunk taken when the traces are longer than
 * MAX_CHUNKS of it (14 MB of chunks at most, 1 GiB in 32 KiB chunks).
 */
#define MAX_CHUNKS 32768

/*
 * The output chunks still being decoded before the next one will print after now, at
 * @rate bytes of output a byte of trace (the most of them: the next chunk's turn comes
 * when they are done). Under the lock.
 */
static double out_left(const struct run *r, double rate)
{
	double most = 0;

	for (size_t k = r->merged; k < r->nr_chunks; k++) {
		const struct decode_chunk *c = r->chunks[k].c;
		double left;

		if (r->chunks[k].done)
			continue;
		left = (double)(c->end - c->begin) * rate -
		       (double)(dsink_let_go(&c->out) + dsink_let_go(&c->tl));
		if (left > most)
			most = left;
	}
	return most;
}

/*
 * What a chunk prints before its turn, at most, to keep the waiting output at about half
 * its mark: WAIT_SHARE / jobs of the mark's bytes, as the buffers held so far were
 * filled (a buffer counts its size, not what it holds).
 */
static double stagger(const struct run *r)
{
	uint64_t gave = __atomic_load_n(&r->budget.gave, __ATOMIC_RELAXED);
	uint64_t size = __atomic_load_n(&r->budget.gave_size, __ATOMIC_RELAXED);
	double share = (double)(WAIT_SHARE / r->jobs);

	return gave && size > gave ? share * (double)gave / (double)size : share;
}

/*
 * The bytes of trace for the next chunk of a stream with @left bytes still to plan. A
 * given --chunk-size is used as it is. Otherwise chunks are handed out as workers ask
 * for them, each a share of what is left (a 2*jobs-th: they shrink toward the end, so
 * no worker is left with a long last one) but MIN_CHUNK_NS of work at least at the
 * rate the chunks done so far went, and no bigger than what makes, at the rate they
 * made output, CHUNK_OUT bytes (the first so sized: @fill) or what the chunks before it
 * still print and stagger() (so what waits for its turn stays in memory, and the worker
 * ahead stays clear of the mark). Before any is done: FIRST_CHUNK. Either way at least a
 * MAX_CHUNKS-th of all the traces.
 */
/*
 * Whether chunks are staggered: only where an output has a filter (--calls, --timeline,
 * report), whose worker ahead waits for the merge. Output the workers write themselves
 * (--insn, --branches) keeps chunks of CHUNK_OUT and MIN_CHUNK_PLAIN: staggered, the
 * loop's -J 2 --insn ran three times the chunks for 8 % more CPU and a longer wall
 * (0.295 against 0.277 s, idle, median of 7).
 */
static bool staggered(const struct run *r)
{
	return r->out.filter || r->tl.filter;
}

/*
 * What a chunk prints, where chunks are not staggered(), after the first (CHUNK_OUT): 3/2
 * of what the worker ahead may print before its turn (WAIT_SHARE, as full as the buffers
 * handed over were), CHUNK_OUT at most. The worker ahead then starts its chunk when the
 * one at its turn is about halfway and reaches the mark, if at all, near its turn; with
 * chunks of twice what the mark holds or more it waited there for the rest of the other's
 * chunk, each chunk (the loop's -J 2 --insn: 32 KiB of trace, 30 MB of text, the mark
 * met at 12.9 MB; the walk's 21 MB met at 10.9 MB).
 */
static double plain_out(const struct run *r)
{
	uint64_t gave = __atomic_load_n(&r->budget.gave, __ATOMIC_RELAXED);
	uint64_t size = __atomic_load_n(&r->budget.gave_size, __ATOMIC_RELAXED);
	double lead = (double)WAIT_SHARE, out;

	if (gave && size > gave)
		lead = lead * (double)gave / (double)size;
	out = 1.5 * lead;
	return out < (double)CHUNK_OUT ? out : (double)CHUNK_OUT;
}

/* The CPU time the chunks being decoded still need, at @per ns a byte. Under the lock. */
static double in_flight_ns(const struct run *r, double per)
{
	double sum = 0;

	for (size_t k = r->merged; k < r->nr_chunks; k++) {
		const struct slot *o = &r->chunks[k];
		struct timespec ts;
		double left;

		if (o->done || !o->clocked || clock_gettime(o->clk, &ts))
			continue;
		left = (double)(o->c->end - o->c->begin) * per -
		       (double)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - o->cpu0);
		if (left > 0)
			sum += left;
	}
	return sum;
}

/*
 * The end of a run's chunk: @left bytes to plan at @per ns a byte, this worker's share of
 * them and of the chunks in flight, so that all end together (each worker that asks next
 * takes its own share of what is then left). 0: not the end yet (or not the last stream).
 */
static uint64_t end_size(const struct run *r, uint64_t left, double per)
{
	double left_ns = (double)left * per, share;

	if (r->plan.stream + 1 < r->cfg->nr_streams || left_ns >= 2.0 * r->jobs * MIN_CHUNK_NS)
		return 0;
	share = (left_ns + in_flight_ns(r, per)) / r->jobs;
	if (share + END_LEAST_NS >= left_ns)
		return left;
	if (share < END_LEAST_NS)
		share = END_LEAST_NS;
	return (uint64_t)(share / per);
}

static uint64_t next_size(const struct run *r, uint64_t left, bool fill)
{
	uint64_t size = r->cfg->chunk_size, min_size;

	if (!size) {
		size = left / (2 * (uint64_t)r->jobs);
		if (r->done_ns) {
			double least = (double)r->done_in * MIN_CHUNK_NS / (double)r->done_ns;
			uint64_t end = end_size(r, left, (double)r->done_ns / (double)r->done_in);

			if (end)
				size = end;
			else if (least > (double)size)
				size = least < (double)left ? (uint64_t)least : left;
		}
		if (!r->done_in) {
			if (size > FIRST_CHUNK)
				size = FIRST_CHUNK;
		} else if (r->done_out) {
			double rate = (double)r->done_out / (double)r->done_in;
			double t = stagger(r), out = out_left(r, rate) + t, fit;

			/*
			 * Not below 3/2 of the stagger: when the chunks before are done already
			 * (the worker ahead was not scheduled, a loaded machine), a chunk of one
			 * stagger would end before the other worker's next got far.
			 */
			if (out < 1.5 * t)
				out = 1.5 * t;
			if (fill)
				out = (double)(staggered(r) ? FILL_STAGGERED : CHUNK_OUT);
			else if (!staggered(r))
				out = plain_out(r);
			fit = out / rate;

			if (fit < (double)size)
				size = (uint64_t)fit;
		}
		min_size = staggered(r) ? MIN_CHUNK : MIN_CHUNK_PLAIN;
		if (size < min_size)
			size = min_size;
	}
	if (size < r->total / MAX_CHUNKS + 1)
		size = r->total / MAX_CHUNKS + 1;
	return size;
}

static struct decode_chunk *new_chunk(struct run *r, size_t stream, uint64_t begin,
				      uint64_t end)
{
	struct decode_chunk *c;

	if (r->nr_chunks == r->cap_chunks) {
		size_t cap = r->cap_chunks ? 2 * r->cap_chunks : 64;
		struct slot *n = realloc(r->chunks, cap * sizeof(*n));

		if (!n)
			return NULL;
		r->chunks = n;
		r->cap_chunks = cap;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	r->chunks[r->nr_chunks].c = c;
	r->chunks[r->nr_chunks].done = false;
	r->nr_chunks++;
	c->cfg = r->cfg;
	c->stream = stream;
	c->pt = r->maps[stream].p;
	c->mapped = true;
	c->fd = r->maps[stream].f.fd;
	c->data_lo = r->maps[stream].data_lo;
	c->data_hi = r->maps[stream].data_hi;
	c->begin = begin;
	c->end = end;
	c->len = r->maps[stream].len;
	c->syms = r->syms;
	c->blocks = r->blocks;
	c->iscache = r->iscache;
	c->lines = r->lines;
	c->progress = &r->progress;
	c->tsc_hi = UINT64_MAX;
	dsink_init(&c->out, r->have_out ? &r->out : NULL);
	dsink_init(&c->tl, r->have_tl ? &r->tl : NULL);
	return c;
}

/*
 * The next chunk (under the lock): cut from where the last one ended at the first PSB
 * past next_size() (one chunk per stream with -J 1), with what that PSB+ says for the
 * chunk before it and after it. NULL when every stream is planned, or out of memory.
 */
static struct decode_chunk *claim(struct run *r)
{
	struct decode_chunk *c, next, prev;
	struct mapped *m;
	uint64_t begin, end, first_cut;

	if (r->stop || r->plan.stream >= r->cfg->nr_streams)
		return NULL;
	m = &r->maps[r->plan.stream];
	begin = r->plan.begin;
	end = m->len;
	/*
	 * --offset: libipt's offsets depend on where its decoder synchronized (its lookahead
	 * differs from a PSB on): a decoder started at a chunk's PSB prints some a packet
	 * earlier than one that ran from the stream's start, so a stream is one pass there.
	 */
	if (r->jobs > 1 && !r->cfg->show_offset) {
		uint64_t size = next_size(r, m->len - begin, !r->filled);

		/* The first chunk sized by its output fills the waiting output to its mark. */
		if (r->done_out && !r->cfg->chunk_size)
			r->filled = true;

		if (begin + size < m->len)
			end = find_psb(m, begin + size, &r->plan.buf);
	}
	first_cut = end;
	for (unsigned i = 0; end < m->len; i++) {
		size_t len = i ? CUT_READ : PLAN_READ;

		memset(&prev, 0, sizeof(prev));
		memset(&next, 0, sizeof(next));
		prev.tsc_hi = UINT64_MAX;
		if (psb_state(r->cfg, m, end, &r->plan.buf, len, &prev, &next))
			break;
		if (i + 1 == CUT_TRIES) {
			/* None read: the first, as it is (what it says is not known). */
			if (r->acct)
				r->acct->cuts_unread++;
			end = first_cut;
			memset(&prev, 0, sizeof(prev));
			prev.tsc_hi = UINT64_MAX;
			next.tsc_lo = 0;
			break;
		}
		/* No PSB after it: the chunk runs to the stream's end. */
		end = find_psb(m, end + 1, &r->plan.buf);
	}
	c = new_chunk(r, r->plan.stream, begin, end);
	if (!c) {
		r->nomem = true;
		r->stop = true;
		return NULL;
	}
	c->first = begin == 0;
	c->tsc_lo = r->plan.tsc_lo;
	if (end < m->len && r->acct)
		r->acct->cuts++;
	if (end < m->len) {
		c->have_next_ip = prev.have_next_ip;
		c->next_ip = prev.next_ip;
		c->tsc_hi = prev.tsc_hi;
		r->plan.begin = end;
		r->plan.tsc_lo = next.tsc_lo;
	} else {
		c->last = true;
		r->plan.stream++;
		r->plan.begin = 0;
		r->plan.tsc_lo = 0;
	}
	return c;
}

/* The calling thread's CPU time, nanoseconds. */
static uint64_t thread_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Under the lock: whether the merge's wait for chunk @k planned (@done: decoded) is over. */
static bool chunk_ready(const struct run *r, size_t k, bool done)
{
	if (k < r->nr_chunks)
		return !done || r->chunks[k].done;
	return r->stop || r->plan.stream >= r->cfg->nr_streams;
}

/* Under the lock: whether the merge sleeps for what is now there (wake it, unlocked). */
static bool merge_to_wake(const struct run *r)
{
	return r->merge_asleep && chunk_ready(r, r->want_k, r->want_done);
}

/*
 * What waits for its turn, at most, before a worker starts no chunk: WAIT_SHARE for each
 * worker but the one whose chunk is merged. Half the bound before: a worker a little
 * faster than the merged one got further ahead the longer the trace (a random walk's
 * reach), and the peak memory grew with it (-J 2 --branches on the loop of bench/decode:
 * 36 MB at 52 M instructions, 61 MB at 209 M).
 */
uint64_t decode_wait_mark(unsigned jobs)
{
	return WAIT_SHARE * (jobs > 1 ? jobs - 1 : 1);
}

static void *worker(void *arg)
{
	struct run *r = arg;
	struct decode_keep *keep = NULL;
	unsigned me = __atomic_fetch_add(&r->acct_next, 1, __ATOMIC_RELAXED);
	__typeof__(r->acct->w[0]) *a = r->acct && me < DECODE_ACCT_WORKERS ?
		&r->acct->w[me] : NULL;
	clockid_t clk;
	/* Its chunks' progress, read by the planning of the run's end (end_size()). */
	bool clocked = !pthread_getcpuclockid(pthread_self(), &clk);

	for (;;) {
		struct decode_chunk *c;
		uint64_t t0, t1, w0 = 0;
		size_t k;
		bool wake, self_turn;

		pthread_mutex_lock(&r->lock);
		/*
		 * The one wait: while what waits for its turn holds budget.wait_at, or
		 * AHEAD_PER_JOB chunks a worker each, start no chunk (the merge, the output's
		 * reader, is behind); a chunk already started waits at the same mark as it
		 * writes (budget.wait_at). The count bounds what a chunk holds beside its output
		 * (its diagnostics: 174 KiB with one error): a merge starved on a loaded
		 * machine let thousands of small chunks wait (88 MB, ASan, --chunk-size 16K).
		 */
		while (!r->stop && r->merged < r->nr_chunks &&
		       (__atomic_load_n(&r->budget.held, __ATOMIC_RELAXED) >= r->budget.wait_at ||
			r->nr_chunks - r->merged >= AHEAD_PER_JOB * (size_t)r->jobs)) {
			if (a && !w0)
				w0 = monotime_ns();
			pthread_cond_wait(&r->cond, &r->lock);
		}
		if (w0) {
			a->start_waits++;
			a->start_wait_ns += monotime_ns() - w0;
		}
		c = claim(r);
		k = r->nr_chunks - 1;
		self_turn = c && r->jobs == 1 && k == r->merged;
		if (c) {
			r->chunks[k].clocked = clocked;
			r->chunks[k].clk = clk;
			r->chunks[k].cpu0 = thread_ns();
		}
		if (r->acct && c) {
			uint64_t now = monotime_ns();

			if (!r->t_first)
				r->t_first = now;
			if (r->plan.stream >= r->cfg->nr_streams)
				r->t_last = now;
		}
		/*
		 * The merge gives it its turn at once if it is next (it waits for that). A
		 * chunk planned keeps the other workers waiting (unless planning stopped).
		 */
		wake = merge_to_wake(r);
		if (r->stop)
			pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		if (wake)
			pthread_cond_signal(&r->merge_cond);
		if (!c) {
			pthread_mutex_lock(&r->lock);
			pthread_cond_broadcast(&r->cond);
			pthread_cond_broadcast(&r->merge_cond);
			pthread_mutex_unlock(&r->lock);
			decode_keep_free(keep);
			if (a) {
				a->end_ns = monotime_ns() - r->t_begin;
				a->cpu_ns = thread_ns();
				dsink_thread_waits(&a->room_waits, &a->room_wait_ns);
			}
			return NULL;
		}
		/*
		 * One worker, its chunk next in line (all before it merged): it takes its turn
		 * itself, as the merge would. Left to the merge, what it wrote until the merge
		 * was scheduled waited in memory (the loop of bench/decode, -J 1 --insn: 5-8 MB
		 * more at the peak in 9 runs of 20, other work running; the merge woke 5 ms
		 * late in one so seen).
		 */
		if (self_turn) {
			dsink_promote(&c->out);
			dsink_promote(&c->tl);
		}
		t0 = thread_ns();
		decode_chunk_kept(c, &keep);
		t1 = thread_ns();
		pthread_mutex_lock(&r->lock);
		r->chunks[k].done = true;
		r->done_in += c->end - c->begin;
		r->done_ns += t1 - t0;
		if (a) {
			a->decode_cpu_ns += t1 - t0;
			a->chunks++;
		}
		/* (The text that references stand for counts as written.) */
		r->done_out += dsink_pos(&c->out) + dsink_pos(&c->tl) + c->out.ref_text +
			       c->tl.ref_text;
		/* Only the merge waits for a chunk's end. */
		wake = merge_to_wake(r);
		pthread_mutex_unlock(&r->lock);
		if (wake)
			pthread_cond_signal(&r->merge_cond);
		/* The merge may wait on the budget for this chunk's output or its end. */
		dbudget_kick(&r->budget);
	}
}

static void report(struct run *r, const struct decode_chunk *c)
{
	if (!r->io->diag)
		return;
	for (size_t i = 0; i < c->nr_diags; i++)
		r->io->diag(r->io->ctx, c->stream, &c->diags[i]);
	if (c->more_diags) {
		struct decode_diag d;

		memset(&d, 0, sizeof(d));
		d.kind = DECODE_DIAG_MORE;
		d.where = r->cfg->streams[c->stream].name;
		d.offset = c->more_diags;
		r->io->diag(r->io->ctx, c->stream, &d);
	}
}

/* What loading symbols found wrong (a stale debug file, a perf map's bad lines): warnings. */
static void symbol_notes(struct run *r)
{
	struct decode_diag d;
	struct warnings w;

	if (!r->syms || !r->io->diag)
		return;
	symcache_notes(r->syms, &w);
	memset(&d, 0, sizeof(d));
	d.kind = DECODE_DIAG_NOTE;
	d.where = "symbols";
	for (int i = 0; i < w.nr; i++) {
		snprintf(d.msg, sizeof(d.msg), "%s", w.msg[i]);
		r->io->diag(r->io->ctx, 0, &d);
	}
	if (w.dropped) {
		snprintf(d.msg, sizeof(d.msg), "... and %d more such notes", w.dropped);
		r->io->diag(r->io->ctx, 0, &d);
	}
}

static void add_stats(struct decode_stats *t, const struct decode_stats *s)
{
	t->insns += s->insns;
	t->branches += s->branches;
	t->cond += s->cond;
	t->calls += s->calls;
	t->returns += s->returns;
	t->far += s->far;
	t->events += s->events;
	t->enables += s->enables;
	t->disables += s->disables;
	t->overflows += s->overflows;
	t->errors += s->errors;
	t->gaps += s->gaps;
	t->lost += s->lost;
	t->bytes += s->bytes;
	t->fast += s->fast;
	for (int i = 0; i < DECODE_CACHES; i++)
		if (s->cache_used[i] > t->cache_used[i])
			t->cache_used[i] = s->cache_used[i];
}

/*
 * Wait (under the lock) until chunk @k is planned (@done: and decoded), or no more
 * will be; the progress line meanwhile. True when it is.
 */
static bool wait_chunk(struct run *r, size_t k, bool done)
{
	struct timespec ts;
	uint64_t w0 = 0;
	int ret;

	for (;;) {
		if (chunk_ready(r, k, done)) {
			if (w0) {
				r->acct->merge_waits[done]++;
				r->acct->merge_wait_ns[done] += monotime_ns() - w0;
			}
			return k < r->nr_chunks;
		}
		if (r->acct && !w0)
			w0 = monotime_ns();
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		r->want_k = k;
		r->want_done = done;
		r->merge_asleep = true;
		ret = pthread_cond_timedwait(&r->merge_cond, &r->lock, &ts);
		r->merge_asleep = false;
		if (ret == ETIMEDOUT && r->io->progress) {
			pthread_mutex_unlock(&r->lock);
			r->io->progress(r->io->ctx,
					__atomic_load_n(&r->progress, __ATOMIC_RELAXED), r->total);
			pthread_mutex_lock(&r->lock);
		}
	}
}

/*
 * A chunk's decoder lets go of its pages as it goes, but a page fault maps the pages
 * around it too (the kernel's fault-around, and since Linux 6.18 the whole large folio
 * of the page cache, up to 2 MiB): a chunk's first faults map again pages of the chunks
 * before it, let go of already. Small chunks (--chunk-size 16K) kept the whole trace
 * so. Once a chunk is merged, its range and the 4 MiB before it are let go of again:
 * what a later chunk maps back is let go of at that chunk's merge.
 */
#define SWEEP_BEHIND (4u << 20)
/*
 * The sweep runs once the chunks merged since the last reach SWEEP_EVERY (or the stream's
 * end), from the 4 MiB before the first of them: each madvise() that finds pages flushes
 * the other CPUs' TLBs (an IPI), and a sweep a chunk swept the same 4 MiB again and again
 * (the loop of bench/decode, -J 2 --insn: 196 chunks of 16-32 KiB, each a sweep of the
 * whole 4 MB trace). What fault-around maps back stays at most this much longer.
 */
#define SWEEP_EVERY (1u << 20)

static void drop_merged(struct run *r, const struct decode_chunk *c)
{
	struct mapped *m = &r->maps[c->stream];
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, from, to;

	if (!m->f.p || !c->mapped)
		return;
	/* (Chunks are merged in order: the ones since the last sweep start at m->swept.) */
	if (c->end < m->swept + SWEEP_EVERY && c->end < m->len)
		return;
	lo = (uintptr_t)m->f.p;
	from = (uintptr_t)(m->p + m->swept);
	m->swept = c->end;
	from = from - lo > SWEEP_BEHIND ? from - SWEEP_BEHIND : lo;
	from &= ~(page - 1);
	to = (uintptr_t)(m->p + c->end) & ~(page - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
}

/* Chunk @k's sinks at their turn for the merge: those whose output has a filter. */
struct turn {
	struct run *r;
	size_t k;
	struct dsink *s[2];
	unsigned n;
};

/* Chunk @k decoded (the run's lock is taken under the budget's: never the other way). */
static bool chunk_done(struct run *r, size_t k)
{
	bool done;

	pthread_mutex_lock(&r->lock);
	done = r->chunks[k].done;
	pthread_mutex_unlock(&r->lock);
	return done;
}

static bool turn_ready(void *arg)
{
	const struct turn *t = arg;

	for (unsigned i = 0; i < t->n; i++)
		if (dsink_turn_ready(t->s[i]))
			return true;
	return chunk_done(t->r, t->k);
}

/*
 * With -J 2 and more, the merge turns chunk @k's records into text (--calls, --timeline,
 * report: an output with a filter) while its worker decodes it (dsink_turn()): the
 * worker hands its buffers over, and the filter is the merge's work alone. Were the
 * worker to filter its chunk's output itself (dsink_promote() at once), the worker of
 * the next chunk, decoding only, ran ahead, filled its share of the waiting output and
 * waited for its turn (-J 2 --calls on the loop of bench/decode: 250-360 ms of a 1.2 s
 * run, one worker's). Output without a filter is written by its worker, as it goes
 * (a hand-over each buffer costs more than the write); so is --calls' (a seed): its
 * workers make their lines themselves before their turn (render_calls.c).
 */
static int merge_turn(struct run *r, size_t k, struct decode_chunk *c)
{
	struct turn t = { .r = r, .k = k };
	int ret = 0;

	for (int i = 0; i < 2; i++) {
		struct dsink *s = i ? &c->tl : &c->out;

		if (s->out && s->out->filter && !s->out->seed) {
			dsink_turn(s);
			t.s[t.n++] = s;
		} else if (!ret) {
			/*
			 * An output with a seed (--calls) knows its depth from the turn on:
			 * its worker writes its own lines from then on, as -J 1 does, not
			 * into a stage copied into the waiting output and written again by
			 * the merge (the walk's -J 2: the records of about half its text,
			 * 130 of 270 MB, were made into lines that way).
			 */
			if (s->out && s->out->seed)
				dsink_turn(s);
			/* Its writer must not wait for the memory this chunk's end gives back. */
			ret = dsink_promote(s);
		}
	}
	while (t.n && !ret) {
		uint64_t w0 = 0;
		bool ok;

		for (unsigned i = 0; i < t.n && !ret; i++)
			ret = dsink_pass(t.s[i]);
		if (ret || chunk_done(r, k))
			break;
		if (r->acct)
			w0 = monotime_ns();
		ok = dbudget_wait(&r->budget, turn_ready, &t, 250000000);
		if (r->acct) {
			r->acct->merge_waits[2]++;
			r->acct->merge_wait_ns[2] += monotime_ns() - w0;
		}
		if (!ok && r->io->progress)
			r->io->progress(r->io->ctx, __atomic_load_n(&r->progress, __ATOMIC_RELAXED),
					r->total);
	}
	return ret;
}

/*
 * The merge: chunk after chunk in their order. A chunk gets its turn (what it let go
 * of reaches the output) as soon as it is planned, and is done with when it is
 * decoded; the workers wait for it only when the waiting output holds budget.wait_at.
 */
static int merge(struct run *r, struct decode_stats *stats, struct error *e)
{
	int ret = 0;

	for (size_t k = 0;; k++) {
		struct decode_chunk *c;

		pthread_mutex_lock(&r->lock);
		if (!wait_chunk(r, k, false)) {
			pthread_mutex_unlock(&r->lock);
			break;
		}
		c = r->chunks[k].c;
		pthread_mutex_unlock(&r->lock);
		if (!ret) {
			/* After an error too: the worker writes on (dout drops it). */
			int t = r->jobs > 1 ? merge_turn(r, k, c) : 0;
			int a = dsink_promote(&c->out), b = dsink_promote(&c->tl);

			a = t ? t : a;
			if (a || b)
				ret = err_runtime(e, a ? a : b, "cannot write the output: %s",
						  strerror(-(a ? a : b)));
		}
		pthread_mutex_lock(&r->lock);
		/* The memory it held is free: a worker may be waiting for that. */
		pthread_cond_broadcast(&r->cond);
		wait_chunk(r, k, true);
		pthread_mutex_unlock(&r->lock);
		if (!ret && c->ret) {
			if (c->error)
				*e = *c->error;
			else
				err_runtime(e, c->ret, "%s: %s", r->cfg->streams[c->stream].name,
					    strerror(-c->ret));
			ret = c->ret;
		}
		free(c->error);
		c->error = NULL;
		drop_merged(r, c);
		if (!ret)
			report(r, c);
		add_stats(&stats[c->stream], &c->stats);
		dsink_destroy(&c->out);
		dsink_destroy(&c->tl);
		free(c->diags);
		c->diags = NULL;
		pthread_mutex_lock(&r->lock);
		r->merged = k + 1;
		if (ret)
			r->stop = true;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		if (ret)
			break;
	}
	if (!ret && r->nomem)
		ret = err_runtime(e, -ENOMEM, "out of memory");
	return ret;
}

static int outputs_open(struct run *r, struct error *e)
{
	const struct decode_io *io = r->io;

	r->out_rd = render_find(r->cfg, RENDER_OUT);
	r->tl_rd = render_find(r->cfg, RENDER_TIMELINE);
	if (io->out_fd >= 0 && r->out_rd && r->out_rd->put) {
		if (render_open(&r->out, io->out_fd, r->out_rd, r->cfg))
			return err_runtime(e, -ENOMEM, "out of memory");
		r->have_out = true;
	}
	if (io->timeline_fd >= 0 && r->tl_rd) {
		if (render_open(&r->tl, io->timeline_fd, r->tl_rd, r->cfg))
			return err_runtime(e, -ENOMEM, "out of memory");
		r->have_tl = true;
	}
	return 0;
}

static int outputs_close(struct run *r, int ret, struct error *e)
{
	int a = 0, b = 0;

	if (r->have_tl)
		b = render_close(&r->tl, r->tl_rd, !ret);
	if (r->have_out)
		a = render_close(&r->out, r->out_rd, !ret);
	if (!ret && (a || b))
		ret = err_runtime(e, a ? a : b, "cannot write the %s: %s", a ? "output" :
				  "timeline", strerror(-(a ? a : b)));
	return ret;
}

static int prepare(struct run *r, struct error *e)
{
	struct decode_config *cfg = r->cfg;
	int ret;

	ret = decode_check_files(cfg, e);
	if (ret)
		return ret;
	for (size_t s = 0; s < cfg->nr_streams; s++)
		for (size_t i = 0; i < cfg->streams[s].nr_sb; i++) {
			ret = dsb_file_load(&cfg->streams[s].sb[i], e);
			if (ret)
				return ret;
		}
	r->maps = calloc(cfg->nr_streams ? cfg->nr_streams : 1, sizeof(*r->maps));
	r->syms = symcache_new();
	if (!r->maps || !r->syms ||
	    symcache_set_paths(r->syms, cfg->sysroot, cfg->perfmap_dir))
		return err_runtime(e, -ENOMEM, "out of memory");
	for (size_t s = 0; s < cfg->nr_streams; s++) {
		ret = map_stream(&cfg->streams[s], &r->maps[s], e);
		if (ret)
			return ret;
		r->total += r->maps[s].len;
	}
	r->plan.buf.p = malloc(PLAN_READ);
	if (!r->plan.buf.p)
		return err_runtime(e, -ENOMEM, "out of memory");
	ret = outputs_open(r, e);
	if (ret)
		return ret;
	r->out.budget = &r->budget;
	r->tl.budget = &r->budget;
	return 0;
}

static void cleanup(struct run *r)
{
	struct decode_config *cfg = r->cfg;

	for (size_t k = 0; k < r->nr_chunks; k++) {
		struct decode_chunk *c = r->chunks[k].c;

		/* Merged ones are empty already. */
		dsink_destroy(&c->out);
		dsink_destroy(&c->tl);
		free(c->diags);
		free(c->error);
		free(c);
	}
	free(r->chunks);
	free(r->plan.buf.p);
	if (r->maps)
		for (size_t s = 0; s < cfg->nr_streams; s++)
			unmap_stream(&r->maps[s]);
	free(r->maps);
	symcache_free(r->syms);
	fastflow_table_free(r->blocks);
	/* After the workers' images, whose sections it holds. */
	image_iscache_free(r->iscache);
	insnblk_shared_free(r->lines);
	for (size_t s = 0; s < cfg->nr_streams; s++)
		for (size_t i = 0; i < cfg->streams[s].nr_sb; i++)
			dsb_file_release(&cfg->streams[s].sb[i]);
}

/*
 * The CPUs the process may use (its affinity mask); but one when the machine has no CPU
 * to spare (the 1-minute load average at least the CPUs online): there a second thread
 * only adds the cost of the chunk seams.
 */
unsigned decode_default_jobs(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;
	double load;
	int n;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	n = CPU_COUNT(&set);
	if (n > 1 && online > 0 && getloadavg(&load, 1) == 1 && load >= (double)online)
		return 1;
	return n < 1 ? 1 : n > 256 ? 256 : (unsigned)n;
}

/* @jobs workers, each on a DECODE_CHUNK_STACK stack; those started are counted in @n. */
static int start_workers(struct run *r, pthread_t *threads, unsigned jobs, unsigned *n,
			 struct error *e)
{
	pthread_attr_t attr;
	int ret = 0;

	if (pthread_attr_init(&attr))
		return err_runtime(e, -ENOMEM, "cannot start a decoder thread");
	if (pthread_attr_setstacksize(&attr, DECODE_CHUNK_STACK))
		ret = err_runtime(e, -ENOMEM, "cannot give a decoder thread its stack");
	while (!ret && *n < jobs) {
		if (pthread_create(&threads[*n], &attr, worker, r))
			ret = err_runtime(e, -EAGAIN, "cannot start a decoder thread");
		else
			(*n)++;
	}
	pthread_attr_destroy(&attr);
	return ret;
}

int decode_run(struct decode_config *cfg, const struct decode_io *io,
	       struct decode_stats *stats, struct error *e)
{
	struct run r;
	pthread_t *threads = NULL;
	unsigned nthreads = 0, i;
	int ret;

	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	r.io = io;
	r.jobs = cfg->jobs ? cfg->jobs : decode_default_jobs();
	r.acct = io->acct;
	if (r.acct) {
		memset(r.acct, 0, sizeof(*r.acct));
		r.t_begin = monotime_ns();
	}
	dbudget_init(&r.budget, MEM_BOUND);
	/*
	 * And a chunk's writer waits there too (for the merge to give back memory, or for
	 * its turn), not only the start of a chunk: a worker ahead went on writing into
	 * memory up to the bound, and the peak grew with the trace's length (-J 2 --insn
	 * on the loop of bench/decode: 100 MB at 52 M instructions, 107 MB at 209 M; 53 and
	 * 55 MB so).
	 */
	r.budget.wait_at = decode_wait_mark(r.jobs);
	pthread_mutex_init(&r.lock, NULL);
	pthread_cond_init(&r.cond, NULL);
	pthread_cond_init(&r.merge_cond, NULL);
	memset(stats, 0, cfg->nr_streams * sizeof(*stats));
	ret = prepare(&r, e);
	/* Each block cut once for all workers (no memory for it: each cuts its own). */
	if (!ret && r.jobs > 1)
		r.blocks = fastflow_table_new();
	/*
	 * And each section once for all workers, with libipt's block cache of it: made per
	 * worker, each cache (4 bytes a byte of code) was filled by each, and its pages,
	 * calloc'd, read before written, each took a copy on write and a TLB flush of the
	 * other CPU (no memory for it: each has its own). The one cache's pages are written
	 * when libipt makes it (iptfill.h): read first, each still took that flush.
	 */
	if (!ret && r.jobs > 1) {
		iptfill_hook();
		r.iscache = image_iscache_new();
	}
	if (!ret && cfg->mode == DECODE_INSN)
		r.lines = insnblk_shared_new();
	if (!ret) {
		threads = calloc(r.jobs, sizeof(*threads));
		if (!threads)
			ret = err_runtime(e, -ENOMEM, "out of memory");
		if (r.acct)
			r.acct->prep_cpu_ns = thread_ns();
		if (!ret)
			ret = start_workers(&r, threads, r.jobs, &nthreads, e);
	}
	if (!ret)
		ret = merge(&r, stats, e);
	pthread_mutex_lock(&r.lock);
	r.stop = true;
	pthread_cond_broadcast(&r.cond);
	pthread_mutex_unlock(&r.lock);
	/* A worker waiting for memory the merge would have given back goes on. */
	dbudget_stop(&r.budget);
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	if (r.have_out || r.have_tl)
		ret = outputs_close(&r, ret, e);
	symbol_notes(&r);
	for (i = 0; r.acct && r.maps && i < cfg->nr_streams; i++)
		r.acct->plan_bytes += r.maps[i].plan_bytes;
	cleanup(&r);
	if (r.acct) {
		uint64_t end = monotime_ns();

		r.acct->wall_ns = end - r.t_begin;
		r.acct->start_ns = r.t_first ? r.t_first - r.t_begin : 0;
		r.acct->tail_ns = r.t_last ? end - r.t_last : 0;
		r.acct->main_cpu_ns = thread_ns();
		r.acct->workers = nthreads < DECODE_ACCT_WORKERS ? nthreads : DECODE_ACCT_WORKERS;
	}
	dbudget_destroy(&r.budget);
	pthread_cond_destroy(&r.cond);
	pthread_cond_destroy(&r.merge_cond);
	pthread_mutex_destroy(&r.lock);
	return ret;
}
