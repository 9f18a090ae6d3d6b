// SPDX-License-Identifier: MIT
/*
 * The fast flow path (fastflow.h): a PSB segment's packets decoded here, over blocks of
 * code cut once with capstone. What libipt's block decoder does with the same packets,
 * for the plainest segments; the rest is the caller's (libipt) to decode.
 */
#include <capstone/capstone.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "csopen.h"
#include "disasm.h"
#include "fastflow.h"
#include "memfill.h"

/* Instructions in a block at most (a longer run without a branch is cut). */
#define BLOCK_INSNS FASTFLOW_BLOCK_INSNS
/* Direct branches between two that read trace, at most (more: not fast). */
#define PEND_MAX 64
/* Blocks run without reading trace, at most (a cycle of direct jumps: not fast). */
#define STEPS_MAX 65536
/* Slots of the index: twice the blocks. */
#define IDX_SLOTS (2 * FASTFLOW_BLOCKS)
/* libipt's return stack. */
#define RETSTACK 64
/* Blocks run between two that read trace whose instructions wait (--insn; more: not fast). */
#define PBLK_MAX 256
/* TIPs read ahead of the flow (tip_ahead()). */
#define TIPS_AHEAD 3
/*
 * The flow's loop (fastflow_segment() and next_packet()) at 32 bytes: where the code
 * before left them moved bench/decode's walk by up to 4.7 % at -J 1 (--stats; the same
 * instructions at another address, paired runs), so that a change elsewhere in this file
 * read as one of the loop. At 64 the loop's --branches took 6 % more, the walk 1 % less.
 */
#define HOT __attribute__((aligned(32)))

enum ffcls {
	FF_NONE,	/* an empty slot */
	FF_OTHER,	/* no branch: the block was cut, it goes on past its last instruction */
	FF_COND,
	FF_JMP,
	FF_CALL,
	FF_RET,
	FF_IJMP,
	FF_ICALL,
};

/* A block, 32 bytes: the blocks lie together, in the order they were cut. */
struct ffblk {
	uint64_t ip;		/* the first instruction */
	uint64_t target;	/* a direct branch's */
	uint32_t last;		/* the last instruction, from ip */
	uint16_t ninsn;
	uint8_t size;		/* of the last instruction */
	uint8_t cls;		/* enum ffcls */
	/* Where the block went last (taken, not taken): a slot + 1, checked before use. */
	uint32_t next[2];
};

/*
 * The blocks, a table of its own (fastflow_table) or shared by the threads of a run. A
 * shared one is cut into without a lock: each thread claims SHARE_RUN slots at a time
 * (nblk: the slots claimed) and writes its blocks there, then names each in the index with
 * a compare-and-swap of an empty slot (release; a lookup reads it with acquire). A block
 * never changes after but for its links, hints read (acquire) and written (release)
 * atomically, only ever naming a block in the index, and checked before use. A full shared
 * table is not emptied: a thread goes on in a table of its own.
 */
struct fastflow_table {
	struct ffblk *blk;	/* FASTFLOW_BLOCKS, 64-byte aligned; nblk used */
	uint32_t *idx;		/* IDX_SLOTS: a block's slot + 1 by its address, 0: empty */
	bool shared;
	bool filled;		/* memfill() done (shared: under lock) */
	/*
	 * What a cut writes (shared: a claim), in a line of its own: the pointers above are
	 * read at each step.
	 */
	uint32_t nblk __attribute__((aligned(64)));
	pthread_mutex_t lock;	/* with shared: who fills the index */
};

struct fastflow {
	struct image_store *img;
	unsigned errata;	/* FF_E_*: the errata whose packets this path must refuse */
	bool timed;		/* time only from a PSB+'s TSC (fastflow_set_timed()) */
	bool calls_only;	/* fastflow_set_calls_only() */
	csh cs;
	cs_insn *ci;
	uint64_t built;
	struct fastflow_table *t;	/* the blocks: own, or the shared one (not full) */
	struct fastflow_table *own;	/* NULL until needed */
	struct fastflow_table *shared;
	/*
	 * t's nblk as this thread last read it (a bound of the blocks it may read, for the
	 * links' checks): the shared table's nblk is in a line the other threads' cuts write,
	 * and read at every step it moved between the CPUs at each of them (-J 2).
	 */
	uint32_t seen;
	uint32_t most;		/* blocks of the table it cuts into, at most */
	uint64_t epoch;		/* times its own table was emptied */
	fastflow_insn_fn *insn_fn;	/* the instructions of each block run (--insn), or NULL */
	void *insn_ctx;
	fastflow_batch_fn *batch_fn;	/* fastflow_set_batch(), or NULL */
	struct fastflow_cr *cr;		/* its batch: FASTFLOW_BATCH, ncr used */
	unsigned ncr;
	uint32_t lo, hi;	/* the shared table's slots claimed and not yet used */
};

/*
 * The index's pages, resident and written before a lookup reads them (memfill.h): it is
 * read before each insert (a copy on write a page, and at -J 2 a TLB flush). Not the
 * blocks: each is written before it is read, and filled whole they cost the loop of
 * bench/decode 1 MiB of RSS for the few it cuts.
 */
static void fill(struct fastflow_table *t)
{
	memfill(t->idx, IDX_SLOTS * sizeof(*t->idx));
	t->filled = true;
}

static struct fastflow_table *table_new(bool shared)
{
	struct fastflow_table *t = aligned_alloc(64, sizeof(*t));

	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->blk = aligned_alloc(64, FASTFLOW_BLOCKS * sizeof(struct ffblk));
	t->idx = calloc(IDX_SLOTS, sizeof(*t->idx));
	if (!t->blk || !t->idx || (shared && memfill_lock_init(&t->lock))) {
		free(t->idx);
		free(t->blk);
		free(t);
		return NULL;
	}
	t->shared = shared;
	/* A worker's own table is made when it cuts into it: written now, read after. */
	if (!shared)
		fill(t);
	return t;
}

struct fastflow_table *fastflow_table_new(void)
{
	return table_new(true);
}

void fastflow_table_free(struct fastflow_table *t)
{
	if (!t)
		return;
	if (t->shared)
		pthread_mutex_destroy(&t->lock);
	free(t->idx);
	free(t->blk);
	free(t);
}

