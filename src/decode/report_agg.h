/* SPDX-License-Identifier: MIT */
/*
 * ptcollect report's merge (report_agg.c): its state (call stacks per thread, one row per
 * function), which report_out.c prints.
 */
#ifndef PTC_REPORT_AGG_H
#define PTC_REPORT_AGG_H

#include <stdbool.h>
#include <stdint.h>

#include "render_report.h"
#include "report_rec.h"

#define NONE UINT32_MAX
#define CALLEES 4

/*
 * Exact durations in 32 bits (half the pages of 64-bit ones); one of EXACT_BIG or more is
 * EXACT_BIG there and itself in @big (its values in the order they came, @big[0] their
 * count): a duration that long is rare (a run's outermost calls).
 */
#define EXACT_BIG UINT32_MAX

struct dist {
	uint64_t n, min, max;
	uint32_t *exact;		/* up to REPORT_EXACT_MAX, then NULL and hist */
	uint32_t nexact, cap;
	uint64_t *hist;
	uint64_t *big;			/* NULL: none */
};

struct outlier {
	uint64_t dur, start;
	uint64_t seq;			/* its call's place among the trace's calls */
	bool timed;			/* its call had a time (else its start is shown as none) */
	uint32_t pid, tid;
	uint32_t callee[CALLEES], ncalls[CALLEES];
	uint32_t more;			/* calls to other functions */
};

/*
 * A row, 64-byte aligned (funcs_grow()) and two cache lines long: the first has what every
 * call, return and run of instructions adds to, the second the duration's distribution and
 * what the output alone reads. (Unaligned, a row took three lines, each one touched by a
 * call: on many functions, each a miss.)
 */
struct func {
	uint64_t calls, insns_self, insns_total, time_self, time_total;
	uint32_t nout;
	uint64_t incomplete;
	struct dist d;
	struct outlier *out;		/* a min-heap of the longest, cfg->outliers */
	uint32_t name, group;		/* a sym (sym_get), an interned string */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct func) == 128, "struct func: two cache lines");

/*
 * A row's frames on the stacks, and the one thread (its index in rstate's thr[]) they are
 * all on (NONE: more than one, or none): whether a call is its function's outermost
 * without walking the stack. Apart from the rows (rstate's fstack[], by row): a call reads
 * and writes these at once, the rows' sums later (struct rlog).
 */
struct fstack {
	uint32_t open, thr;
};

/*
 * What a call or a return adds to its row, added ROW_LOG (a power of 2) such entries later
 * (rlog_put()), the row fetched meanwhile: RLOG_CALL a call to calls, @insns to
 * insns_self, with RLOG_OUTER @total and @dur to insns_total and time_total, @self to
 * time_self, RLOG_DIST: @dur to the distribution. Sums only, in the calls' order: nothing
 * reads them before the output.
 */
enum { RLOG_CALL = 1, RLOG_OUTER = 2, RLOG_DIST = 4 };

struct rlog {
	uint64_t insns, total, dur, self;
	uint32_t func, flags;
};

#define ROW_LOG 8

struct frame {
	uint32_t func, node;
	uint64_t ret;			/* return address; UINT64_MAX: an interrupt */
	uint64_t start, paused0, insns0, intr0;
	uint64_t seq;			/* the call's place among the trace's calls */
	uint64_t child_dur;
	uint64_t insns_self;		/* its own, added to its row when it leaves the stack */
	uint32_t callee[CALLEES], ncalls[CALLEES], more;
	bool outer;			/* no frame of its function below */
	bool timed;			/* its call had a time */
};

struct thr {
	bool used, paused;
	uint32_t pid, tid, group, root;
	uint64_t lru;
	struct frame *st;
	uint32_t depth, cap, over, intr;
	/* intr_insns: the instructions of interrupts that ended (counted when they end, so
	 * that a function the handler calls keeps its own) */
	uint64_t insns, intr_insns, paused_total, pause_at, resume_ip, last_time;
	uint32_t base;			/* the function at depth 0, NONE: not known */
	uint64_t pending;		/* its instructions while not known */
};

struct node {
	uint32_t parent, name;		/* name: a sym */
	uint64_t insns, time;
};

/*
 * An open-addressing table of 64-bit keys to 32-bit values; a key and its value side by
 * side (a look-up reads one cache line, not one in each of two arrays).
 */
struct mslot {
	uint64_t key;
	uint32_t val;
};

struct map {
	struct mslot *slots;
	size_t cap, n;
};

/* A key and its value in an array indexed by something else (struct rstate's str_sym, sym_row). */
struct pair {
	uint32_t key, val;
};

/* str_sym's key before its string has a sym (NONE is the object of a sym without one). */
#define NOBJ (UINT32_MAX - 1)

