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
 *	ptwalk [-b BLOCKS] [-n INSNS] [-p PER_PSB] [-s SEED] OUTDIR
 *
 * writes OUTDIR/trace.pt and OUTDIR/prog.bin (raw code at 0x401000) and prints
 * "instructions N branches N calls N psbs N blocks N visited N" (branches: taken near
 * branches; visited: blocks the walk ran at least once).
 */
#include <errno.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	struct pt_encoder *enc;
	uint8_t *buf;
	size_t cap;
	FILE *out;
	uint64_t rng, tsc;
	uint64_t tnt, ntnt;		/* pending TNT bits, oldest first */
	uint64_t packets, per_psb;
	uint64_t stack[STACK];	/* return blocks, as a decoder's 64-entry call stack */
	unsigned top, depth;
	uint64_t insns, branches, calls, psbs;
};

static void die(const char *what, int err)
{
	fprintf(stderr, "ptwalk: %s: %s\n", what, err < 0 ? pt_errstr(pt_errcode(err)) :
		strerror(err));
	exit(1);
}

static uint64_t rnd(struct gen *g)	/* xorshift64* */
{
	g->rng ^= g->rng >> 12;
	g->rng ^= g->rng << 25;
	g->rng ^= g->rng >> 27;
	return g->rng * 0x2545f4914f6cdd1dull;
}

static void flush(struct gen *g)
{
	uint64_t off = 0;
	int err = pt_enc_get_offset(g->enc, &off);

	if (err < 0)
		die("offset", err);
	if (off && fwrite(g->buf, 1, off, g->out) != off)
		die("write trace", errno);
	err = pt_enc_sync_set(g->enc, 0);
	if (err < 0)
		die("sync", err);
}

static void emit(struct gen *g, struct pt_packet *p)
{
	uint64_t off = 0;
	int err;

	pt_enc_get_offset(g->enc, &off);
	if (off + 64 > g->cap)
		flush(g);
	err = pt_enc_next(g->enc, p);
	if (err < 0)
		die("encode", err);
	g->packets++;
}

static void emit_tnt(struct gen *g)
{
	struct pt_packet p;

	if (!g->ntnt)
		return;
	memset(&p, 0, sizeof(p));
	p.type = ppt_tnt_64;
	p.payload.tnt.bit_size = (uint8_t)g->ntnt;
	p.payload.tnt.payload = g->tnt;
	emit(g, &p);
	g->tnt = g->ntnt = 0;
}

static void tnt(struct gen *g, bool taken)
{
	g->tnt = (g->tnt << 1) | taken;
	if (++g->ntnt == 47)
		emit_tnt(g);
}

static void emit_ip(struct gen *g, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet p = { .type = type };

	emit_tnt(g);
	p.payload.ip.ipc = type == ppt_tip_pgd ? pt_ipc_suppressed : pt_ipc_sext_48;
	p.payload.ip.ip = ip;
	emit(g, &p);
}

/* A PSB+ where the walk goes on at @ip; a decoder starts there with an empty call stack. */
static void emit_psb(struct gen *g, uint64_t ip, bool enabled)
{
	struct pt_packet p;

	emit_tnt(g);
	memset(&p, 0, sizeof(p));
	p.type = ppt_psb;
	emit(g, &p);
	p.type = ppt_tsc;
	p.payload.tsc.tsc = g->tsc;
	g->tsc += 0x1000;
	emit(g, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	emit(g, &p);
	if (enabled)
		emit_ip(g, ppt_fup, ip);
	memset(&p, 0, sizeof(p));
	p.type = ppt_psbend;
	emit(g, &p);
	g->psbs++;
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
		die("program", ENOMEM);
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
				flush(g);
				return;
			}
			next = (uint32_t)(rnd(g) % n);
			emit_ip(g, ppt_tip, b[next].addr);
			break;
		}
		cur = next;
	}
}

static uint64_t number(const char *s, const char *what)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !*s || !v) {
		fprintf(stderr, "ptwalk: %s '%s' is not a positive number\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	uint64_t want = 1000000, nblocks = 20000, visited = 0;
	struct pt_config cfg;
	struct block *b;
	struct gen g;
	char path[4096];
	uint8_t *code;
	size_t len;
	FILE *f;
	int c;

	memset(&g, 0, sizeof(g));
	g.rng = 1;
	g.tsc = 0x100000;
	g.per_psb = 1000;
	while ((c = getopt(argc, argv, "b:n:p:s:")) != -1) {
		switch (c) {
		case 'b': nblocks = number(optarg, "-b"); break;
		case 'n': want = number(optarg, "-n"); break;
		case 'p': g.per_psb = number(optarg, "-p"); break;
		case 's': g.rng = number(optarg, "-s"); break;
		default: return 2;
		}
	}
	if (argc - optind != 1 || nblocks < 2 || nblocks > 1u << 24) {
		fprintf(stderr, "usage: ptwalk [-b BLOCKS (2 to 16M)] [-n INSNS] [-p PER_PSB] "
			"[-s SEED] OUTDIR\n");
		return 2;
	}
	b = calloc(nblocks, sizeof(*b));
	if (!b)
		die("blocks", ENOMEM);
	code = build(&g, b, (uint32_t)nblocks, &len);
	snprintf(path, sizeof(path), "%s/prog.bin", argv[optind]);
	f = fopen(path, "wb");
	if (!f || fwrite(code, 1, len, f) != len || fclose(f))
		die(path, errno);
	snprintf(path, sizeof(path), "%s/trace.pt", argv[optind]);
	g.out = fopen(path, "wb");
	if (!g.out)
		die(path, errno);
	g.cap = 1 << 20;
	g.buf = malloc(g.cap);
	if (!g.buf)
		die("buffer", ENOMEM);
	pt_config_init(&cfg);
	cfg.begin = g.buf;
	cfg.end = g.buf + g.cap;
	g.enc = pt_alloc_encoder(&cfg);
	if (!g.enc)
		die("encoder", ENOMEM);
	walk(&g, b, (uint32_t)nblocks, want, TEXT_ADDR + len - 2);
	if (fclose(g.out))
		die(path, errno);
	for (uint64_t i = 0; i < nblocks; i++)
		visited += b[i].seen;
	printf("instructions %" PRIu64 " branches %" PRIu64 " calls %" PRIu64 " psbs %" PRIu64
	       " blocks %" PRIu64 " visited %" PRIu64 "\n", g.insns, g.branches, g.calls, g.psbs,
	       nblocks, visited);
	pt_free_encoder(g.enc);
	free(g.buf);
	free(code);
	free(b);
	return 0;
}