struct fastflow *fastflow_new(struct image_store *img)
{
	struct fastflow *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->img = img;
	if (csopen(CS_MODE_64, &f->cs) != CS_ERR_OK) {
		free(f);
		return NULL;
	}
	f->ci = cs_malloc(f->cs);
	if (!f->ci) {
		cs_close(&f->cs);
		free(f);
		return NULL;
	}
	return f;
}

void fastflow_share(struct fastflow *f, struct fastflow_table *t)
{
	if (f->t || !t || !t->shared)
		return;
	/* Filled by its first user: a run whose workers take no fast path leaves it be. */
	pthread_mutex_lock(&t->lock);
	if (!t->filled)
		fill(t);
	pthread_mutex_unlock(&t->lock);
	f->t = f->shared = t;
	f->seen = 0;
	f->lo = f->hi = 0;
}

void fastflow_free(struct fastflow *f)
{
	if (!f)
		return;
	cs_free(f->ci, 1);
	cs_close(&f->cs);
	fastflow_table_free(f->own);
	free(f->cr);
	free(f);
}

/* A bound of the blocks in @t a link may name (all; in a shared table: the slots claimed). */
static inline uint32_t used(const struct fastflow_table *t)
{
	return __atomic_load_n(&t->nblk, __ATOMIC_ACQUIRE);
}

/*
 * Whether slot + 1 @i (a link, a hint) names a block of f->t that may be read: below the
 * bound last read, else below nblk now (read again, acquire, only then).
 */
static inline bool held(struct fastflow *f, uint32_t i)
{
	return i && (i <= f->seen || i <= (f->seen = used(f->t)));
}

/* A link of @b (slot + 1, or 0). */
static inline uint32_t link_of(const struct ffblk *b, int way)
{
	/* Acquire: the block it names may have been cut by another thread (x86: a plain load). */
	return __atomic_load_n(&b->next[way], __ATOMIC_ACQUIRE);
}

uint64_t fastflow_built(const struct fastflow *f)
{
	return f->built;
}

uint64_t fastflow_epoch(const struct fastflow *f)
{
	return f->epoch;
}

void fastflow_set_calls_only(struct fastflow *f, bool on)
{
	f->calls_only = on;
}

bool fastflow_set_batch(struct fastflow *f, fastflow_batch_fn *fn)
{
	if (fn && !f->cr && !(f->cr = malloc(FASTFLOW_BATCH * sizeof(*f->cr)))) {
		f->batch_fn = NULL;
		return false;
	}
	f->batch_fn = fn;
	return true;
}

void fastflow_set_insn(struct fastflow *f, fastflow_insn_fn *fn, void *ctx)
{
	f->insn_fn = fn;
	f->insn_ctx = ctx;
}

uint32_t fastflow_blocks_used(const struct fastflow *f)
{
	return f->most;
}

/* ---- code ---- */

/*
 * The class of @ci (@raw its bytes) and a direct branch's target, or -1: an instruction
 * this path leaves to libipt (far transfers, ptwrite, prefixes that change a branch).
 */
static int classify(const cs_insn *ci, uint64_t *target)
{
	const uint8_t *b = ci->bytes;
	size_t i = 0, n = ci->size;
	int64_t rel;

	if (ci->id == X86_INS_INVALID)
		return -1;
	switch (disasm_class(ci->id)) {
	case ptic_call: case ptic_return: case ptic_jump: case ptic_cond_jump:
		break;
	case ptic_other:
		return FF_OTHER;
	default:	/* far transfers */
		return -1;
	}
	if (ci->id == X86_INS_RET)
		return FF_RET;
	/* Branch hints and BND: nothing else in front of a near branch here. */
	while (i < n && (b[i] == 0x2e || b[i] == 0x3e || b[i] == 0xf2))
		i++;
	if (i < n && (b[i] & 0xf0) == 0x40 && i + 1 < n && b[i + 1] == 0xff)
		i++;	/* a REX prefix of an indirect branch: call r11 */
	if (i >= n)
		return -1;
	if (b[i] == 0xff) {
		uint8_t reg = i + 1 < n ? (b[i + 1] >> 3) & 7 : 0;

		if (ci->id == X86_INS_CALL && reg == 2)
			return FF_ICALL;
		if (ci->id == X86_INS_JMP && reg == 4)
			return FF_IJMP;
		return -1;
	}
	if (b[i] == 0xeb || (b[i] >= 0x70 && b[i] <= 0x7f) || (b[i] >= 0xe0 && b[i] <= 0xe3)) {
		if (i + 2 != n)
			return -1;
		rel = (int8_t)b[i + 1];
	} else if (b[i] == 0xe8 || b[i] == 0xe9 ||
		   (b[i] == 0x0f && i + 1 < n && b[i + 1] >= 0x80 && b[i + 1] <= 0x8f)) {
		size_t at = i + (b[i] == 0x0f ? 2 : 1);
		int32_t r;

		if (at + 4 != n)
			return -1;
		memcpy(&r, b + at, 4);
		rel = r;
	} else {
		return -1;
	}
	*target = ci->address + n + (uint64_t)rel;
	switch (ci->id) {
	case X86_INS_CALL: return FF_CALL;
	case X86_INS_JMP: return FF_JMP;
	default: return FF_COND;
	}
}

/* Bytes of code read at a time. */
#define READ_STEP 256u

/*
 * Up to READ_STEP bytes of code at @ip into @buf: the number read, 0 when none. @isid and
 * @end: its section, found on the first read (isid 0).
 */
static size_t code_at(struct fastflow *f, uint64_t ip, uint8_t *buf, int *isid, uint64_t *end)
{
	size_t len;
	int got;

	if (!*isid) {
		*isid = image_base_find(f->img, ip, end);
		if (!*isid)
			return 0;
	}
	if (ip >= *end)
		return 0;
	len = *end - ip < READ_STEP ? (size_t)(*end - ip) : READ_STEP;
	got = image_read(f->img, *isid, ip, buf, len);
	return got > 0 ? (size_t)got : 0;
}

