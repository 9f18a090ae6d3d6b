// SPDX-License-Identifier: MIT
/*
 * ptgen: write a program and the Intel PT trace of running it, for the decode tests and the
 * bench. The program is a loop that calls f, which calls g; g's conditional branch follows a
 * fixed pattern. The trace is what a CPU with return compression would write: TNT bits for
 * g's jl, both returns and the loop's jnz, a PSB+ (TSC, MODE.Exec, FUP at the loop) every
 * few KiB, TIP.PGE at the start and TIP.PGD at the final syscall. libipt's encoder writes
 * the packets; the program comes as a raw binary and as a minimal ELF with symbols.
 *
 *	ptgen [-n ITERATIONS] [-p TNT_PACKETS_PER_PSB] [-t TSC_STEP] [-s EVERY -w WORK | -d DEPTH]
 *	      [-z] OUTDIR
 *
 * -s EVERY -w WORK writes another program, for the report tests: the loop calls f, whose
 * call is fast (cmp, jl taken, ret) except every EVERY-th (iterations 0, EVERY, ...), which
 * runs WORK turns of a dec/jnz loop (2 * WORK more instructions) before its ret; a slow call
 * has a PSB+ (its TSC TSC_STEP later each) where its loop starts and where it ends, so that
 * libipt reports the time there (an event), and its ret is a TIP (a CPU compresses no
 * return across a PSB). -d DEPTH: the loop runs DEPTH calls deep, for the report tests
 * (a call stack past report's bound): the trace starts at r, after the loop's code, which
 * calls itself DEPTH times (r: dec esi; jz loop; call r; ret) and then jumps to the loop,
 * where the trace ends as before (r's calls never return). -z: no TSC packets (a trace
 * without timing).
 *
 * writes OUTDIR/trace.pt, OUTDIR/prog.bin (raw, at 0x401000), OUTDIR/prog.elf and prints
 * "instructions N branches N calls N psbs N" (branches: taken near branches): what a
 * decoder must find.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptenc.h"

#define TEXT_ADDR 0x401000ull
#define TEXT_OFF 0x1000ull
#define LOOP (TEXT_ADDR + 0x00)
#define F (TEXT_ADDR + 0x10)
#define G (TEXT_ADDR + 0x20)

/* loop: call f; dec ecx; jnz loop; syscall.  f: call g; ret.  g: add; cmp; jl 1f; nop; 1: ret */
#define LOOP_F_G \
	0xe8, 0x0b, 0x00, 0x00, 0x00,	/* 0x00 call f */ \
	0xff, 0xc9,			/* 0x05 dec ecx */ \
	0x75, 0xf7,			/* 0x07 jnz loop */ \
	0x0f, 0x05,			/* 0x09 syscall */ \
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, \
	0xe8, 0x0b, 0x00, 0x00, 0x00,	/* 0x10 f: call g */ \
	0xc3,				/* 0x15 ret */ \
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, \
	0x83, 0xc0, 0x01,		/* 0x20 g: add eax, 1 */ \
	0x39, 0xd8,			/* 0x23 cmp eax, ebx */ \
	0x7c, 0x01,			/* 0x25 jl 0x28 */ \
	0x90,				/* 0x27 nop */ \
	0xc3				/* 0x28 ret */

static const uint8_t code[] = { LOOP_F_G };

/* -s: loop: call f; dec ecx; jnz loop; syscall.  f: cmp; jl 1f; w: dec edx; jnz w; 1: ret */
static const uint8_t slow_code[] = {
	0xe8, 0x0b, 0x00, 0x00, 0x00,	/* 0x00 call f */
	0xff, 0xc9,			/* 0x05 dec ecx */
	0x75, 0xf7,			/* 0x07 jnz loop */
	0x0f, 0x05,			/* 0x09 syscall */
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0x39, 0xd8,			/* 0x10 f: cmp eax, ebx */
	0x7c, 0x04,			/* 0x12 jl 0x18 */
	0xff, 0xca,			/* 0x14 w: dec edx */
	0x75, 0xfc,			/* 0x16 jnz w */
	0xc3,				/* 0x18 ret */
};

/* -d: the loop, f and g as above, then r: dec esi; jz loop; call r; ret */
#define R (TEXT_ADDR + 0x30)

