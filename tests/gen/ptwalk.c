// SPDX-License-Identifier: MIT
/*
 * ptwalk: a program of many basic blocks and the Intel PT trace of a seeded random walk
 * through it, for the bench (bench/decode's second trace): the control flow of a large
 * program rather than one loop, so that a decoder's caches are not flattered.
 *
 * The program is BLOCKS basic blocks laid out one after another at 0x401000, each a few
 * ordinary instructions (nop, add, mov, lea, xor) and one branch: a jcc (rel32) to a random
 * block, a jmp (rel32), a call (rel32), a ret, a jmp rax or a call rax. The walk starts at
 * block 0 and follows the program: each jcc is taken or not at random, each indirect branch
 * goes to a random block, a ret goes back to its call. The trace is what a CPU with return
 * compression writes: TNT bits for the jccs and the rets whose call it saw since the last
 * PSB (a call stack of 64, as libipt's decoder keeps), TIP for the indirect branches and the
 * other rets, a PSB+ (TSC, MODE.Exec, FUP) every PER_PSB packets, TIP.PGE at the start and
 * the first jmp rax once INSNS instructions have run goes to a syscall after the blocks, where
 * tracing stops (TIP.PGD), as in ptgen's trace. The same seed
 * gives the same program and trace.
 *
 * -t: timing packets as a CPU with TSC, MTC and CYC on writes them (the walk is the same):
 * a TMA after each PSB+'s TSC, an MTC and a CYC after every third packet (between a TNT and
 * the branches that use its bits), a TSC and a TMA every 50 packets. -x EVERY (with -t):
 * after every EVERY-th PSB+ (right after it, or with the next timing packets in turn), one
 * timing packet that libipt's decoder fails on or reads otherwise, in turn: a second TMA
 * after a TSC, a CYC of 10 bytes, a TSC and a TMA with a reserved bit set (SKZ84's), a
 * 2-byte CYC before a CYC of 0xf3 (SKD007's OVF).
 *
 *	ptwalk [-b BLOCKS] [-n INSNS] [-p PER_PSB] [-s SEED] [-t [-x EVERY]] OUTDIR
 *
 * writes OUTDIR/trace.pt and OUTDIR/prog.bin (raw code at 0x401000) and prints
 * "instructions N branches N calls N psbs N blocks N visited N" (branches: taken near
 * branches; visited: blocks the walk ran at least once).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptenc.h"

#define TEXT_ADDR 0x401000ull
#define STACK 64

enum term { T_JCC, T_JMP, T_CALL, T_RET, T_IJMP, T_ICALL };

struct block {
	uint64_t addr;
	uint32_t target;	/* the direct branch's block */
	uint8_t nfill, fill[4], term, cc;
	bool seen;
};

/* The filler instructions: nop; add eax, 1; mov ebx, ecx; lea rax, [rax+8]; xor edx, edx */
static const uint8_t fill_len[] = { 1, 3, 2, 4, 2 };
static const uint8_t fill_code[][4] = {
	{ 0x90 }, { 0x83, 0xc0, 0x01 }, { 0x89, 0xcb }, { 0x48, 0x8d, 0x40, 0x08 }, { 0x31, 0xd2 },
};
static const uint8_t term_len[] = { 6, 5, 5, 1, 2, 2 };

struct gen {
	struct ptenc e;
	uint64_t rng, tsc;
	uint64_t packets, per_psb;	/* packets since the last PSB+ */
	uint64_t stack[STACK];	/* return blocks, as a decoder's 64-entry call stack */
	unsigned top, depth;
	uint64_t insns, branches, calls, psbs;
	bool timing;			/* -t */
	uint64_t bad_every, ticks, bads;	/* -x; timing packets so far; bad ones */
	bool bad_later;			/* the next bad one goes with the next timing packets */
};

static uint64_t rnd(struct gen *g)	/* xorshift64* */
{
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 0x2545f4914f6cdd1dull;
}

