// SPDX-License-Identifier: MIT
/*
 * A workload stopped after its exec with ptrace, and let go by detaching, or
 * kept as a tracee whose stray debug traps are swallowed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exechold.h"
#include "procfs.h"

#ifndef TRAP_BRKPT
#define TRAP_BRKPT 1
#endif
#ifndef TRAP_TRACE
#define TRAP_TRACE 2
#endif
#ifndef TRAP_HWBKPT
#define TRAP_HWBKPT 4
#endif

#define EFLAGS_TF	0x100
#define ICEBP		0xf1	/* int1: a #DB the program raises itself, a trap (IP after it) */

#define FOLLOW (PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
		PTRACE_O_TRACECLONE)

int exechold_child(void)
{
	return ptrace(PTRACE_TRACEME, 0, NULL, NULL) ? -errno : 0;
}

int exechold_seize(pid_t pid)
{
	return ptrace(PTRACE_SEIZE, pid, NULL, (void *)(long)FOLLOW) ? -errno : 0;
}

int exechold_wait(pid_t pid, int *status, struct error *e)
{
	int st = 0;
	pid_t r;

	do
		r = waitpid(pid, &st, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return err_runtime(e, -errno, "waiting for process %d to exec: %s", (int)pid,
				   strerror(errno));
	if (status)
		*status = st;
	if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && (st >> 16 == 0 ||
							   st >> 16 == PTRACE_EVENT_EXEC))
		return 0;
	if (WIFSTOPPED(st)) {
		/* Any other stop before the exec's: pass a signal on and keep waiting. */
		int sig = st >> 16 ? 0 : WSTOPSIG(st);

		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig))
			return err_runtime(e, -errno, "process %d: %s", (int)pid, strerror(errno));
		return exechold_wait(pid, status, e);
	}
	return err_runtime(e, -ECHILD, "process %d ended before its exec", (int)pid);
}

int exechold_release(pid_t pid, struct error *e)
{
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL))
		return err_runtime(e, -errno, "letting process %d run: %s", (int)pid,
				   strerror(errno));
	return 0;
}

int exechold_keep(pid_t pid, struct error *e)
{
	if (ptrace(PTRACE_CONT, pid, NULL, NULL))
		return err_runtime(e, -errno, "letting process %d run: %s", (int)pid,
				   strerror(errno));
	return 0;
}

static uint64_t bp_addrs[EXECHOLD_MAX_BP];
static int nr_bp_addrs;

int exechold_note_breakpoint(uint64_t addr)
{
	for (int i = 0; i < nr_bp_addrs; i++)
		if (bp_addrs[i] == addr)
			return 0;
	if (nr_bp_addrs == EXECHOLD_MAX_BP)
		return -ENOSPC;
	bp_addrs[nr_bp_addrs++] = addr;
	return 0;
}

static bool at_breakpoint(uint64_t ip, const uint64_t *bp, int nr_bp)
{
	for (int i = 0; i < nr_bp; i++)
		if (bp[i] == ip)
			return true;
	return false;
}

/*
 * An execute breakpoint is a fault: the thread stops with IP at the
 * breakpoint's address, the instruction not run. x86's exc_debug_user()
 * sends SIGTRAP for a #DB that no notifier fully claimed: TRAP_HWBKPT when a
 * DR6 trap bit is left (our breakpoint's, no perf event took it), TRAP_TRACE
 * when DR6 has BS, TRAP_BRKPT when DR6 read back empty (taken for an icebp).
 * The program's own traps differ: int3 is SI_KERNEL, raise() SI_TKILL, its
 * icebp a trap with 0xf1 right before IP, its single-step TF set (TRAP_TRACE
 * at an IP of ours with TF clear and no icebp is ours: the program cannot
 * single-step there without TF).
 */
bool exechold_trap_is_stray(const struct exechold_trap *tr, const uint64_t *bp, int nr_bp)
{
	switch (tr->si_code) {
	case TRAP_HWBKPT:
		/* Only our breakpoints set DR7 in a process whose tracer we are. */
		return true;
	case TRAP_BRKPT:
	case TRAP_TRACE:
		return !tr->tf && tr->prev_byte != ICEBP && at_breakpoint(tr->ip, bp, nr_bp);
	default:
		return false;
	}
}

/* The CPU @tid last ran on: field 39 of /proc/TID/stat, or -1. */
static int last_cpu(pid_t tid)
{
	char name[64], buf[1024], *p;
	int cpu = -1, field = 2;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/stat", (int)tid);
	f = fopen(name, "re");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')'))) {
		for (p++; *p && field < 39; p++)
			field += *p == ' ';
		if (field == 39)
			sscanf(p, "%d", &cpu);
	}
	fclose(f);
	return cpu;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* What the thread looks like at a SIGTRAP stop, as much as ptrace tells. */
static void trap_evidence(pid_t tid, struct exechold_trap *tr)
{
	struct user_regs_struct regs;
	siginfo_t si;
	long word;

	memset(tr, 0, sizeof(*tr));
	tr->tid = tid;
	tr->prev_byte = -1;
	tr->si_code = EXECHOLD_NO_SIGINFO;
	if (!ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) && si.si_signo == SIGTRAP) {
		tr->si_code = si.si_code;
		tr->fault_addr = (uint64_t)(uintptr_t)si.si_addr;
	}
