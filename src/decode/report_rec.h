/* SPDX-License-Identifier: MIT */
/*
 * ptcollect report's records (render_report.h is the command's side): what a chunk writes
 * (render_report.c) and the merge reads (report_agg.c, its state in report_agg.h), and the
 * merge's entry points the renderer names.
 */
#ifndef PTC_REPORT_REC_H
#define PTC_REPORT_REC_H

#include <stdbool.h>
#include <stdint.h>

#include "render.h"

enum {
	T_INSN,			/* an instruction */
	T_FARRET,		/* a far return (iret, sysret): the end of an interrupt */
	T_RUN,			/* a uint32_t: that many instructions */
	T_RUNFAR,		/* a uint32_t: that many, the last a far return */
	T_REC,			/* a struct prec and its strings follow */
	T_DEF,			/* a struct pdef and its string: a name's id in this chunk */
	T_CALL,			/* a struct pcall: a call by name ids */
	T_RET,			/* a struct pret: a return by name ids */
	T_ADEF,			/* a struct padef: the function at an address, by name ids */
	T_TIME,			/* a struct ptime: the time of the calls and returns after it */
	T_CALLV,		/* a call by address id: run, slot, return address (below) */
	T_RETA,			/* a struct preta: a return by address ids */
	T_CALLV0,		/* T_CALLV whose return address is not a difference */
	T_RETN,			/* a uint32_t (a T_RUN's), then a struct preta */
	T_RETTOP,		/* a run (a varint), then a return that closes the top frame */
	T_SUM,			/* a struct psum and what follows it (below) */
};

/*
 * T_CALLV, T_CALLV0: a varint (LEB128) run of instructions before the call (0: none), the
 * callee's address slot (uint16_t), then the return address: T_CALLV0's as a varint,
 * T_CALLV's as the zigzag varint of its difference from the last T_CALLV or T_CALLV0's
 * (the first call in a chunk, or where the decoder took the sink's end back, is T_CALLV0).
 * A call is then about 5 bytes, not 15.
 *
 * T_RETTOP: a return to where the top frame's call returns to, a call the chunk wrote: the
 * chunk follows the calls it wrote since the last record that may change the merge's stacks
 * otherwise (put()'s, a far return, a return that is no T_RETTOP), less those T_RETTOP
 * closed (the merge's top frames, in order), and the merge takes the return address from
 * its top frame: 2 bytes, not 17.
 */
#define VARINT_MAX 10

/*
 * T_SUM: a fast segment's calls that open and close in one batch of its calls and returns
 * (fastflow_set_batch()), summed in the worker instead of their records: trees (a call and
 * what it calls, until its return), by shape. The merge folds the sums in (struct psent,
 * struct psrun) where its stack allows (no frame over the depth bound, no two slots one
 * function), else it plays the trees (the shapes, in the order of struct psord) as their
 * T_CALLV and T_RETTOP records would have gone. The time is T_TIME's; the records after it
 * take their T_CALLV's differences from @ret.
 */
struct psum {
	uint16_t nent, nrun, nshape, nord;
	uint8_t depth;			/* the deepest the calls went */
	uint64_t top;			/* the instructions before the outermost calls */
	uint64_t roots;			/* the outermost calls' instructions, callees' too */
	uint64_t ret;			/* the return address the last T_CALLV(0) said */
	/* then struct psent[nent], struct psrun[nrun], uint16_t shape length[nshape], the
	 * shapes' struct psev, struct psord[nord] */
} __attribute__((packed));

/* A callee's calls: their own instructions, and all of those no call of it encloses. */
struct psent {
	uint16_t aid;
	uint32_t calls;
	uint64_t self, outer;
} __attribute__((packed));

/* A shape's call (of slot @aid, returning to @next) or return (@aid SUM_RET), @k after. */
#define SUM_RET UINT16_MAX

struct psev {
	uint16_t aid;
	uint32_t k;
	uint64_t next;
} __attribute__((packed));

/* @n trees of shape @shape, in the order they ran. */
struct psord {
	uint16_t shape;
	uint32_t n;
} __attribute__((packed));

struct psrun {
	uint16_t aid;
	uint32_t n;
	uint64_t insns;
} __attribute__((packed));

/*
 * The names of calls and returns go once per chunk (T_DEF), then by id: a call's record is
 * 25 bytes, not 60 to 70 with its strings. Ids are the chunk's: each chunk defines its own
 * before it uses them (a trimmed end takes definitions and uses alike).
 */
#define DEF_MAX 1024		/* ids of a chunk; then records carry their strings (T_REC) */

struct pdef {
	uint16_t id, len;
};

/* How a T_CALL or T_RET names a function: its symbol's id, with +0xoff, or not at all. */
enum { N_SYM, N_SYMOFF, N_UNKNOWN };	/* N_UNKNOWN: [unknown] (object+0xoff) */

struct pcall {
	uint16_t name, obj;
	uint8_t has_time, how;
	uint64_t a, time, off;
} __attribute__((packed));

struct pret {
	uint16_t from, to, from_obj, to_obj;
	uint8_t has_time, how;		/* how: from's N_*, to's N_* << 2 */
	uint64_t b, time, from_off, to_off;
} __attribute__((packed));

/*
 * The addresses calls and returns name over and over (addr_ids()'s cache) go by the cache's
 * slot: T_ADEF says which function a slot holds from there on (its name ids, as a T_CALL or
 * T_RET has them), T_TIME the time of the records after it (once a chunk, then as it
 * changes); a call is then 11 bytes, a return 13, and the merge spells no name for them.
 */
struct padef {
	uint16_t aid, name, obj;
	uint8_t how;
	uint64_t off;
} __attribute__((packed));

struct ptime {
	uint8_t has_time;
	uint64_t time;
} __attribute__((packed));

struct preta {
	uint16_t from, to;
	uint64_t b;
} __attribute__((packed));

enum prec_kind { P_STREAM, P_CALL, P_RET, P_GAP, P_THREAD, P_END, P_OFF, P_ON, P_INTR };

struct prec {
	uint8_t kind, has_time;
	uint16_t len1, len2, len3, len4;
	uint32_t pid, tid;
	uint64_t a, b, time;
	/* char s1[len1], s2[len2], s3[len3], s4[len4]: CALL the callee and its object, RET the
	 * functions it leaves and goes to, then their objects */
};

#define NAME_LEN 1024

/*
 * The worker's cache of addresses (render_report.c's akey[]): a T_ADEF's slot. 32,768: a
 * walk over 20,000 functions keeps them (with 512 a call in two defined its slot again, and
 * the merge found the row through calls_seen's hash). Slots are uint16_t, SUM_RET none.
 */
#define ADDR_BITS 15
#define ADDR_SLOTS (1u << ADDR_BITS)
_Static_assert(ADDR_SLOTS <= SUM_RET, "a slot is a uint16_t other than SUM_RET");

/* the merge's state (report_agg.h), behind the renderer's state */
struct rstate;

struct report_state {
	struct rstate *s;
};

/* report_agg.c: the merge's state and how records go into it */
void report_begin(struct dout *o, const struct decode_config *cfg);
void report_filter(struct dout *o, const uint8_t *data, size_t len);
/* report_out.c: the rows printed, the state freed */
void report_finish(struct dout *o);

#endif