/* @n bytes of @p as they are: the packets libipt's encoder would not write. */
static void raw(struct gen *g, const uint8_t *p, size_t n)
{
	uint64_t off = 0;
	int err = pt_enc_get_offset(g->e.enc, &off);

	if (err < 0)
		ptenc_die("offset", err);
	if (off + 64 > g->e.cap) {
		ptenc_flush(&g->e);
		off = 0;
	}
	memcpy(g->e.buf + off, p, n);
	err = pt_enc_sync_set(g->e.enc, off + n);
	if (err < 0)
		ptenc_die("sync", err);
}

static void tma(struct gen *g)
{
	uint8_t p[7] = { 0x02, 0x73, (uint8_t)g->ticks, 0x01, 0x00, (uint8_t)(g->ticks * 7), 0x00 };

	raw(g, p, sizeof(p));
}

/* -x: one of the timing packets libipt fails on or reads otherwise, in turn. */
static void bad_timing(struct gen *g)
{
	static const uint8_t cyc10[] = { 0x07, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81, 0x81,
					 0x02 };
	static const uint8_t skd007[] = { 0x07, 0x02, 0xf3 };
	uint8_t p[7] = { 0x02, 0x73, 0x10, 0x00, 0x00, 0x00, 0x02 };

	switch (g->bads++ % 4) {
	case 0: tma(g); break;			/* a second one after the PSB+'s */
	case 1: raw(g, cyc10, sizeof(cyc10)); break;
	case 2: {				/* FC bit 9: reserved; after a TSC */
		struct pt_packet t = { .type = ppt_tsc };

		t.payload.tsc.tsc = g->tsc++;
		ptenc_emit(&g->e, &t);
		raw(g, p, sizeof(p));
		break;
	}
	default: raw(g, skd007, sizeof(skd007)); break;
	}
}