#if defined(__x86_64__)
	if (!ptrace(PTRACE_GETREGS, tid, NULL, &regs)) {
		tr->ip = regs.rip;
		tr->tf = regs.eflags & EFLAGS_TF;
		errno = 0;
		word = ptrace(PTRACE_PEEKDATA, tid, (void *)(uintptr_t)(tr->ip - 1), NULL);
		if (!errno)
			tr->prev_byte = (int)(word & 0xff);
	}
	errno = 0;
	word = ptrace(PTRACE_PEEKUSER, tid, (void *)offsetof(struct user, u_debugreg[6]), NULL);
	if (!errno)
		tr->dr6 = (uint64_t)word;
#else
	(void)regs;
	(void)word;
	tr->ip = tr->fault_addr;
#endif
	tr->cpu = last_cpu(tid);
}

/*
 * A SIGTRAP at @tid's signal-delivery stop: 0 when it is a stray trap of our
 * breakpoints (swallowed: the instruction runs again, where the breakpoint
 * is claimed and counted once), else SIGTRAP. Either is recorded in @t.
 */
static int judge_trap(pid_t tid, struct exechold_traps *t)
{
	struct exechold_trap tr;

	trap_evidence(tid, &tr);
	if (exechold_trap_is_stray(&tr, bp_addrs, nr_bp_addrs)) {
		if (t) {
			t->swallowed++;
			t->last_swallowed = tr;
		}
		return 0;
	}
	if (t) {
		t->passed++;
		t->last_passed = tr;
	}
	return SIGTRAP;
}

/* Resume one tracee stop: the signal to pass on, or a swallowed trap. */
static void resume(pid_t tid, int st, struct exechold_traps *t)
{
	int sig = WSTOPSIG(st), event = st >> 16;

	if (event == PTRACE_EVENT_STOP) {
		/* A group-stop stays stopped; a new tracee's first stop goes on. */
		ptrace(is_stop_signal(sig) ? PTRACE_LISTEN : PTRACE_CONT, tid, NULL, NULL);
		return;
	}
	if (event) {		/* fork, vfork, clone, exec: the new ones are tracees too */
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	}
	if (sig == SIGTRAP)
		sig = judge_trap(tid, t);
	ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig);
}

bool exechold_poll(pid_t pid, int *status, struct exechold_traps *t)
{
	bool ended = false;
	pid_t r;
	int st;

	/* The workload is our only child: -1 is it and its tracee descendants. */
	while ((r = waitpid(-1, &st, __WALL | WNOHANG)) > 0) {
		if (WIFSTOPPED(st)) {
			resume(r, st, t);
			continue;
		}
		if (r == pid) {
			*status = st;
			ended = true;
		}
	}
	return ended;
}

/* ---- a running process (-p): every thread seized, and let go at the end ---------- */

struct exechold_group {
	pid_t pid;
	pid_t *tids;		/* the threads and children seized (or auto-attached) */
	int nr, cap;
};

static bool group_has(const struct exechold_group *g, pid_t tid)
{
	for (int i = 0; i < g->nr; i++)
		if (g->tids[i] == tid)
			return true;
	return false;
}

