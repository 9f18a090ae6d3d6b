// SPDX-License-Identifier: MIT
/*
 * Instruction lines from capstone, cached by address, mode and bytes: the text of each
 * instruction kept once, in a ring, found through a set-associative table (disasm.h).
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csopen.h"
#include "disasm.h"

/*
 * Each instruction's record goes to a ring of RING_BYTES, one after another as they are
 * first seen (a block's together): its address and key (bytes, mode and size: 24 bytes),
 * its text's length and its text (~25 bytes), ~80,000 records in 4 MiB; the oldest are
 * written over. The next instruction is most often the one whose record follows the last
 * one's, looked at first: only a block's first instruction is looked up in the table,
 * 2^SET_BITS sets of WAYS entries (128 bytes, two cache lines), the set of an instruction
 * the 8-byte granule of code it starts in, by address (a granule has room for all its
 * instructions; the table spans 256 KiB of code, farther code shares its sets). 8 MiB in
 * all: the hot code of real programs, and ptwalk's 80,000 instructions.
 */
#define SET_BITS 15
#define WAYS 8
#define RING_BYTES (4u << 20)
#define TEXT_MAX (sizeof(((cs_insn *)0)->mnemonic) + sizeof(((cs_insn *)0)->op_str) + 2)
#define REC_HEAD 25	/* ip, key[2], the text's length */
#define REC_MAX 256	/* REC_HEAD + TEXT_MAX, rounded up */
/* A ring position past this (never in practice: 2^55 bytes of records) empties the cache. */
#define RING_POS_MAX (1ull << 55)

/*
 * The table in pieces of 4 KiB (a page, or a part of one), each marked once first written:
 * a set in a piece never written holds nothing, and is not read. calloc()'s pages are the
 * zero page until written; read first, the insert after them was a copy on write, which
 * with the other worker running flushes its CPU's TLB too (an IPI: the walk's -J 2 --insn,
 * 2 x 1,024 such pages, 5 % of its CPU samples). Written first, a page needs no flush.
 * Sets are 128 bytes, aligned: one never spans two pieces.
 */
#define PIECE_SHIFT 12
#define SETS_PIECES ((((size_t)WAYS << SET_BITS) * 16 >> PIECE_SHIFT) + 1)

_Static_assert(DISASM_TEXT_AT + TEXT_MAX <= DISASM_LINE_MAX, "DISASM_LINE_MAX");
_Static_assert(REC_HEAD + TEXT_MAX <= REC_MAX, "REC_MAX");

struct entry {
	uint64_t ip;
	uint64_t pos;		/* its record's position in the ring + 1 (0: none) */
};

#define KEY_VALID 0x80u

struct disasm {
	csh cs[3];		/* 16-, 32-, 64-bit */
	cs_insn *insn[3];
	struct entry *sets;	/* 2^SET_BITS * WAYS, 128-byte aligned in sets_mem */
	void *sets_mem;
	char *ring;		/* RING_BYTES and 16 of slack (readers copy in blocks of 16) */
	uint64_t head;		/* ring bytes written (and skipped) since the start */
	uint64_t next;		/* the position after the last record used */
	size_t used;		/* table entries filled */
	uint64_t written[SETS_PIECES / 64 + 1];	/* the table's pieces written (written_at()) */
	char out[DISASM_LINE_MAX + 16];
};