static const uint8_t deep_code[] = {
	LOOP_F_G,
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0xff, 0xce,			/* 0x30 r: dec esi */
	0x0f, 0x84, 0xc8, 0xff, 0xff, 0xff,	/* 0x32 jz loop */
	0xe8, 0xf3, 0xff, 0xff, 0xff,	/* 0x38 call r */
	0xc3,				/* 0x3d ret */
};

static const uint8_t *prog = code;
static size_t prog_size = sizeof(code);
static bool no_tsc;

#define ITER_BITS 4		/* jl, ret g, ret f, jnz */
#define ITER_PER_TNT 11		/* 44 of a TNT.64's 47 bits: whole iterations per packet */

struct gen {
	struct ptenc e;
	uint64_t tsc, tsc_step;
	uint64_t insns, branches, calls, psbs;
};

/* A PSB+: TSC (unless -z), MODE.Exec, FUP at @fup (0: none, tracing is off), PSBEND. */
static void emit_psb_at(struct gen *g, uint64_t fup)
{
	ptenc_psb(&g->e, no_tsc ? NULL : &g->tsc, fup, fup);
	g->psbs++;
}

static void emit_psb(struct gen *g, bool enabled)
{
	emit_psb_at(g, enabled ? LOOP : 0);
}

/* One iteration's bits, oldest first: jl taken every third time, both rets, jnz. */
static uint64_t iter_bits(uint64_t i, bool last)
{
	bool jl = (i % 3) == 0;

	return ((uint64_t)jl << 3) | (1u << 2) | (1u << 1) | (last ? 0u : 1u);
}

static void count_iter(struct gen *g, uint64_t i, bool last)
{
	bool jl = (i % 3) == 0;

	/* call f, call g, add, cmp, jl, [nop], ret, ret, dec, jnz */
	g->insns += jl ? 9 : 10;
	/* taken near branches: call f, call g, ret, ret, jl when taken, jnz but the last */
	g->branches += 4 + (jl ? 1 : 0) + (last ? 0 : 1);
	g->calls += 2;
}

static void write_trace(struct gen *g, uint64_t iters, unsigned per_psb)
{
	uint64_t i = 0;
	unsigned packets = 0;

	emit_psb(g, false);
	ptenc_emit_ip(&g->e, ppt_tip_pge, pt_ipc_sext_48, LOOP);
	while (i < iters) {
		uint64_t payload = 0;
		unsigned n = 0;

		if (packets && packets % per_psb == 0) {
			g->tsc += g->tsc_step;
			emit_psb(g, true);
		}
		for (; n < ITER_PER_TNT && i < iters; n++, i++) {
			payload = (payload << ITER_BITS) | iter_bits(i, i + 1 == iters);
			count_iter(g, i, i + 1 == iters);
		}
		ptenc_emit_tnt(&g->e, payload, n * ITER_BITS);
		packets++;
	}
	/* The syscall after the loop leaves user space: tracing stops there. */
	g->insns += 1;
	ptenc_emit_ip(&g->e, ppt_tip_pgd, pt_ipc_suppressed, 0);
}

/* TNT.64 packets of up to 47 bits (ptenc gathers them); a PSB every per_psb packets. */
struct tnt {
	unsigned packets, per_psb;
};

/* A PSB+ (its FUP at the loop) goes between iterations only: none is due in the middle. */

static void tnt_flush(struct gen *g, struct tnt *t)
{
	if (ptenc_tnt_flush(&g->e))
		t->packets++;
}

static void tnt_bit(struct gen *g, struct tnt *t, bool bit)
{
	if (ptenc_tnt_bit(&g->e, bit))
		t->packets++;
}

/*
 * Time passes inside a slow call: a PSB+ at @ip (the next instruction), its TSC TSC_STEP
 * later. libipt's instruction decoder gives the time of the PSB+'s event from there on
 * (ptxed --time); a bare TSC packet would show only at the next event.
 */
static void slow_tsc(struct gen *g, struct tnt *t, uint64_t ip)
{
	if (no_tsc)
		return;
	tnt_flush(g, t);
	g->tsc += g->tsc_step;
	emit_psb_at(g, ip);
}