static int group_add(struct exechold_group *g, pid_t tid)
{
	if (group_has(g, tid))
		return 0;
	if (g->nr == g->cap) {
		int cap = g->cap ? 2 * g->cap : 64;
		pid_t *t = realloc(g->tids, (size_t)cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		g->tids = t;
		g->cap = cap;
	}
	g->tids[g->nr++] = tid;
	return 0;
}

static void group_remove(struct exechold_group *g, pid_t tid)
{
	for (int i = 0; i < g->nr; i++)
		if (g->tids[i] == tid) {
			g->tids[i] = g->tids[--g->nr];
			return;
		}
}

static void refused_why(pid_t pid, pid_t tid, int err, char *why, size_t len)
{
	pid_t tracer = procfs_tracer(tid);
	char who[64];

	if (tid == pid)
		snprintf(who, sizeof(who), "process %d", (int)pid);
	else
		snprintf(who, sizeof(who), "thread %d of process %d", (int)tid, (int)pid);
	if (tracer > 0)
		snprintf(why, len, "%s is already traced (by process %d: a debugger or strace)",
			 who, (int)tracer);
	else
		snprintf(why, len, "ptrace refused to seize %s: %s (kernel.yama.ptrace_scope, or a "
			 "security module)", who, strerror(err));
}

int exechold_group_check(pid_t pid, char *why, size_t len)
{
	char name[64];
	pid_t tracer;
	FILE *f;
	int scope = 0;

	tracer = procfs_tracer(pid);
	if (tracer > 0 && tracer != getpid()) {
		refused_why(pid, pid, EPERM, why, len);
		return -EPERM;
	}
	f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	if (scope >= 3) {
		snprintf(why, len, "kernel.yama.ptrace_scope is %d: no process may be traced",
			 scope);
		return -EPERM;
	}
	snprintf(name, sizeof(name), "/proc/%d", (int)pid);
	if (access(name, F_OK))
		return -ESRCH;
	return 0;
}

int exechold_group_seize(struct exechold_group **out, pid_t pid, char *why, size_t len,
			 struct error *e)
{
	struct exechold_group *g = calloc(1, sizeof(*g));
	int ret = 0, added;

	if (!g)
		return err_runtime(e, -ENOMEM, "out of memory");
	g->pid = pid;
	/* Threads started by one not seized yet escape a scan: scan until none is new. */
	do {
		pid_t *tids = NULL;
		int n = 0;

		added = 0;
		ret = procfs_tasks(pid, &tids, &n);
		if (ret) {
			err_runtime(e, ret, "the threads of process %d: %s", (int)pid,
				    strerror(-ret));
			break;
		}
		for (int i = 0; i < n && !ret; i++) {
			if (group_has(g, tids[i]))
				continue;
			if (!ptrace(PTRACE_SEIZE, tids[i], NULL, (void *)(long)FOLLOW)) {
				ret = group_add(g, tids[i]);
				added++;
				continue;
			}
			/* One that ended since the scan, or a zombie leader, has nothing to guard. */
			if (errno == ESRCH || (errno == EPERM && procfs_state(tids[i]) == 'Z'))
				continue;
			ret = -errno;
			refused_why(pid, tids[i], -ret, why, len);
			err_runtime(e, ret, "%s", why);
		}
		free(tids);
		if (ret == -ENOMEM)
			err_runtime(e, ret, "out of memory");
	} while (!ret && added);
	if (!ret && !g->nr)
		ret = err_runtime(e, -ESRCH, "process %d has no live thread to seize", (int)pid);
	if (ret) {
		exechold_group_release(g, NULL);
		exechold_group_free(g);
		return ret;
	}
	*out = g;
	return 0;
}

/*
 * At @tid's exec stop: a thread other than the leader that exec'd took the
 * leader's id (@tid) and its own is gone with no exit reported. The exec
 * stop's message names it: forgotten, else the release waits for it to stop.
 */
static void forget_former_tid(struct exechold_group *g, pid_t tid, int st)
{
	unsigned long former = 0;

	if (st >> 16 != PTRACE_EVENT_EXEC)
		return;
	if (!ptrace(PTRACE_GETEVENTMSG, tid, NULL, &former) && former &&
	    (pid_t)former != tid)
		group_remove(g, (pid_t)former);
}

void exechold_group_poll(struct exechold_group *g, struct exechold_traps *t)
{
	pid_t r;
	int st;

	/* -p has no workload: our only children are the tracees. */
	while ((r = waitpid(-1, &st, __WALL | WNOHANG)) > 0) {
		if (!WIFSTOPPED(st)) {
			group_remove(g, r);
			continue;
		}
		/* A thread or child auto-attached (clone, fork) reports here first. */
		group_add(g, r);
		forget_former_tid(g, r, st);
		resume(r, st, t);
	}
}

/* Let one stopped tracee go, its signal (but a stray trap) passed on. */
static void detach_stopped(struct exechold_group *g, pid_t tid, int st, struct exechold_traps *t)
{
	int sig = WSTOPSIG(st), event = st >> 16;
	unsigned long msg = 0;

	if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
	    event == PTRACE_EVENT_VFORK) {
		/* The new one is a tracee too, stopped or about to: let it go below. */
		if (!ptrace(PTRACE_GETEVENTMSG, tid, NULL, &msg) && msg)
			group_add(g, (pid_t)msg);
	}
	forget_former_tid(g, tid, st);
	if (event) {
		sig = 0;	/* an event stop, or a group-stop (which the detach keeps) */
	} else if (sig == SIGTRAP) {
		sig = judge_trap(tid, t);
	}
	ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
	group_remove(g, tid);
}

#define RELEASE_MS 2000		/* a thread that does not stop by then is left to exit() */

int exechold_group_release(struct exechold_group *g, struct exechold_traps *t)
{
	struct timespec nap = { 0, 1000000 };
	int waited = 0;

	if (!g)
		return 0;
	/* Each thread stops (PTRACE_INTERRUPT) and is detached at that stop. */
	for (int i = 0; i < g->nr; i++)
		ptrace(PTRACE_INTERRUPT, g->tids[i], NULL, NULL);
	while (g->nr && waited < RELEASE_MS) {
		pid_t r;
		int st;

		r = waitpid(-1, &st, __WALL | WNOHANG);
		if (r < 0 && errno == ECHILD)
			break;
		if (r <= 0) {
			nanosleep(&nap, NULL);
			waited++;
			continue;
		}
		if (!WIFSTOPPED(st)) {
			group_remove(g, r);
			continue;
		}
		if (!group_has(g, r))
			group_add(g, r);
		detach_stopped(g, r, st, t);
	}
	return g->nr;
}

void exechold_group_free(struct exechold_group *g)
{
	if (!g)
		return;
	free(g->tids);
	free(g);
}