/* " xx " for each byte value (4 bytes each). */
static const char hex3[256 * 4 + 1] =
	" 00  01  02  03  04  05  06  07 "
	" 08  09  0a  0b  0c  0d  0e  0f "
	" 10  11  12  13  14  15  16  17 "
	" 18  19  1a  1b  1c  1d  1e  1f "
	" 20  21  22  23  24  25  26  27 "
	" 28  29  2a  2b  2c  2d  2e  2f "
	" 30  31  32  33  34  35  36  37 "
	" 38  39  3a  3b  3c  3d  3e  3f "
	" 40  41  42  43  44  45  46  47 "
	" 48  49  4a  4b  4c  4d  4e  4f "
	" 50  51  52  53  54  55  56  57 "
	" 58  59  5a  5b  5c  5d  5e  5f "
	" 60  61  62  63  64  65  66  67 "
	" 68  69  6a  6b  6c  6d  6e  6f "
	" 70  71  72  73  74  75  76  77 "
	" 78  79  7a  7b  7c  7d  7e  7f "
	" 80  81  82  83  84  85  86  87 "
	" 88  89  8a  8b  8c  8d  8e  8f "
	" 90  91  92  93  94  95  96  97 "
	" 98  99  9a  9b  9c  9d  9e  9f "
	" a0  a1  a2  a3  a4  a5  a6  a7 "
	" a8  a9  aa  ab  ac  ad  ae  af "
	" b0  b1  b2  b3  b4  b5  b6  b7 "
	" b8  b9  ba  bb  bc  bd  be  bf "
	" c0  c1  c2  c3  c4  c5  c6  c7 "
	" c8  c9  ca  cb  cc  cd  ce  cf "
	" d0  d1  d2  d3  d4  d5  d6  d7 "
	" d8  d9  da  db  dc  dd  de  df "
	" e0  e1  e2  e3  e4  e5  e6  e7 "
	" e8  e9  ea  eb  ec  ed  ee  ef "
	" f0  f1  f2  f3  f4  f5  f6  f7 "
	" f8  f9  fa  fb  fc  fd  fe  ff ";

static int mode_index(enum pt_exec_mode mode)
{
	switch (mode) {
	case ptem_16bit: return 0;
	case ptem_32bit: return 1;
	default: return 2;
	}
}

size_t disasm_bound_entries(void)
{
	return (size_t)WAYS << SET_BITS;
}

size_t disasm_bound_bytes(void)
{
	return ((size_t)WAYS << SET_BITS) * sizeof(struct entry) + RING_BYTES;
}

size_t disasm_used(const struct disasm *d)
{
	return d->used;
}