/*
 * The rows' exact durations: arrays of EXACT_FIRST << k values (k < EXACT_CLASSES), cut from
 * blocks of XBLK_VALUES; an array given back (grown, or the row's histogram made) waits in
 * its size's list for the next row that grows (the first value links them). One malloc per
 * block, none per row: realloc() was 2 % of the walk's report (21,000 rows grown 3 times
 * each), and freeing them one by one at the end 2 ms.
 */
#define EXACT_FIRST 4
#define EXACT_CLASSES 9			/* 4 ... REPORT_EXACT_MAX */
#define XBLK_VALUES 16384

struct xblk {
	struct xblk *next;
	uint32_t v[XBLK_VALUES];
};

/* Interned strings' bytes: blocks of STRBLK_SIZE (more for a longer string), one malloc each. */
struct strblk {
	struct strblk *next;
	char text[];
};

#define STRBLK_SIZE (64 * 1024)

/*
 * A call's row, by what its T_CALL says (how it names the callee, the interned string of
 * its name or object, its offset) and the caller's group: found once through name_of(),
 * sym_get() and func_get(), then from here (a call names the same few callees over and
 * over). Direct-mapped, so bounded; a miss only costs the lookups.
 */
struct call_slot {
	uint64_t off;
	uint32_t base, obj, group, sym, func;
	uint8_t how, used;
};

#define CALL_BITS 16
#define CALL_WAYS 2		/* slots a function may take: two on a conflict both stay */

/*
 * A function as a record names it: by how (N_*, or N_NAME: @base is its name already), the
 * interned string it starts from (@base: the symbol; none for N_UNKNOWN), its object (@obj,
 * NONE: none) and offset. Spelled (name_of()) only when it is needed, and then kept.
 */
enum { N_NAME = 3 };

struct fref {
	uint64_t off;
	uint32_t base, obj;
	uint8_t how;
};

/*
 * The function at an address slot (T_ADEF; the name in rstate's aslot_e[]), and its row in
 * one group: found (func_of()) at the slot's first use by that group, then kept with the
 * slot (a call by slot hashes nothing). Apart from the names: a call reads 12 bytes, and
 * 32,768 slots of them stay in the cache beside the rows.
 */
struct aslot {
	uint32_t group, sym, func;	/* group NONE: not found yet */
};

/*
 * A call over the depth bound reads its row for nothing else than its calls and incomplete:
 * they are added ROW_LATER (a power of 2) such calls later (row_later()), the row fetched
 * meanwhile.
 */
#define ROW_LATER 16
#define LATER_INC_ONLY (1u << 31)

/* @n calls past the depth bound of the row @func (rstate's sc[], settled at a T_ADEF) */
struct sc_later {
	uint32_t func, n;
};