/* -s: f is slow (WORK turns) at iterations 0, EVERY, 2 EVERY, ... */
static void write_slow_trace(struct gen *g, uint64_t iters, unsigned per_psb, uint64_t every,
			     uint64_t work)
{
	struct tnt t = { .per_psb = per_psb };

	emit_psb(g, false);
	ptenc_emit_ip(&g->e, ppt_tip_pge, pt_ipc_sext_48, LOOP);
	for (uint64_t i = 0; i < iters; i++) {
		bool slow = i % every == 0, last = i + 1 == iters;

		if (t.packets >= t.per_psb) {
			tnt_flush(g, &t);
			t.packets = 0;
			g->tsc += g->tsc_step;
			emit_psb(g, true);
		}

		/* call f, cmp, jl, [work: dec, jnz], ret, dec, jnz */
		g->calls++;
		if (slow) {
			tnt_bit(g, &t, 0);		/* jl not taken */
			slow_tsc(g, &t, F + 4);		/* w: dec edx */
			for (uint64_t k = 0; k < work; k++)
				tnt_bit(g, &t, k + 1 < work);
			slow_tsc(g, &t, F + 8);		/* ret */
			g->insns += 6 + 2 * work;
			g->branches += 2 + (work - 1) + (last ? 0 : 1);
		} else {
			tnt_bit(g, &t, 1);		/* jl taken */
			g->insns += 6;
			g->branches += 3 + (last ? 0 : 1);
		}
		if (slow && !no_tsc) {
			/*
			 * ret: its call was before a PSB, and a CPU starts return
			 * compression afresh at a PSB: a TIP, not a TNT bit.
			 */
			tnt_flush(g, &t);
			ptenc_emit_ip(&g->e, ppt_tip, pt_ipc_sext_48, LOOP + 5);
		} else {
			tnt_bit(g, &t, 1);		/* ret (compressed) */
		}
		tnt_bit(g, &t, !last);			/* jnz loop */
	}
	tnt_flush(g, &t);
	g->insns += 1;
	ptenc_emit_ip(&g->e, ppt_tip_pgd, pt_ipc_suppressed, 0);
}

/* -d: r's DEPTH calls (a TNT bit each: jz not taken), then the loop as write_trace()'s. */
static void write_deep_trace(struct gen *g, uint64_t iters, unsigned per_psb, uint64_t depth)
{
	struct tnt t = { .per_psb = per_psb };

	emit_psb(g, false);
	ptenc_emit_ip(&g->e, ppt_tip_pge, pt_ipc_sext_48, R);
	for (uint64_t d = 0; d < depth; d++) {
		tnt_bit(g, &t, 0);			/* jz not taken, then call r */
		g->insns += 3;
		g->branches++;
		g->calls++;
	}
	tnt_bit(g, &t, 1);				/* jz loop */
	g->insns += 2;
	g->branches++;
	for (uint64_t i = 0; i < iters; i++) {
		uint64_t bits = iter_bits(i, i + 1 == iters);

		if (t.packets >= t.per_psb) {
			tnt_flush(g, &t);
			t.packets = 0;
			g->tsc += g->tsc_step;
			emit_psb(g, true);
		}
		for (int b = ITER_BITS - 1; b >= 0; b--)
			tnt_bit(g, &t, bits >> b & 1);
		count_iter(g, i, i + 1 == iters);
	}
	tnt_flush(g, &t);
	g->insns += 1;
	ptenc_emit_ip(&g->e, ppt_tip_pgd, pt_ipc_suppressed, 0);
}