/*
 * The next instruction at @addr into f->ci, from @buf (@len bytes left at @code), reading
 * more of the section when it runs out. False: not an instruction capstone knows.
 */
static bool next_insn(struct fastflow *f, uint8_t *buf, const uint8_t **code, size_t *len,
		      uint64_t *addr, int *isid, uint64_t *end)
{
	if (*len < 16) {
		size_t got;

		/* What is left, then more: an instruction may straddle two reads. */
		memmove(buf, *code, *len);
		got = code_at(f, *addr + *len, buf + *len, isid, end);
		*len += got;
		*code = buf;
	}
	return *len && cs_disasm_iter(f->cs, code, len, addr, f->ci);
}

/* Block @e from @ip: @n instructions, f->ci the last (of class @cls, to @target), no link. */
static inline void blk_write(const struct fastflow *f, struct ffblk *e, uint64_t ip, uint32_t n,
			     int cls, uint64_t target)
{
	e->ip = ip;
	e->last = (uint32_t)(f->ci->address - ip);
	e->size = (uint8_t)f->ci->size;
	e->ninsn = (uint16_t)n;
	e->cls = (uint8_t)cls;
	e->target = target;
	e->next[0] = e->next[1] = 0;
}

/* A block cut from @ip (f->ci its last instruction) into @t at index @slot. */
static struct ffblk *put(struct fastflow *f, struct fastflow_table *t, size_t slot,
			 uint64_t ip, uint32_t n, int cls, uint64_t target)
{
	struct ffblk *e = &t->blk[t->nblk];

	blk_write(f, e, ip, n, cls, target);
	__atomic_store_n(&t->nblk, t->nblk + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&t->idx[slot], t->nblk, __ATOMIC_RELEASE);
	if (t->nblk > f->most)
		f->most = t->nblk;
	f->built++;
	return e;
}

/* Where the search for @ip in an index starts. */
static inline size_t idx_slot(uint64_t ip)
{
	return (size_t)((ip * 0x9e3779b97f4a7c15ull) >> (64 - 16));
}

/* The block at @ip in @t, or NULL; @slot: where the search ended (an empty slot). */
static inline struct ffblk *lookup(struct fastflow_table *t, uint64_t ip, size_t *slot)
{
	size_t k = idx_slot(ip);
	uint32_t i;

	for (; (i = __atomic_load_n(&t->idx[k], __ATOMIC_ACQUIRE)); k = (k + 1) % IDX_SLOTS)
		if (t->blk[i - 1].ip == ip)
			return &t->blk[i - 1];
	*slot = k;
	return NULL;
}

/*
 * Slots of the shared table a thread claims at once. The table's lock was taken at each
 * cut, and its line (with nblk's) went between the CPUs at each (the walk of bench/decode,
 * --stats -J 2: ~20,000 cuts, most of them while both workers cut, 2 % of the run's
 * samples in the lock): a claim now writes that line once a SHARE_RUN cuts, and each thread
 * writes its blocks into lines of its own. 8 KiB of blocks: made resident as claimed (a
 * cut into a page not written yet is a copy of the zero page, at -J 2 a TLB flush of the
 * other CPU); at most SHARE_RUN slots a thread left unused when the table fills.
 */
#define SHARE_RUN 256

