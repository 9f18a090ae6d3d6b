// SPDX-License-Identifier: MIT
/*
 * ptplay: the Intel PT stream a CPU writes for one run of a small static program, traced
 * user-only with ptcollect's default config (intel_pt//u: branch, tsc, RET compression on,
 * no CYC), for the kernel rig's simulated PMU to play as its hardware output.
 *
 * usage: ptplay PROGRAM STREAM INSNS
 *
 * The control flow is not written by hand: ptplay runs PROGRAM (no arguments, empty
 * environment, stdout to /dev/null) under ptrace, one instruction at a time, classifies
 * each instruction with capstone, and encodes with libipt's packet encoder what the CPU
 * writes for that run:
 *   PSB, TSC (the stamp marker), PSBEND        trace enabled (PSB+ at TraceEn)
 *   MODE.exec (64-bit), TIP.PGE entry          the first instruction after the exec
 *   TNT.8 (up to 6 bits)                       conditional branches, compressed RETs
 *   TIP                                        indirect jumps and calls, RETs that do not
 *                                              return to a CALL on the call stack
 *   TIP.PGD (IP suppressed)                    a syscall: the kernel is not traced
 *   TIP.PGE                                    back from a syscall
 * IPs are compressed against the last IP as the CPU does (the first after PSB as a
 * sign-extended 48-bit IP, then 16- or 32-bit updates where they suffice). Pending TNT
 * bits go out before any IP packet. The TSC payload is the rig's stamp marker
 * (0xffffffffffffff): ptsim.ko writes the live TSC there when it plays the stream.
 *
 * Left out, as README.md (Played streams) explains: MTC and TMA (the rig's CPU has no
 * CPUID leaf 0x15), CBR (no nominal ratio), and the FUP/TIP.PGD/TIP.PGE a CPU adds around
 * each page fault or interrupt the run takes. What ptplay cannot model it refuses: REP
 * string instructions (and branches to themselves), far transfers, interrupts, a RET that
 * misses a non-empty call stack, calls deeper than the CPU's 64-entry stack, a stream
 * longer than one PSB period.
 *
 * INSNS gets the address of every instruction executed, one per line, as ptxed prints
 * them (%016llx). stdout gets one line of counts. Exit status 0, 1 on error, 3 when
 * ptrace is not permitted here (a test then skips).
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <intel-pt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define STAMP_MARKER 0xffffffffffffffULL	/* TSC payload: "write the live TSC here" */
#define PSB_PERIOD (1U << (3 + 11))	/* psb_period=3: a PSB+ every 16 KiB of output */
#define RETSTACK_DEPTH 64		/* the CPU's call stack for RET compression */
#define MAX_STEPS 1000000
#define EXIT_NO_PTRACE 3

enum kind { K_OTHER, K_JCC, K_JMP, K_JMP_IND, K_CALL, K_CALL_IND, K_RET, K_SYSCALL };

struct step {
	uint64_t ip;
	uint8_t size;
	enum kind kind;
};

struct run {
	struct step *s;
	size_t n, cap;
};

struct enc {
	struct pt_encoder *e;
	uint8_t buf[PSB_PERIOD];
	size_t len;
	uint64_t last_ip;	/* for IP compression; 0 after PSB */
	bool have_ip;
	uint64_t tnt;		/* pending TNT bits, the oldest in the highest bit */
	int ntnt;
	uint64_t retstack[RETSTACK_DEPTH];
	int depth;
	unsigned long count[8];	/* insns, tnt bits, compressed rets, tip, pge, pgd, packets */
};

enum { C_INSN, C_TNT, C_RETCOMP, C_TIP, C_PGE, C_PGD, C_PACKETS };

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("ptplay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* ---- the run, one instruction at a time ---- */

static pid_t start_child(const char *prog)
{
	char *argv[] = { (char *)prog, NULL }, *envp[] = { NULL };
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid)
		return pid;
	fd = open("/dev/null", O_WRONLY);
	if (fd >= 0)
		dup2(fd, STDOUT_FILENO);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
		fprintf(stderr, "ptplay: PTRACE_TRACEME: %s\n", strerror(errno));
		_exit(EXIT_NO_PTRACE);
	}
	execve(prog, argv, envp);
	fprintf(stderr, "ptplay: cannot execute '%s': %s\n", prog, strerror(errno));
	_exit(127);
}

static enum kind classify(csh cs, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	bool imm = x->op_count > 0 && x->operands[0].type == X86_OP_IMM;

	switch (in->id) {
	case X86_INS_JMP:
		return imm ? K_JMP : K_JMP_IND;
	case X86_INS_CALL:
		return imm ? K_CALL : K_CALL_IND;
	case X86_INS_RET:
		return K_RET;
	case X86_INS_SYSCALL:
		return K_SYSCALL;
	}
	if (cs_insn_group(cs, in, CS_GRP_JUMP) && in->id != X86_INS_LJMP)
		return K_JCC;
	if (cs_insn_group(cs, in, CS_GRP_JUMP) || cs_insn_group(cs, in, CS_GRP_CALL) ||
	    cs_insn_group(cs, in, CS_GRP_RET) || cs_insn_group(cs, in, CS_GRP_INT) ||
	    cs_insn_group(cs, in, CS_GRP_IRET))
		die("0x%" PRIx64 ": %s %s: a far transfer or interrupt, which ptplay does not model",
		    in->address, in->mnemonic, in->op_str);
	return K_OTHER;
}