int disasm_new(struct disasm **dp, bool att, struct error *e)
{
	static const cs_mode modes[3] = { CS_MODE_16, CS_MODE_32, CS_MODE_64 };
	struct disasm *d = calloc(1, sizeof(*d));
	size_t table = ((size_t)WAYS << SET_BITS) * sizeof(struct entry);
	int i;

	*dp = NULL;
	/* calloc(): pages not touched until used, so that a small program costs little. */
	if (!d || !(d->sets_mem = calloc(1, table + 128)) ||
	    !(d->ring = calloc(1, RING_BYTES + 16))) {
		if (d)
			free(d->sets_mem);
		free(d);
		return err_runtime(e, -ENOMEM, "out of memory for the disassembler");
	}
	d->sets = (struct entry *)(((uintptr_t)d->sets_mem + 127) & ~(uintptr_t)127);
	for (i = 0; i < 3; i++) {
		cs_err err = csopen(modes[i], &d->cs[i]);

		if (err != CS_ERR_OK) {
			disasm_free(d);
			return err_runtime(e, -ENOTSUP, "capstone: %s", cs_strerror(err));
		}
		if (att)
			cs_option(d->cs[i], CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
		d->insn[i] = cs_malloc(d->cs[i]);
		if (!d->insn[i]) {
			disasm_free(d);
			return err_runtime(e, -ENOMEM, "out of memory for the disassembler");
		}
	}
	*dp = d;
	return 0;
}

void disasm_free(struct disasm *d)
{
	if (!d)
		return;
	for (int i = 0; i < 3; i++) {
		if (d->insn[i])
			cs_free(d->insn[i], 1);
		if (d->cs[i])
			cs_close(&d->cs[i]);
	}
	free(d->sets_mem);
	free(d->ring);
	free(d);
}

static struct entry *set_of(struct disasm *d, uint64_t ip, int mode)
{
	(void)mode;	/* in the key: the same address in two modes is rare */
	return &d->sets[(size_t)(ip >> 3 & ((1u << SET_BITS) - 1)) * WAYS];
}

/* Set @set's piece of the table: its bit in d->written, @word and @bit. */
static void piece_of(const struct disasm *d, const struct entry *set, size_t *word,
		     uint64_t *bit)
{
	uintptr_t first = (uintptr_t)d->sets >> PIECE_SHIFT;
	size_t n = (size_t)(((uintptr_t)set >> PIECE_SHIFT) - first);

	*word = n / 64;
	*bit = 1ull << (n % 64);
}

/* Capstone's text of @in ("(bad)" if none) and a newline, into @t; its length. */
static size_t text_of(struct disasm *d, const struct pt_insn *in, size_t n, int m, char *t)
{
	const uint8_t *code = in->raw;
	uint64_t addr = in->ip;
	cs_insn *ci = d->insn[m];
	size_t a, b;

	if (!cs_disasm_iter(d->cs[m], &code, &n, &addr, ci)) {
		memcpy(t, "(bad)\n", 6);
		return 6;
	}
	a = strnlen(ci->mnemonic, sizeof(ci->mnemonic) - 1);
	memcpy(t, ci->mnemonic, a);
	if (ci->op_str[0]) {
		b = strnlen(ci->op_str, sizeof(ci->op_str) - 1);
		t[a++] = ' ';
		memcpy(t + a, ci->op_str, b);
		a += b;
	}
	t[a++] = '\n';
	return a;
}

/*
 * Copy @len bytes in blocks of 16, up to 15 more read and written: a memcpy() of a short,
 * bounded length becomes "rep movsq", slow to start on some CPUs, for each of millions of
 * lines.
 */
static void copy16(char *dst, const char *src, size_t len)
{
	for (size_t i = 0; i < len; i += 16)
		memcpy(dst + i, src + i, 16);
}

/* The record of @ip, @k and text @t in the ring (returns its position). */
static uint64_t keep(struct disasm *d, uint64_t ip, const uint64_t k[2], const char *t,
		     size_t len)
{
	uint64_t at, room;
	char *r;

	if (d->head >= RING_POS_MAX) {
		memset(d->sets, 0, ((size_t)WAYS << SET_BITS) * sizeof(struct entry));
		d->head = 0;
	}
	/* A record does not wrap: the rest of the ring is zeroed (no record) and skipped. */
	room = RING_BYTES - d->head % RING_BYTES;
	if (room < REC_HEAD + len) {
		memset(d->ring + d->head % RING_BYTES, 0, room);
		d->head += room;
	}
	at = d->head;
	r = d->ring + at % RING_BYTES;
	memcpy(r, &ip, 8);
	memcpy(r + 8, k, 16);
	r[24] = (char)len;
	memcpy(r + REC_HEAD, t, len);
	d->head += REC_HEAD + len;
	return at;
}

/*
 * The text of the record at ring position @pos into @dst, if it is @ip's with key @k and
 * still there; its length, or 0. Every position asked for is a record's start, the zeroed
 * rest of the ring before a wrap, or the head.
 */
static size_t look(struct disasm *d, uint64_t pos, uint64_t ip, const uint64_t k[2], char *dst)
{
	const char *r = d->ring + pos % RING_BYTES;
	uint64_t rip, rk[2];
	size_t len;

	if (pos >= d->head || d->head - pos > RING_BYTES - REC_MAX)
		return 0;
	/* The zeroed rest before a wrap can be shorter than a record's head: no record there. */
	if (RING_BYTES - pos % RING_BYTES < REC_HEAD)
		return 0;
	memcpy(&rip, r, 8);
	memcpy(rk, r + 8, 16);
	if (rip != ip || rk[0] != k[0] || rk[1] != k[1])
		return 0;
	len = (uint8_t)r[24];
	copy16(dst, r + REC_HEAD, len);
	d->next = pos + REC_HEAD + len;
	return len;
}

size_t disasm_put(struct disasm *d, const struct pt_insn *in, char *dst)
{
	static const char blanks[48] = "                                                ";
	int m = mode_index(in->mode);
	size_t n = in->size > sizeof(in->raw) ? sizeof(in->raw) : in->size, i, len;
	struct entry *set;
	uint64_t k[2], bit;
	char t[TEXT_MAX + 16];
	size_t w;
	bool fresh;

	/* Two loads (a 15-byte memcpy() makes two overlapping stores that stall the loads). */
	memcpy(&k[0], in->raw, 8);
	memcpy(&k[1], in->raw + 7, 8);
	k[1] >>= 8;
	if (n < 8) {
		k[0] &= n ? ~0ull >> (64 - 8 * n) : 0;
		k[1] = 0;
	} else {
		k[1] &= n > 8 ? ~0ull >> (64 - 8 * (n - 8)) : 0;
	}
	k[1] = (k[1] & ~(0xffull << 56)) | (uint64_t)(KEY_VALID | (unsigned)m << 4 | n) << 56;
	/* The bytes: " xx" each, blanks to DISASM_TEXT_AT. */
	memcpy(dst, blanks, 48);
	for (i = 0; i < n; i++)
		memcpy(dst + 3 * i, hex3 + 4 * in->raw[i], 4);
	dst += DISASM_TEXT_AT;
	/* The record after the last one's: the next instruction of a block seen before. */
	len = look(d, d->next, in->ip, k, dst);
	if (len)
		return DISASM_TEXT_AT + len;
	set = set_of(d, in->ip, m);
	piece_of(d, set, &w, &bit);
	fresh = !(d->written[w] & bit);
	for (i = 0; i < WAYS && !fresh; i++) {
		if (set[i].ip != in->ip || !set[i].pos)
			continue;
		len = look(d, set[i].pos - 1, in->ip, k, dst);
		if (len)
			return DISASM_TEXT_AT + len;
		break;
	}
	len = text_of(d, in, n, m, t);
	copy16(dst, t, len);
	/* The oldest of the set makes room (or the entry of this address, gone stale). */
	if (fresh) {
		i = 0;
		d->used++;
		d->written[w] |= bit;
	} else if (i == WAYS) {
		i = WAYS - 1;
		d->used += !set[i].pos;
	}
	memmove(&set[1], &set[0], i * sizeof(*set));
	set[0].ip = in->ip;
	set[0].pos = keep(d, in->ip, k, t, len) + 1;
	d->next = d->head;
	return DISASM_TEXT_AT + len;
}

const char *disasm_line(struct disasm *d, const struct pt_insn *in, size_t *len)
{
	*len = disasm_put(d, in, d->out);
	return d->out;
}

/* libipt's class of an instruction capstone decoded (pt_ild.c's table, by capstone's ids). */
enum pt_insn_class disasm_class(unsigned int id)
{
	switch (id) {
	case X86_INS_CALL: return ptic_call;
	case X86_INS_RET: return ptic_return;
	case X86_INS_JMP: return ptic_jump;
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JE: case X86_INS_JGE:
	case X86_INS_JG: case X86_INS_JLE: case X86_INS_JL: case X86_INS_JNE:
	case X86_INS_JNO: case X86_INS_JNP: case X86_INS_JNS: case X86_INS_JO:
	case X86_INS_JP: case X86_INS_JRCXZ: case X86_INS_JS:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return ptic_cond_jump;
	case X86_INS_LCALL: case X86_INS_INT: case X86_INS_INT1: case X86_INS_INT3:
	case X86_INS_INTO: case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_VMCALL:
		return ptic_far_call;
	case X86_INS_RETF: case X86_INS_RETFQ: case X86_INS_IRET: case X86_INS_IRETD:
	case X86_INS_IRETQ: case X86_INS_SYSEXIT: case X86_INS_SYSRET:
	case X86_INS_VMLAUNCH: case X86_INS_VMRESUME:
		return ptic_far_return;
	case X86_INS_LJMP: return ptic_far_jump;
	default: return ptic_other;
	}
}