struct rstate {
	const struct report_config *rc;
	size_t nr_streams;
	/* interned strings, their bytes in blocks (struct strblk) */
	char **str;
	uint32_t nstr, capstr;
	/* the strings by hash: {32 bits of it, id}, id NONE: free; open addressing, half full
	 * at most (8 bytes a slot: a 64-bit key's table and a chain took 20) */
	struct pair *strtab;
	uint32_t capstrtab;
	struct strblk *strblk;
	char *strblk_at;		/* its first free byte, strblk_left of them */
	size_t strblk_left;
	/*
	 * functions by name and object (interned strings, object NONE: none): a string's first
	 * (str_sym[name]), any other in symmap (name << 32 | object). A name comes with one
	 * object nearly always: an array read, no hashed table of its own (its pages, its
	 * doublings rehashed: on many functions, most of the merge's page faults).
	 */
	uint32_t *sym_name, *sym_obj;
	uint32_t nsyms, capsyms;
	struct pair *str_sym;		/* by string: {object, sym}, object NOBJ: none yet */
	struct map symmap;
	struct func *funcs;
	struct fstack *fstack;		/* by row, as many as funcs */
	uint32_t nfuncs, capfuncs;
	struct xblk *xblk;		/* exact durations' blocks, the first in use */
	uint32_t xblk_used;		/* its values given out */
	uint32_t *xfree[EXACT_CLASSES];	/* arrays given back, by size */
	uint32_t nhist;			/* rows with a histogram */
	uint32_t nbig;			/* rows with durations in their dist's big */
	/* rows by group and sym: a sym's first (sym_row[sym]), any other in funcmap */
	struct pair *sym_row;		/* by sym: {group, row}, group NONE: none yet */
	struct map funcmap;		/* group << 32 | sym */
	bool funcs_full;
	struct node *nodes;
	uint32_t nnodes, capnodes;
	struct map nodemap;		/* parent << 32 | name */
	struct thr thr[REPORT_THREADS_MAX];
	struct thr *cur;
	uint64_t lru;
	uint32_t stream, stream_name, unknown;
	bool clock_known, clock_time;
	/* the first time a record had, and whether any other differed: the time moves */
	bool have_t0, time_moves;
	uint64_t t0;
	uint64_t insns, calls, cut, evicted, deep;
	uint64_t summed;		/* calls folded in from the workers' sums (T_SUM) */
	uint64_t adefs;			/* address slots the workers defined (T_ADEF) */
	bool oom;
	bool nodes_on;			/* the call-stack tree is kept: --folded only */
	struct call_slot calls_seen[1u << CALL_BITS];
	uint32_t defs[DEF_MAX];		/* the chunk's name ids (T_DEF): interned, NONE: "" */
	/* the functions at the chunk's address slots (T_ADEF), the time T_TIME said */
	struct aslot aslots[ADDR_SLOTS];
	struct fref aslot_e[ADDR_SLOTS];
	bool a_has_time;
	uint64_t a_time;
	uint64_t ret_prev;		/* the return address the last T_CALLV said */
	bool a_noted;			/* note_time() and the clock saw T_TIME's time */
	bool ahead_on;			/* report_filter() looks ahead (struct ahead) */
	/* the rows of calls over the depth bound, their counts added ROW_LATER calls later
	 * (row_later()): row | LATER_INC_ONLY */
	uint32_t later[ROW_LATER];
	uint32_t nlater;
	/* what calls and returns add to their rows, added ROW_LOG entries later (rlog_put()) */
	struct rlog rlog[ROW_LOG];
	uint32_t nrlog;
	/*
	 * The T_CALLVs past the depth bound (over_run()'s and the main loop's), by address
	 * slot (for the slot's function in group sc_group): each a call and an incomplete of
	 * its row, added to the row by report_settle() or at the slot's T_ADEF. A counter in
	 * 128 KiB, not the row's line each call (on the walk 788,000 calls). sc_dirty[]: the
	 * slots counted in since.
	 */
	uint32_t sc[ADDR_SLOTS];
	uint16_t sc_dirty[ADDR_SLOTS];
	uint32_t nsc_dirty, sc_group;
	/* a T_ADEF's slot's count for its row, added ROW_LATER such later (the row fetched) */
	struct sc_later scl[ROW_LATER];
	uint32_t nscl;
};

/*
 * Whether report_filter() looks ahead (fetches slots and rows before their records) in
 * the next buffer, after one of @recs records, @adefs of them T_ADEFs: while a record in
 * REPORT_AHEAD_ADEFS or more is one. Measured (docs/benchmarks.md, report chapter): with
 * 512 worker slots a record in 3 to 4 was a T_ADEF and the look-ahead paid; with 32,768,
 * the walk over 20,000 functions has one in 20 and its report took 7.6 % less CPU without
 * it (the look-ahead's own work per record, not the misses it hides, was the cost; it was
 * also on while the rows were more than 4,096: no more).
 */
#define REPORT_AHEAD_ADEFS 8

static inline bool report_ahead_wanted(uint64_t adefs, uint64_t recs)
{
	return adefs * REPORT_AHEAD_ADEFS >= recs;
}

/* report_agg.c */
void streams_end(struct rstate *s);
void report_free(struct rstate *s);
/* The slots' counts of calls past the depth bound added to their rows (streams_end() does). */
void report_settle(struct rstate *s);
void dist_quantiles(struct dist *d, const unsigned *q, uint64_t *v, size_t nq);
/* For the unit tests: a function by its name and object ("": none), its row in @group. */
uint32_t report_sym(struct rstate *s, const char *name, const char *obj);
uint32_t report_row(struct rstate *s, const char *group, uint32_t sym);
void report_dist_add(struct rstate *s, struct dist *d, uint64_t v);
bool report_varint(const uint8_t *data, size_t len, size_t *at, uint64_t *v);
uint32_t report_name(struct rstate *s, unsigned how, const char *base, const char *obj,
		     uint64_t off);

static inline const char *sym_text(const struct rstate *s, uint32_t sym)
{
	return s->str[s->sym_name[sym]];
}

static inline const char *obj_text(const struct rstate *s, uint32_t sym)
{
	return s->sym_obj[sym] == NONE ? "" : s->str[s->sym_obj[sym]];
}

/*
 * Whether @x comes before @y: longer, then started earlier, then called earlier in the
 * trace. A total order by what the trace fixes: which calls are kept and the order they are
 * shown in do not depend on the order calls reach the heap (-J N prints what -J 1 does).
 */
static inline bool out_before(const struct outlier *x, const struct outlier *y)
{
	if (x->dur != y->dur)
		return x->dur > y->dur;
	if (x->start != y->start)
		return x->start < y->start;
	return x->seq < y->seq;
}

#endif