static void decode_at(csh cs, int mem, uint64_t ip, struct step *st)
{
	uint8_t code[16];
	cs_insn *in;
	ssize_t got = pread(mem, code, sizeof(code), (off_t)ip);

	if (got <= 0)
		die("reading the code at 0x%" PRIx64 ": %s", ip, got < 0 ? strerror(errno) : "EOF");
	if (cs_disasm(cs, code, (size_t)got, ip, 1, &in) != 1)
		die("0x%" PRIx64 ": capstone cannot decode the instruction", ip);
	st->ip = ip;
	st->size = (uint8_t)in->size;
	st->kind = classify(cs, in);
	cs_free(in, 1);
}

static void add_step(struct run *r, const struct step *st)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 1024;
		r->s = realloc(r->s, r->cap * sizeof(*r->s));
		if (!r->s)
			die("out of memory");
	}
	r->s[r->n++] = *st;
}

/* Wait for the child; false when it has exited (status 0 only), true when it stopped. */
static bool wait_step(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		die("waitpid: %s", strerror(errno));
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) == EXIT_NO_PTRACE)
			exit(EXIT_NO_PTRACE);
		if (WEXITSTATUS(status))
			die("the program exited with status %d", WEXITSTATUS(status));
		return false;
	}
	if (WIFSIGNALED(status))
		die("the program was killed by signal %d", WTERMSIG(status));
	if (WSTOPSIG(status) != SIGTRAP)
		die("the program stopped with signal %d", WSTOPSIG(status));
	return true;
}

static void single_step(const char *prog, struct run *r)
{
	struct user_regs_struct regs;
	char path[64];
	pid_t pid = start_child(prog);
	csh cs;
	int mem;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		die("capstone: cannot open an x86-64 handle");
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (!wait_step(pid))
		die("the program exited before its first instruction");
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = open(path, O_RDONLY);
	if (mem < 0)
		die("%s: %s", path, strerror(errno));
	do {
		struct step st;

		if (ptrace(PTRACE_GETREGS, pid, NULL, &regs) < 0)
			die("PTRACE_GETREGS: %s", strerror(errno));
		if (r->n && regs.rip == r->s[r->n - 1].ip)
			die("0x%llx: ran twice in a row (a REP string instruction or a branch "
			    "to itself), which ptplay does not model", regs.rip);
		decode_at(cs, mem, regs.rip, &st);
		add_step(r, &st);
		if (r->n > MAX_STEPS)
			die("more than %d instructions: not a small program", MAX_STEPS);
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) < 0)
			die("PTRACE_SINGLESTEP: %s", strerror(errno));
	} while (wait_step(pid));
	close(mem);
	cs_close(&cs);
	if (r->s[r->n - 1].kind != K_SYSCALL)
		die("the run did not end with a syscall");
}

/* ---- the packets ---- */

static void put(struct enc *e, struct pt_packet *p)
{
	int n = pt_enc_next(e->e, p);

	if (n == -pte_eos)
		die("the stream passes %u bytes, where the CPU would insert a PSB+ "
		    "(psb_period=3): make the program shorter", PSB_PERIOD);
	if (n < 0)
		die("encoding packet type %d: %s", p->type, pt_errstr(pt_errcode(n)));
	e->len += (size_t)n;
	e->count[C_PACKETS]++;
}

static void put_simple(struct enc *e, enum pt_packet_type type)
{
	struct pt_packet p = { .type = type };

	put(e, &p);
}

static void flush_tnt(struct enc *e)
{
	struct pt_packet p = { .type = ppt_tnt_8 };

	if (!e->ntnt)
		return;
	p.payload.tnt.bit_size = (uint8_t)e->ntnt;
	p.payload.tnt.payload = e->tnt;
	put(e, &p);
	e->tnt = 0;
	e->ntnt = 0;
}

static void add_tnt(struct enc *e, bool taken)
{
	e->tnt = e->tnt << 1 | taken;
	e->count[C_TNT]++;
	if (++e->ntnt == 6)	/* a short TNT holds six */
		flush_tnt(e);
}

/* The compression the CPU picks: the fewest bytes that rebuild @ip from the last IP. */
static enum pt_ip_compression ipc_for(const struct enc *e, uint64_t ip)
{
	uint64_t top = ip >> 47;

	if (e->have_ip && !((ip ^ e->last_ip) >> 16))
		return pt_ipc_update_16;
	if (e->have_ip && !((ip ^ e->last_ip) >> 32))
		return pt_ipc_update_32;
	if (!top || top == 0x1ffff)
		return pt_ipc_sext_48;
	return pt_ipc_full;
}