/* A block cut from @ip into the shared @t, the index's search for it ended at @slot. */
static struct ffblk *put_shared(struct fastflow *f, struct fastflow_table *t, size_t slot,
				uint64_t ip, uint32_t n, int cls, uint64_t target)
{
	struct ffblk *e;
	uint32_t i;

	if (f->lo == f->hi) {
		uint32_t to;

		i = __atomic_load_n(&t->nblk, __ATOMIC_RELAXED);
		do {
			if (i >= FASTFLOW_BLOCKS)
				return NULL;
			to = i + SHARE_RUN < FASTFLOW_BLOCKS ? i + SHARE_RUN : FASTFLOW_BLOCKS;
		} while (!__atomic_compare_exchange_n(&t->nblk, &i, to, false, __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED));
		f->lo = i;
		f->hi = to;
		memresident(&t->blk[i], (to - i) * sizeof(*t->blk));
	}
	e = &t->blk[f->lo];
	blk_write(f, e, ip, n, cls, target);
	/* Slots are never emptied: those before @slot stay other blocks'. */
	for (;; slot = (slot + 1) % IDX_SLOTS) {
		i = 0;
		if (__atomic_compare_exchange_n(&t->idx[slot], &i, f->lo + 1, false,
						__ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			break;
		/* Another thread cut it meanwhile: this slot is used for the next cut. */
		if (t->blk[i - 1].ip == ip)
			return &t->blk[i - 1];
	}
	f->lo++;
	if (f->hi > f->most)
		f->most = f->hi;
	f->built++;
	return e;
}

/*
 * The block at @ip: from the table, or cut now; NULL when this path cannot. A full table
 * of its own is emptied (links into it are checked before use).
 */
static const struct ffblk *block(struct fastflow *f, uint64_t ip)
{
	uint64_t end = 0, addr = ip, target = 0;
	uint8_t buf[READ_STEP + 16];
	const uint8_t *code = buf;
	struct fastflow_table *t = f->t;
	struct ffblk *e;
	uint32_t n = 0;
	size_t len = 0, slot;
	int isid = 0, cls = FF_OTHER;

	if (!t) {
		t = f->t = f->own = table_new(false);
		if (!t)
			return NULL;
		f->seen = 0;
	}
	e = lookup(t, ip, &slot);
	if (e)
		return e;
	for (;;) {
		if (!next_insn(f, buf, &code, &len, &addr, &isid, &end))
			return NULL;
		n++;
		cls = classify(f->ci, &target);
		if (cls < 0)
			return NULL;
		if (cls != FF_OTHER || n == BLOCK_INSNS)
			break;
	}
	if (t->shared) {
		e = put_shared(f, t, slot, ip, n, cls, target);
		if (e)
			return e;
		/* Full: this thread goes on in a table of its own. */
		if (!f->own)
			f->own = table_new(false);
		if (!f->own)
			return NULL;
		t = f->t = f->own;
		f->seen = 0;
		e = lookup(t, ip, &slot);
		if (e)
			return e;
	}
	if (t->nblk == FASTFLOW_BLOCKS) {
		memset(t->idx, 0, IDX_SLOTS * sizeof(*t->idx));
		t->nblk = 0;
		f->seen = 0;
		f->epoch++;
		lookup(t, ip, &slot);
	}
	return put(f, t, slot, ip, n, cls, target);
}

/* @b's slot + 1 in the table this thread cuts into, 0: not one of it (a return's hint). */
static inline uint32_t site_of(const struct fastflow *f, const struct ffblk *b)
{
	const struct fastflow_table *t = f->t;

	return b >= t->blk && b < t->blk + FASTFLOW_BLOCKS ? (uint32_t)(b - t->blk) + 1 : 0;
}

/* The block at @ip, where @b went (@way: 0 taken, 1 not), through its link if it holds. */
static inline const struct ffblk *follow(struct fastflow *f, const struct ffblk *b, int way,
					 uint64_t ip)
{
	uint32_t i = link_of(b, way);
	const struct ffblk *n;
	struct fastflow_table *t = f->t;

	if (t && held(f, i) && t->blk[i - 1].ip == ip)
		return &t->blk[i - 1];
	n = block(f, ip);
	/*
	 * (@b may have moved: a link is only a hint, checked as above. Both in the table this
	 * thread now cuts into: a link is a slot of it.)
	 */
	t = f->t;
	if (n && b >= t->blk && b < t->blk + FASTFLOW_BLOCKS)
		__atomic_store_n(&((struct ffblk *)b)->next[way], (uint32_t)(n - t->blk) + 1,
				 __ATOMIC_RELEASE);
	return n;
}

/* Instructions from @ip up to @to (not counting it), in one block's run; -1: not on one. */
static long count_to(struct fastflow *f, uint64_t ip, uint64_t to)
{
	uint64_t end = 0, addr = ip;
	uint8_t buf[READ_STEP + 16];
	const uint8_t *code = buf;
	size_t len = 0;
	int isid = 0;
	long n = 0;

	while (addr < to) {
		if (!next_insn(f, buf, &code, &len, &addr, &isid, &end))
			return -1;
		n++;
	}
	return addr == to ? n : -1;
}

unsigned fastflow_insns(struct fastflow *f, uint64_t ip, unsigned n, struct pt_insn *out)
{
	uint64_t end = 0, addr = ip;
	uint8_t buf[READ_STEP + 16];
	const uint8_t *code = buf;
	size_t len = 0;
	int isid = 0;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (!next_insn(f, buf, &code, &len, &addr, &isid, &end))
			break;
		memset(&out[i], 0, sizeof(out[i]));
		out[i].ip = f->ci->address;
		out[i].isid = isid;
		out[i].mode = ptem_64bit;
		out[i].size = (uint8_t)f->ci->size;
		memcpy(out[i].raw, f->ci->bytes, f->ci->size);
	}
	return i;
}

/* ---- packets ---- */

struct seg {
	const uint8_t *buf;
	size_t len, pos;
	unsigned errata;	/* fastflow's */
	bool timed;		/* fastflow's */
	bool in_psb;		/* in a PSB+ (psb_plus()) */
	bool has_tsc;		/* its TSC, in tsc_val */
	uint64_t tsc_val;
	bool insn;		/* instructions are shown: not those of a transaction */
	bool tsc, tma;		/* since the PSB: a TSC, and a TMA after it (libipt's pt_time) */
	uint64_t last_ip;
	uint64_t tnt;		/* TNT bits not used yet, the next one the highest */
	unsigned ntnt;
	uint64_t tip;		/* the last TIP's IP */
};

enum pk {
	PK_TNT,
	PK_TIP,
	PK_PSB,
	PK_FAIL,
};

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* An IP packet's IP at @p (its header byte): into s->last_ip; false: suppressed or bad. */
static inline bool ip_packet(struct seg *s, const uint8_t *p, size_t *size)
{
	static const uint8_t bytes[8] = { 0, 2, 4, 6, 6, 0, 8, 0 };
	unsigned ipc = p[0] >> 5, n = bytes[ipc];
	uint64_t v;

	if (!n || s->pos + 1 + n > s->len)
		return false;
	if (s->pos + 9 <= s->len) {	/* one load (x86: little-endian), the IP's bytes kept */
		memcpy(&v, p + 1, 8);
		if (n < 8)
			v &= (1ull << (8 * n)) - 1;
	} else {
		v = le(p + 1, n);
	}
	switch (ipc) {
	case 1: s->last_ip = (s->last_ip & ~0xffffull) | v; break;
	case 2: s->last_ip = (s->last_ip & ~0xffffffffull) | v; break;
	case 3: s->last_ip = (uint64_t)((int64_t)(v << 16) >> 16); break;
	case 4: s->last_ip = (s->last_ip & ~0xffffffffffffull) | v; break;
	default: s->last_ip = v; break;
	}
	*size = 1 + n;
	return true;
}

/*
 * The size of a timing or PAD packet at s->pos (skipped anywhere), or 0: also for one that
 * libipt's decoder would fail on or read otherwise (fastflow.h, "timing packets"): a CYC
 * longer than pt_pkt_read_cyc() takes, a TMA with reserved bits set (SKZ84 or not), a TMA
 * that pt_time_update_tma() refuses (no TSC before it in this segment, or a second one), and
 * with SKD007 the 2-byte CYC that libipt reads as the first byte of an OVF.
 */
static size_t skip_size(struct seg *s)
{
	const uint8_t *p = s->buf + s->pos;
	size_t left = s->len - s->pos, n;

	if (p[0] == 0x00)
		return 1;
	if (s->timed && !(p[0] == 0x19 && s->in_psb))
		return 0;
	if (p[0] == 0x19) {
		if (left < 8)
			return 0;
		s->has_tsc = true;
		s->tsc_val = le(p + 1, 7);
		s->tsc = true;
		s->tma = false;
		return 8;
	}
	if (p[0] == 0x59)
		return left >= 2 ? 2 : 0;
	if ((p[0] & 3) == 3) {		/* CYC */
		if (!(p[0] & 4))
			return 1;
		/* At most 8 bytes after the first: pt_pkt_read_cyc()'s bad packet else. */
		for (n = 1; n < left && n <= 8; n++) {
			if (p[n] & 1)
				continue;
			/* SKD007: libipt takes CYC, 0x02 before an 0xf3 as an OVF. */
			if ((s->errata & FF_E_SKD007) && n == 1 && p[1] == 0x02 &&
			    (left < 3 || p[2] == 0xf3))
				return 0;
			return n + 1;
		}
		return 0;
	}
	if (p[0] == 0x02 && left >= 2 && p[1] == 0x73) {	/* TMA */
		if (left < 7 || p[4] || (p[6] & 0xfe) || !s->tsc || s->tma)
			return 0;
		s->tma = true;
		return 7;
	}
	return 0;
}

/*
 * BDM70 (pt_evt_check_bdm70()): libipt takes a PSB+'s FUP as tracing off when the first
 * packet after it that is not one of a PSB+'s (timing, PAD, CBR, PIP, MODE, VMCS, MNT,
 * PSBEND) is a TIP.PGE. Whether that can be so after the PSBEND at @at: true when it is, or
 * when the buffer ends before another packet says it is not.
 */
static bool bdm70_pge(const struct seg *s, size_t at)
{
	struct seg t = *s;

	t.errata = 0;
	t.timed = false;	/* only whether a TIP.PGE follows */
	t.tsc = true;		/* only sizes here: the TMA is not judged twice */
	t.tma = false;
	for (t.pos = at; t.pos < t.len;) {
		const uint8_t *p = t.buf + t.pos;
		size_t left = t.len - t.pos, n = skip_size(&t);

		t.tma = false;
		if (n) {
			t.pos += n;
			continue;
		}
		if ((p[0] & 0x1f) == 0x11)			/* TIP.PGE */
			return true;
		if (p[0] == 0x99) {
			n = 2;					/* MODE */
		} else if (p[0] == 0x02 && left >= 2) {
			switch (p[1]) {
			case 0x23: n = 2; break;		/* PSBEND */
			case 0x03: n = 4; break;		/* CBR */
			case 0x43: n = 8; break;		/* PIP */
			case 0xc8: n = 7; break;		/* VMCS */
			case 0xc3: n = 11; break;		/* MNT */
			case 0x73: n = 7; break;		/* TMA (a bad one: not fast anyway) */
			default: return false;
			}
		} else {
			return p[0] == 0x02;	/* cut short: maybe; any other packet: no */
		}
		if (left < n)
			return true;
		t.pos += n;
	}
	return true;
}

static bool is_psb(const struct seg *s)
{
	static const uint8_t psb[16] = {
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
		0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	};

	return s->len - s->pos >= 16 && !memcmp(s->buf + s->pos, psb, 16);
}

/*
 * The next TNT (loaded into s->tnt), TIP (s->tip) or PSB (not read) after s->pos. A TNT-8
 * and a TIP are tried before skip_size(): no byte that starts either is one it takes.
 */
HOT static inline enum pk next_packet(struct seg *s)
{
	for (;;) {
		const uint8_t *p = s->buf + s->pos;
		size_t n;

		if (s->pos >= s->len)
			return PK_FAIL;
		if (!(p[0] & 1) && p[0] > 0x02) {	/* TNT-8 (0x00: PAD) */
			unsigned v = p[0] >> 1;

			s->ntnt = 31u - (unsigned)__builtin_clz(v);
			s->tnt = v & ((1u << s->ntnt) - 1);
			s->pos++;
			if (!s->ntnt)
				continue;
			return PK_TNT;
		}
		if ((p[0] & 0x1f) == 0x0d) {		/* TIP */
			if (!ip_packet(s, p, &n))
				return PK_FAIL;
			s->tip = s->last_ip;
			s->pos += n;
			return PK_TIP;
		}
		n = skip_size(s);
		if (n) {
			s->pos += n;
			continue;
		}
		if (p[0] == 0x02 && s->len - s->pos >= 8 && p[1] == 0xa3) {	/* TNT-64 */
			uint64_t v;

			memcpy(&v, p, 8);	/* its 6 bytes after the 2 of its header */
			v >>= 16;
			if (!v)
				return PK_FAIL;
			s->ntnt = 63u - (unsigned)__builtin_clzll(v);
			s->tnt = v & ((1ull << s->ntnt) - 1);
			s->pos += 8;
			if (!s->ntnt)
				continue;
			return PK_TNT;
		}
		if (is_psb(s))
			return PK_PSB;
		return PK_FAIL;
	}
}

/*
 * The PSB+ at @at: s->pos past its PSBEND, the FUP's IP in @ip. False unless tracing is
 * on in 64-bit code and every packet is one this path knows.
 */
static bool psb_plus(struct seg *s, size_t at, uint64_t *ip)
{
	bool fup = false, mode = false;

	s->pos = at;
	s->last_ip = 0;
	s->ntnt = 0;
	s->tsc = false;
	s->tma = false;
	s->has_tsc = false;
	if (!is_psb(s))
		return false;
	s->pos += 16;
	s->in_psb = true;
	while (s->pos < s->len) {
		const uint8_t *p = s->buf + s->pos;
		size_t left = s->len - s->pos, n = skip_size(s);

		if (n) {
			s->pos += n;
			continue;
		}
		if (p[0] == 0x99 && left >= 2) {		/* MODE */
			if ((p[1] >> 5) == 0) {
				if ((p[1] & 3) != 1)
					return false;
				mode = true;
			} else if ((p[1] >> 5) != 1) {
				return false;
			} else if ((s->errata & FF_E_BDM64) && (p[1] & 2)) {
				return false;	/* MODE.TSX with TXAbort: BDM64 */
			} else if (s->insn && (p[1] & 1)) {
				return false;	/* InTX: speculative, "? " before each */
			}
			s->pos += 2;
		} else if ((p[0] & 0x1f) == 0x1d) {	/* FUP */
			unsigned ipc = p[0] >> 5;

			/* The first IP after a PSB: uncompressed. */
			if (fup || (ipc != 3 && ipc != 6) || !ip_packet(s, p, &n))
				return false;
			fup = true;
			*ip = s->last_ip;
			s->pos += n;
		} else if (p[0] == 0x02 && left >= 2) {
			switch (p[1]) {
			case 0x23:				/* PSBEND */
				s->pos += 2;
				s->in_psb = false;
				return fup && mode &&
				       !((s->errata & FF_E_BDM70) && bdm70_pge(s, s->pos));
			case 0x03:				/* CBR */
				/* Ratio 0: pt_time_update_cbr()'s bad packet. */
				if (left >= 3 && !p[2])
					return false;
				n = 4;
				break;
			case 0x43:				/* PIP */
				n = 8;
				break;
			case 0xc8:				/* VMCS */
				n = 7;
				break;
			default:
				return false;
			}
			if (left < n)
				return false;
			s->pos += n;
		} else {
			return false;
		}
	}
	return false;
}

static bool ahead_ok(struct seg *s);

/*
 * SKZ84 and SKD007: whether the segment from the PSB at @at may hold a packet that libipt
 * reads otherwise under @errata: a TMA with reserved bits set (skipped with the byte after
 * it, SKZ84) or a CYC's 0x02 before an 0xf3 (an OVF, SKD007); any such bytes up to the next
 * PSB, inside another packet too. The packets after it are read askew: a decoder from
 * this PSB and one that came through it (with a return stack from before) may then err
 * differently, so no cut is made at such a PSB.
 */
static bool errata_bytes(const uint8_t *buf, size_t len, size_t at, unsigned errata)
{
	static const uint8_t psb[4] = { 0x02, 0x82, 0x02, 0x82 };
	const uint8_t *p = buf + at + 16, *end = buf + len, *q;

	if (!(errata & (FF_E_SKZ84 | FF_E_SKD007)) || at + 16 >= len)
		return false;
	q = memmem(p, (size_t)(end - p), psb, sizeof(psb));
	if (q)
		end = q;
	for (; p + 1 < end; p++) {
		p = memchr(p, 0x02, (size_t)(end - p));
		if (!p || p + 1 >= end)
			return false;
		if ((errata & FF_E_SKZ84) && p[1] == 0x73 && (end - p < 7 || p[4] || (p[6] & 0xfe)))
			return true;
		if ((errata & FF_E_SKD007) && p[1] == 0xf3 && (p[-1] & 7) == 7)
			return true;
	}
	return false;
}

bool fastflow_start(const struct fastflow *f, const uint8_t *buf, size_t len, size_t at,
		    uint64_t *ip)
{
	struct seg s = { .buf = buf, .len = len, .errata = f->errata, .timed = f->timed,
			  .insn = !!f->insn_fn };

	if (!psb_plus(&s, at, ip) || !ahead_ok(&s))
		return false;
	return !errata_bytes(buf, len, at, f->errata);
}

void fastflow_set_errata(struct fastflow *f, unsigned errata)
{
	f->errata = errata;
}

void fastflow_set_timed(struct fastflow *f, bool timed)
{
	f->timed = timed;
}

bool fastflow_tsc(const uint8_t *buf, size_t len, size_t at, uint64_t *tsc)
{
	struct seg s = { .buf = buf, .len = len };
	uint64_t ip;

	if (!psb_plus(&s, at, &ip) || !s.has_tsc)
		return false;
	*tsc = s.tsc_val;
	return true;
}

/* ---- flow ---- */

struct pend {
	uint64_t from, to;
	const char *kind;
	uint64_t at, next;	/* the instructions that ran up to it, this one counted */
};

struct flow {
	struct fastflow *f;
	struct seg s;
	struct decode_stats d;		/* up to the last branch that read trace */
	uint64_t insns, branches, calls;	/* since: its direct branches, in pend */
	struct pend pend[PEND_MAX];
	unsigned npend;
	uint64_t stack[RETSTACK + 1];
	uint32_t site[RETSTACK + 1];	/* the call's block (slot + 1): its link to the return */
	uint32_t back[RETSTACK + 1];	/* that link when the call ran (a hint, checked) */
	unsigned top, bottom;
	fastflow_branch_fn *fn;
	void *ctx;
	bool calls_only;		/* jumps not to fn: their instructions go with the next */
	bool batch;			/* calls and returns to f->batch_fn, not fn (give()) */
	uint64_t told;			/* instructions up to the last branch given to fn */
	uint64_t told_batch;		/* told when the batch started */
	/* --insn: the blocks run since the last branch that read trace (first address, count). */
	struct { uint64_t ip; uint32_t n; } pblk[PBLK_MAX];
	unsigned npblk;
	/*
	 * The TIPs ahead, read by a second reader of the packets (ahead, on while it reads
	 * what next_packet() would): their blocks' index slots and then the blocks fetched
	 * into the caches before the flow gets there (a random walk's targets missed both).
	 */
	struct seg ahead;
	bool ahead_on;
	unsigned ntip;
	uint64_t tip[TIPS_AHEAD];
};

/* @n instructions from @ip ran (sure): to the caller's fastflow_insn_fn. */
static inline void ran(struct flow *w, uint64_t ip, unsigned n)
{
	if (w->f->insn_fn && n)
		w->f->insn_fn(w->f->insn_ctx, ip, n);
}

/* A block ran that a later branch makes sure of: false when too many wait (not fast). */
static inline bool ran_pending(struct flow *w, const struct ffblk *b)
{
	if (!w->f->insn_fn)
		return true;
	if (w->npblk == PBLK_MAX)
		return false;
	w->pblk[w->npblk].ip = b->ip;
	w->pblk[w->npblk++].n = b->ninsn;
	return true;
}

static void push(struct flow *w, uint64_t ip, uint32_t site, uint32_t back)
{
	w->stack[w->top] = ip;
	w->site[w->top] = site;
	w->back[w->top] = back;
	w->top = (w->top + 1) % (RETSTACK + 1);
	if (w->top == w->bottom)
		w->bottom = (w->bottom + 1) % (RETSTACK + 1);
}

static bool pop(struct flow *w, uint64_t *ip, uint32_t *site, uint32_t *back)
{
	if (w->top == w->bottom)
		return false;
	w->top = (w->top + RETSTACK) % (RETSTACK + 1);
	*ip = w->stack[w->top];
	*site = w->site[w->top];
	*back = w->back[w->top];
	return true;
}

/*
 * The TIPs after the one the flow just took (or, at first, from the segment's start): the
 * next TIPS_AHEAD read, the last's index slot fetched, the one before's block (its slot
 * fetched a TIP before), so that each has a TIP's time to come. Only hints: what the flow
 * decodes is read by next_packet() on w->s alone.
 */
static void tip_ahead(struct flow *w, bool took)
{
	const struct fastflow_table *t = w->f->t;

	if (took && w->ntip) {
		memmove(w->tip, w->tip + 1, (TIPS_AHEAD - 1) * sizeof(w->tip[0]));
		w->ntip--;
	}
	while (w->ntip < TIPS_AHEAD && w->ahead_on) {
		enum pk k = next_packet(&w->ahead);

		if (k == PK_TIP) {
			w->tip[w->ntip++] = w->ahead.tip;
			if (t)
				__builtin_prefetch(&t->idx[idx_slot(w->ahead.tip)]);
		} else if (k == PK_TNT) {
			w->ahead.ntnt = 0;
		} else {
			w->ahead_on = false;
		}
	}
	if (w->ntip >= 2 && t) {
		uint32_t i = __atomic_load_n(&t->idx[idx_slot(w->tip[1])], __ATOMIC_RELAXED);

		if (held(w->f, i))
			__builtin_prefetch(&t->blk[i - 1]);
	}
}

/* The batch so far to f->batch_fn, its last entry's instructions up to @told. */
static __attribute__((noinline)) void flush(struct flow *w, uint64_t told)
{
	struct fastflow *f = w->f;

	if (f->ncr)
		f->batch_fn(w->ctx, f->cr, f->ncr, told - w->told_batch);
	f->ncr = 0;
	w->told_batch = told;
}

/* A branch to fn, or with w->batch (calls and returns only) into the batch. */
static inline void give(struct flow *w, uint64_t from, uint64_t to, const char *kind,
			uint64_t ninsn, uint64_t next)
{
	struct fastflow *f = w->f;

	if (w->batch) {
		f->cr[f->ncr++] = (struct fastflow_cr){ from, to, ninsn, kind[0] == 'c', next };
		if (f->ncr == FASTFLOW_BATCH)
			flush(w, w->told + ninsn);
		return;
	}
	w->fn(w->ctx, from, to, kind, ninsn, next);
}

/* A branch that read trace went through: what ran since it is sure. */
static inline void commit(struct flow *w)
{
	if (w->fn)
		for (unsigned i = 0; i < w->npend; i++) {
			if (w->calls_only && w->pend[i].kind[0] == 'j')
				continue;
			give(w, w->pend[i].from, w->pend[i].to, w->pend[i].kind,
			     w->pend[i].at - w->told, w->pend[i].next);
			w->told = w->pend[i].at;
		}
	w->npend = 0;
	for (unsigned i = 0; i < w->npblk; i++)
		ran(w, w->pblk[i].ip, w->pblk[i].n);
	w->npblk = 0;
	w->d.insns += w->insns;
	w->d.branches += w->branches;
	w->d.calls += w->calls;
	w->insns = w->branches = w->calls = 0;
}

/* A branch that ran (its block counted in w->d.insns), @next the address after it. */
static void taken(struct flow *w, uint64_t from, uint64_t to, const char *kind, uint64_t next)
{
	w->d.branches++;
	if (w->fn && !(w->calls_only && kind[0] == 'j')) {
		give(w, from, to, kind, w->d.insns - w->told, next);
		w->told = w->d.insns;
	}
}

/*
 * Whether libipt's decoder of the whole chunk reads the packets after the PSB+ that ends a
 * segment (@s past its PSBEND) without an error: it reads on to the next TNT or TIP while
 * it still is in the segment before, and an error there takes the segment's last blocks
 * with it (and reports the IP it was at, where a decoder from that PSB would say none). The
 * timing packets up to the first other one must be ones skip_size() takes, and that one a
 * TNT or a TIP, where libipt's look-ahead stops (anything else: "not fast", and no cut).
 */
static bool ahead_ok(struct seg *s)
{
	while (s->pos < s->len) {
		const uint8_t *p = s->buf + s->pos;
		size_t n = skip_size(s), left = s->len - s->pos;

		if (n) {
			s->pos += n;
			continue;
		}
		if (!(p[0] & 1) && p[0] != 0x02)		/* TNT-8 */
			return true;
		if ((p[0] & 0x1f) == 0x0d)			/* TIP */
			return (p[0] >> 5) != 5 && (p[0] >> 5) != 7;
		return p[0] == 0x02 && left >= 8 && p[1] == 0xa3;	/* TNT-64 */
	}
	return false;
}

/*
 * The trace ran out at the next PSB (@q): the instructions from @ip (the first after the
 * last branch that read trace) up to the next PSB+'s FUP, as a chunk ending there has them.
 */
static bool tail(struct flow *w, uint64_t ip, size_t q)
{
	uint64_t stop;
	unsigned k;

	if (!fastflow_start(w->f, w->s.buf, w->s.len, q, &stop))
		return false;
	w->npend = 0;
	w->npblk = 0;
	for (k = 0; k < STEPS_MAX; k++) {
		const struct ffblk *b;

		if (ip == stop)
			return true;
		b = block(w->f, ip);
		if (!b)
			return false;
		if (stop > b->ip && stop <= (b->ip + b->last)) {
			long n = count_to(w->f, b->ip, stop);

			if (n < 0)
				return false;
			ran(w, b->ip, (unsigned)n);
			w->d.insns += (uint64_t)n;
			return true;
		}
		ran(w, b->ip, b->ninsn);
		w->d.insns += b->ninsn;
		switch (b->cls) {
		case FF_OTHER:
			ip = b->ip + b->last + b->size;
			break;
		case FF_CALL:
			w->d.calls++;
			/* fall through */
		case FF_JMP:
			taken(w, (b->ip + b->last), b->target, b->cls == FF_CALL ? "call" : "jmp",
			      b->ip + b->last + b->size);
			ip = b->target;
			break;
		default:
			return false;
		}
	}
	return false;
}

HOT bool fastflow_segment(struct fastflow *f, const uint8_t *buf, size_t len, size_t at,
		      struct decode_stats *st, fastflow_branch_fn *fn, void *ctx, size_t *next)
{
	struct flow *w = calloc(1, sizeof(*w));
	uint64_t ip, after, to, tail_ip;
	const struct ffblk *from = NULL;	/* the block before, and which way it went */
	const struct ffblk *known = NULL;	/* the next block, known (a return's) */
	unsigned steps = 0;
	int way = 0;
	bool ok = false;

	if (!w)
		return false;
	w->f = f;
	w->s.buf = buf;
	w->s.len = len;
	w->s.errata = f->errata;
	w->s.timed = f->timed;
	w->s.insn = !!f->insn_fn;
	w->fn = fn;
	w->ctx = ctx;
	w->calls_only = f->calls_only;
	w->batch = fn && f->calls_only && f->batch_fn;
	f->ncr = 0;
	if (!psb_plus(&w->s, at, &ip))
		goto out;
	w->ahead = w->s;
	w->ahead_on = true;
	tip_ahead(w, false);
	tail_ip = ip;
	for (;;) {
		const struct ffblk *b = known ? known : from ? follow(f, from, way, ip) : block(f, ip);
		uint32_t l0, l1;
		enum pk k;

		known = NULL;
		if (!b || ++steps > STEPS_MAX)
			goto out;
		/* Where it went before, either way: read while this block's packet is. */
		l0 = link_of(b, 0);
		l1 = link_of(b, 1);
		if (l0)
			__builtin_prefetch(&f->t->blk[l0 - 1]);
		if (l1)
			__builtin_prefetch(&f->t->blk[l1 - 1]);
		if (b->cls == FF_RET && w->top != w->bottom) {
			/* Where the return on the stack goes, as it went before. */
			uint32_t r = w->back[(w->top + RETSTACK) % (RETSTACK + 1)];

			if (held(f, r))
				__builtin_prefetch(&f->t->blk[r - 1]);
		}
		after = b->ip + b->last + b->size;
		from = b;
		way = 0;
		switch (b->cls) {
		case FF_OTHER:
			if (!ran_pending(w, b))
				goto out;
			w->insns += b->ninsn;
			ip = after;
			way = 1;
			continue;
		case FF_JMP:
		case FF_CALL:
			if (w->npend == PEND_MAX || !ran_pending(w, b))
				goto out;
			w->insns += b->ninsn;
			w->branches++;
			w->pend[w->npend++] = (struct pend){ (b->ip + b->last), b->target,
							     b->cls == FF_CALL ? "call" : "jmp",
							     w->d.insns + w->insns, after };
			if (b->cls == FF_CALL) {
				w->calls++;
				/* libipt's rule: a call to the next instruction is not pushed. */
				if (b->target != after)
					push(w, after, site_of(f, b), link_of(b, 1));
			}
			ip = b->target;
			continue;
		case FF_COND:
			if (!w->s.ntnt) {
				k = next_packet(&w->s);
				if (k == PK_PSB)
					goto end;
				if (k != PK_TNT)
					goto out;
			}
			w->s.ntnt--;
			commit(w);
			ran(w, b->ip, b->ninsn);
			w->d.insns += b->ninsn;
			w->d.cond++;
			/*
			 * The bit is a coin toss on a random walk: where no jcc is told (--stats,
			 * --calls) nothing branches on it (a mask, not a ?: that the compiler
			 * makes two paths of), it is counted: a mispredict saved on half the jccs;
			 * the next block comes through the link of that way.
			 */
			to = after ^ ((after ^ b->target) & -((w->s.tnt >> w->s.ntnt) & 1));
			way = to == after;
			if (w->fn && !w->calls_only) {
				if (!way)
					taken(w, (b->ip + b->last), to, "jcc", after);
			} else {
				w->d.branches += (unsigned)!way;
			}
			break;
		case FF_RET:
			if (w->s.ntnt) {
				k = PK_TNT;
			} else {
				k = next_packet(&w->s);
				if (k == PK_PSB)
					goto end;
				if (k == PK_FAIL)
					goto out;
			}
			commit(w);
			from = NULL;
			if (k == PK_TNT) {
				uint32_t site, back;

				w->s.ntnt--;
				if (!((w->s.tnt >> w->s.ntnt) & 1) || !pop(w, &to, &site, &back))
					goto out;
				/*
				 * The return site as the call's link was when it ran (fetched
				 * above), else through the link now (checked as any link).
				 */
				if (held(f, back) && f->t->blk[back - 1].ip == to) {
					known = &f->t->blk[back - 1];
				} else if (held(f, site)) {
					from = &f->t->blk[site - 1];
					way = 1;
				}
			} else {
				to = w->s.tip;
				tip_ahead(w, true);
			}
			ran(w, b->ip, b->ninsn);
			w->d.insns += b->ninsn;
			w->d.returns++;
			taken(w, (b->ip + b->last), to, "return", after);
			break;
		default:	/* FF_IJMP, FF_ICALL */
			if (w->s.ntnt)
				goto out;
			k = next_packet(&w->s);
			if (k == PK_PSB)
				goto end;
			if (k != PK_TIP)
				goto out;
			to = w->s.tip;
			tip_ahead(w, true);
			commit(w);
			from = NULL;
			ran(w, b->ip, b->ninsn);
			w->d.insns += b->ninsn;
			if (b->cls == FF_ICALL) {
				w->d.calls++;
				push(w, after, site_of(f, b), link_of(b, 1));
			}
			taken(w, (b->ip + b->last), to, b->cls == FF_ICALL ? "call" : "jmp", after);
			break;
		}
		ip = to;
		tail_ip = ip;
		steps = 0;
	}
end:
	/* Nothing may be left of the segment but the branch that waits for the next one. */
	if (w->s.ntnt || !tail(w, tail_ip, w->s.pos))
		goto out;
	if (w->batch)
		flush(w, w->told);
	*next = w->s.pos;
	st->insns += w->d.insns;
	st->branches += w->d.branches;
	st->cond += w->d.cond;
	st->calls += w->d.calls;
	st->returns += w->d.returns;
	ok = true;
out:
	free(w);
	return ok;
}