/* -t: what a CPU writes between two packets now and then. */
static void timing(struct gen *g)
{
	struct pt_packet p;

	if (!g->timing || ++g->ticks % 3)
		return;
	if (g->bad_later) {
		g->bad_later = false;
		bad_timing(g);
	}
	memset(&p, 0, sizeof(p));
	p.type = ppt_mtc;
	p.payload.mtc.ctc = (uint8_t)(g->ticks / 3);
	ptenc_emit(&g->e, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_cyc;
	p.payload.cyc.value = 1 + g->ticks % 300;
	ptenc_emit(&g->e, &p);
	if (g->ticks % 150)
		return;
	memset(&p, 0, sizeof(p));
	p.type = ppt_tsc;
	p.payload.tsc.tsc = g->tsc++;
	ptenc_emit(&g->e, &p);
	tma(g);
}

static void emit_tnt(struct gen *g)
{
	if (ptenc_tnt_flush(&g->e)) {
		g->packets++;
		timing(g);
	}
}

static void tnt(struct gen *g, bool taken)
{
	if (ptenc_tnt_bit(&g->e, taken)) {
		g->packets++;
		timing(g);
	}
}

static void emit_ip(struct gen *g, enum pt_packet_type type, uint64_t ip)
{
	emit_tnt(g);
	timing(g);
	ptenc_emit_ip(&g->e, type, type == ppt_tip_pgd ? pt_ipc_suppressed : pt_ipc_sext_48, ip);
	g->packets++;
}

/* A PSB+ where the walk goes on at @ip; a decoder starts there with an empty call stack. */
static void emit_psb(struct gen *g, uint64_t ip, bool enabled)
{
	emit_tnt(g);
	ptenc_psb(&g->e, &g->tsc, enabled, ip);
	g->tsc += 0x1000;
	g->psbs++;
	if (g->timing) {
		tma(g);
		/* Right after the PSB+ (where libipt reads ahead from the segment before), or
		 * in the segment, each kind in turn. */
		if (g->bad_every && g->psbs % g->bad_every == 0) {
			if ((g->bads / 4) % 2)
				g->bad_later = true;
			else
				bad_timing(g);
		}
	}
	g->depth = 0;
	g->packets = 0;
}

static void push(struct gen *g, uint64_t b)
{
	g->stack[g->top] = b;
	g->top = (g->top + 1) % STACK;
	if (g->depth < STACK)
		g->depth++;
}

/* Lay out the program: every block's instructions, its branch and its address. */
static uint8_t *build(struct gen *g, struct block *b, uint32_t n, size_t *len)
{
	uint64_t addr = TEXT_ADDR;
	uint8_t *code, *p;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t r = rnd(g) % 100;

		b[i].addr = addr;
		b[i].nfill = (uint8_t)(rnd(g) % 5);
		for (int k = 0; k < b[i].nfill; k++) {
			b[i].fill[k] = (uint8_t)(rnd(g) % 5);
			addr += fill_len[b[i].fill[k]];
		}
		/* 45 % jcc, 10 % jmp, 15 % call, 15 % ret, 10 % jmp rax, 5 % call rax */
		b[i].term = r < 45 ? T_JCC : r < 55 ? T_JMP : r < 70 ? T_CALL : r < 85 ? T_RET :
			    r < 95 ? T_IJMP : T_ICALL;
		if (i == n - 1)	/* the last block falls through into nothing */
			b[i].term = T_JMP;
		/* never the next block: a taken jcc there is one perf prints and decode does not */
		do
			b[i].target = (uint32_t)(rnd(g) % n);
		while (b[i].target == i + 1);
		b[i].cc = (uint8_t)(rnd(g) % 16);
		addr += term_len[b[i].term];
	}
	*len = (size_t)(addr - TEXT_ADDR) + 2;	/* and the walk's last instruction, a syscall */
	code = malloc(*len);
	if (!code)
		ptenc_die("program", ENOMEM);
	p = code;
	for (uint32_t i = 0; i < n; i++) {
		int32_t rel;

		for (int k = 0; k < b[i].nfill; k++) {
			memcpy(p, fill_code[b[i].fill[k]], fill_len[b[i].fill[k]]);
			p += fill_len[b[i].fill[k]];
		}
		rel = (int32_t)(b[b[i].target].addr - (TEXT_ADDR + (uint64_t)(p - code) +
						      term_len[b[i].term]));
		switch (b[i].term) {
		case T_JCC:
			*p++ = 0x0f;
			*p++ = (uint8_t)(0x80 + b[i].cc);
			memcpy(p, &rel, 4);
			p += 4;
			break;
		case T_JMP:
		case T_CALL:
			*p++ = b[i].term == T_JMP ? 0xe9 : 0xe8;
			memcpy(p, &rel, 4);
			p += 4;
			break;
		case T_RET:
			*p++ = 0xc3;
			break;
		case T_IJMP:
			*p++ = 0xff;
			*p++ = 0xe0;
			break;
		case T_ICALL:
			*p++ = 0xff;
			*p++ = 0xd0;
			break;
		}
	}
	*p++ = 0x0f;
	*p++ = 0x05;
	return code;
}