/* A minimal ET_EXEC: one PT_LOAD (R+X) over the whole file, .text at 0x401000, .symtab. */
static void write_elf(const char *dir)
{
	static const char strtab[] = "\0_start\0f\0g\0";
	static const char shstrtab[] = "\0.text\0.symtab\0.strtab\0.shstrtab\0";
	size_t symoff = TEXT_OFF + prog_size, stroff, shstroff, shoff, size;
	Elf64_Sym syms[4];
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	uint8_t *img;

	symoff = (symoff + 7) & ~7ul;
	stroff = symoff + sizeof(syms);
	shstroff = stroff + sizeof(strtab);
	shoff = (shstroff + sizeof(shstrtab) + 7) & ~7ul;
	size = shoff + 5 * sizeof(Elf64_Shdr);
	img = calloc(1, size);
	if (!img)
		ptenc_die("elf", ENOMEM);
	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = LOOP;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = shoff;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 5;
	eh->e_shstrndx = 4;
	ph = (Elf64_Phdr *)(img + sizeof(*eh));
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_vaddr = ph->p_paddr = TEXT_ADDR - TEXT_OFF;
	ph->p_filesz = ph->p_memsz = TEXT_OFF + prog_size;
	ph->p_align = 0x1000;
	memcpy(img + TEXT_OFF, prog, prog_size);
	memset(syms, 0, sizeof(syms));
	syms[1] = (Elf64_Sym){ .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			       .st_shndx = 1, .st_value = LOOP, .st_size = 0x10 };
	syms[2] = (Elf64_Sym){ .st_name = 8, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			       .st_shndx = 1, .st_value = F, .st_size = prog != slow_code ? 0x06 : 0x09 };
	syms[3] = (Elf64_Sym){ .st_name = 10, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			       .st_shndx = 1, .st_value = G, .st_size = 0x09 };
	memcpy(img + symoff, syms, sizeof(syms));
	memcpy(img + stroff, strtab, sizeof(strtab));
	memcpy(img + shstroff, shstrtab, sizeof(shstrtab));
	sh = (Elf64_Shdr *)(img + shoff);
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC |
			      SHF_EXECINSTR, .sh_addr = TEXT_ADDR, .sh_offset = TEXT_OFF,
			      .sh_size = prog_size, .sh_addralign = 16 };
	/* -s: f and _start (g is not in the program). */
	sh[2] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_SYMTAB, .sh_offset = symoff,
			      .sh_size = sizeof(syms) - (prog != slow_code ? 0 : sizeof(syms[0])), .sh_link = 3, .sh_info = 1,
			      .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym) };
	sh[3] = (Elf64_Shdr){ .sh_name = 15, .sh_type = SHT_STRTAB, .sh_offset = stroff,
			      .sh_size = sizeof(strtab), .sh_addralign = 1 };
	sh[4] = (Elf64_Shdr){ .sh_name = 23, .sh_type = SHT_STRTAB, .sh_offset = shstroff,
			      .sh_size = sizeof(shstrtab), .sh_addralign = 1 };
	ptenc_write_file(dir, "prog.elf", img, size);
	free(img);
}

int main(int argc, char **argv)
{
	uint64_t iters = 1000, per_psb = 64, every = 0, work = 0, depth = 0;
	struct gen g;
	int c;

	memset(&g, 0, sizeof(g));
	g.tsc = 0x100000;
	g.tsc_step = 0x1000;
	while ((c = getopt(argc, argv, "n:p:t:s:w:d:z")) != -1) {
		switch (c) {
		case 'd': depth = ptenc_number(optarg, "-d"); break;
		case 's': every = ptenc_number(optarg, "-s"); break;
		case 'w': work = ptenc_number(optarg, "-w"); break;
		case 'z': no_tsc = true; break;
		case 'n': iters = ptenc_number(optarg, "-n"); break;
		case 'p': per_psb = ptenc_number(optarg, "-p"); break;
		case 't': g.tsc_step = ptenc_number(optarg, "-t"); break;
		default: return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "usage: ptgen [-n ITERATIONS] [-p TNT_PER_PSB] [-t TSC_STEP] "
			"OUTDIR\n");
		return 2;
	}
	if (!every != !work) {
		fprintf(stderr, "ptgen: -s and -w go together\n");
		return 2;
	}
	if (every && depth) {
		fprintf(stderr, "ptgen: -s and -d are two programs\n");
		return 2;
	}
	if (every) {
		prog = slow_code;
		prog_size = sizeof(slow_code);
	}
	if (depth) {
		prog = deep_code;
		prog_size = sizeof(deep_code);
	}
	ptenc_write_file(argv[optind], "prog.bin", prog, prog_size);
	write_elf(argv[optind]);
	ptenc_open(&g.e, argv[optind]);
	if (every)
		write_slow_trace(&g, iters, (unsigned)per_psb, every, work);
	else if (depth)
		write_deep_trace(&g, iters, (unsigned)per_psb, depth);
	else
		write_trace(&g, iters, (unsigned)per_psb);
	ptenc_close(&g.e);
	printf("instructions %" PRIu64 " branches %" PRIu64 " calls %" PRIu64 " psbs %" PRIu64
	       "\n", g.insns, g.branches, g.calls, g.psbs);
	return 0;
}