static void put_ip(struct enc *e, enum pt_packet_type type, uint64_t ip)
{
	struct pt_packet p = { .type = type };

	flush_tnt(e);
	p.payload.ip.ipc = ipc_for(e, ip);
	p.payload.ip.ip = ip;
	put(e, &p);
	e->last_ip = ip;
	e->have_ip = true;
}

static void put_pgd(struct enc *e)
{
	struct pt_packet p = { .type = ppt_tip_pgd };

	flush_tnt(e);
	p.payload.ip.ipc = pt_ipc_suppressed;
	put(e, &p);
	e->count[C_PGD]++;
}

/* PSB+ as the CPU writes it when tracing is enabled in the kernel (ContextEn=0). */
static void put_psb_plus(struct enc *e)
{
	struct pt_packet tsc = { .type = ppt_tsc };

	put_simple(e, ppt_psb);
	tsc.payload.tsc.tsc = STAMP_MARKER;
	put(e, &tsc);
	put_simple(e, ppt_psbend);
	e->have_ip = false;
}

static void put_mode_exec64(struct enc *e)
{
	struct pt_packet p = { .type = ppt_mode };

	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	put(e, &p);
}

static void push_ret(struct enc *e, uint64_t ret)
{
	if (e->depth == RETSTACK_DEPTH)
		die("calls nest deeper than the CPU's %d-entry call stack", RETSTACK_DEPTH);
	e->retstack[e->depth++] = ret;
}

static void do_ret(struct enc *e, const struct step *st, uint64_t to)
{
	if (e->depth && e->retstack[e->depth - 1] == to) {
		e->depth--;
		e->count[C_RETCOMP]++;
		add_tnt(e, true);
		return;
	}
	if (e->depth)
		die("0x%" PRIx64 ": a RET that misses the call stack, which ptplay does not model",
		    st->ip);
	put_ip(e, ppt_tip, to);
	e->count[C_TIP]++;
}

/* The packets for one instruction, given where the run went next (0: it ended there). */
static void encode_step(struct enc *e, const struct step *st, uint64_t next)
{
	uint64_t fall = st->ip + st->size;

	switch (st->kind) {
	case K_JCC:
		add_tnt(e, next != fall);
		break;
	case K_CALL:
		push_ret(e, fall);
		break;
	case K_CALL_IND:
		push_ret(e, fall);
		/* fall through */
	case K_JMP_IND:
		put_ip(e, ppt_tip, next);
		e->count[C_TIP]++;
		break;
	case K_RET:
		do_ret(e, st, next);
		break;
	case K_SYSCALL:
		put_pgd(e);
		if (next) {
			put_ip(e, ppt_tip_pge, next);
			e->count[C_PGE]++;
		}
		break;
	case K_JMP:
	case K_OTHER:
		break;
	}
}

static void encode(struct enc *e, const struct run *r)
{
	struct pt_config cfg;

	pt_config_init(&cfg);
	cfg.begin = e->buf;
	cfg.end = e->buf + sizeof(e->buf);
	e->e = pt_alloc_encoder(&cfg);
	if (!e->e)
		die("libipt: cannot allocate an encoder");
	put_psb_plus(e);
	put_mode_exec64(e);
	put_ip(e, ppt_tip_pge, r->s[0].ip);
	e->count[C_PGE]++;
	for (size_t i = 0; i < r->n; i++)
		encode_step(e, &r->s[i], i + 1 < r->n ? r->s[i + 1].ip : 0);
	e->count[C_INSN] = r->n;
	pt_free_encoder(e->e);
}

/* ---- output ---- */

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f))
		die("cannot write '%s': %s", path, strerror(errno));
}

static void write_insns(const char *path, const struct run *r)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("cannot write '%s': %s", path, strerror(errno));
	for (size_t i = 0; i < r->n; i++)
		fprintf(f, "%016" PRIx64 "\n", r->s[i].ip);
	if (fclose(f))
		die("cannot write '%s': %s", path, strerror(errno));
}

int main(int argc, char **argv)
{
	static struct enc e;
	struct run r = { 0 };

	if (argc != 4) {
		fprintf(stderr, "usage: ptplay PROGRAM STREAM INSNS\n");
		return 2;
	}
	single_step(argv[1], &r);
	encode(&e, &r);
	write_file(argv[2], e.buf, e.len);
	write_insns(argv[3], &r);
	printf("insns %lu bytes %zu packets %lu tnt_bits %lu compressed_rets %lu tip %lu "
	       "tip_pge %lu tip_pgd %lu stamps 1\n", e.count[C_INSN], e.len, e.count[C_PACKETS],
	       e.count[C_TNT], e.count[C_RETCOMP], e.count[C_TIP], e.count[C_PGE],
	       e.count[C_PGD]);
	free(r.s);
	return 0;
}