static void walk(struct gen *g, struct block *b, uint32_t n, uint64_t want, uint64_t end)
{
	uint32_t cur = 0, next;

	emit_psb(g, 0, false);
	emit_ip(g, ppt_tip_pge, b[0].addr);
	for (;;) {
		/*
		 * Only a jmp rax ends the walk; a small program may have none the walk can
		 * reach (-b 2: block 0 jumps to itself). Give up rather than run forever.
		 */
		if (g->insns > 4 * want + 1000000) {
			fprintf(stderr, "ptwalk: no jmp rax reached after %" PRIu64 " instructions "
				"(%" PRIu64 " asked): this program cannot end its walk; give more "
				"blocks (-b) or another seed (-s)\n", g->insns, want);
			unlink(g->e.path);	/* no half-written trace left */
			exit(1);
		}
		if (g->packets >= g->per_psb)
			emit_psb(g, b[cur].addr, true);
		b[cur].seen = true;
		g->insns += b[cur].nfill + 1u;
		switch (b[cur].term) {
		case T_JCC:
			if (rnd(g) & 1) {
				tnt(g, true);
				g->branches++;
				next = b[cur].target;
			} else {
				tnt(g, false);
				next = cur + 1;
			}
			break;
		case T_JMP:
			g->branches++;
			next = b[cur].target;
			break;
		case T_CALL:
			g->branches++;
			g->calls++;
			push(g, cur + 1);
			next = b[cur].target;
			break;
		case T_ICALL:
			g->branches++;
			g->calls++;
			push(g, cur + 1);
			next = (uint32_t)(rnd(g) % n);
			emit_ip(g, ppt_tip, b[next].addr);
			break;
		case T_RET:
			g->branches++;
			if (g->depth) {	/* compressed: its call is on the decoder's stack */
				g->top = (g->top + STACK - 1) % STACK;
				g->depth--;
				next = (uint32_t)g->stack[g->top];
				tnt(g, true);
			} else {
				next = (uint32_t)(rnd(g) % n);
				emit_ip(g, ppt_tip, b[next].addr);
			}
			break;
		default:	/* T_IJMP: the walk ends at one once it has run enough */
			g->branches++;
			if (g->insns >= want) {
				/* to the syscall after the blocks: tracing stops there, as ptgen's */
				emit_ip(g, ppt_tip, end);
				g->insns++;
				emit_ip(g, ppt_tip_pgd, 0);
				return;
			}
			next = (uint32_t)(rnd(g) % n);
			emit_ip(g, ppt_tip, b[next].addr);
			break;
		}
		cur = next;
	}
}

int main(int argc, char **argv)
{
	uint64_t want = 1000000, nblocks = 20000, visited = 0;
	struct block *b;
	struct gen g;
	uint8_t *code;
	size_t len;
	int c;

	memset(&g, 0, sizeof(g));
	g.rng = 1;
	g.tsc = 0x100000;
	g.per_psb = 1000;
	while ((c = getopt(argc, argv, "b:n:p:s:tx:")) != -1) {
		switch (c) {
		case 'b': nblocks = ptenc_number(optarg, "-b"); break;
		case 'n': want = ptenc_number(optarg, "-n"); break;
		case 'p': g.per_psb = ptenc_number(optarg, "-p"); break;
		case 's': g.rng = ptenc_number(optarg, "-s"); break;
		case 't': g.timing = true; break;
		case 'x': g.bad_every = ptenc_number(optarg, "-x"); break;
		default: return 2;
		}
	}
	if (argc - optind != 1 || nblocks < 2 || nblocks > 1u << 24) {
		fprintf(stderr, "usage: ptwalk [-b BLOCKS (2 to 16M)] [-n INSNS] [-p PER_PSB] "
			"[-s SEED] [-t [-x EVERY]] OUTDIR\n");
		return 2;
	}
	b = calloc(nblocks, sizeof(*b));
	if (!b)
		ptenc_die("blocks", ENOMEM);
	code = build(&g, b, (uint32_t)nblocks, &len);
	ptenc_write_file(argv[optind], "prog.bin", code, len);
	ptenc_open(&g.e, argv[optind]);
	walk(&g, b, (uint32_t)nblocks, want, TEXT_ADDR + len - 2);
	ptenc_close(&g.e);
	for (uint64_t i = 0; i < nblocks; i++)
		visited += b[i].seen;
	printf("instructions %" PRIu64 " branches %" PRIu64 " calls %" PRIu64 " psbs %" PRIu64
	       " blocks %" PRIu64 " visited %" PRIu64 "\n", g.insns, g.branches, g.calls, g.psbs,
	       nblocks, visited);
	free(code);
	free(b);
	return 0;
}
