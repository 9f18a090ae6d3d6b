/* SPDX-License-Identifier: MIT */
/*
 * Holding a workload at its exec: the new program is mapped but has not run
 * an instruction, so addresses in it (a PIE's, a library's) can be read from
 * /proc/PID/maps and breakpoints placed before the first call. The child asks
 * to be traced just before exec (or the parent seizes it, exechold_seize());
 * the kernel stops it with SIGTRAP after the exec; the parent arms, then
 * detaches, which lets it run untraced, or keeps it (exechold_keep()).
 *
 * Kept, the workload and every thread and child it starts stay tracees
 * (PTRACE_SEIZE, following fork, vfork, clone and exec), and exechold_poll()
 * resumes each stop: a SIGTRAP that one of our breakpoints caused but no
 * perf event claimed is swallowed (exechold_trap_is_stray(); see "Stray
 * debug traps" in tests/kernel/README.md), every other signal is passed on,
 * a group-stop stays stopped (PTRACE_LISTEN) until SIGCONT.
 */
#ifndef PTC_EXECHOLD_H
#define PTC_EXECHOLD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* In the child, right before exec. 0 or -errno (then exec anyway: nothing is held). */
int exechold_child(void);
/*
 * In the parent, instead of exechold_child(): seize @pid (a child that has
 * not exec'd yet), following its exec, forks and threads. 0 or -errno.
 */
int exechold_seize(pid_t pid);
/*
 * In the parent: wait until @pid stops at its exec. 0; or -ECHILD when it
 * ended instead (its wait status in *@status: the exec failed), -errno.
 */
int exechold_wait(pid_t pid, int *status, struct error *e);
/* Let it run: detach, the SIGTRAP of the exec dropped. 0 or -errno. */
int exechold_release(pid_t pid, struct error *e);
/* Let a seized @pid run and stay its tracer. 0 or -errno. */
int exechold_keep(pid_t pid, struct error *e);

/*
 * One SIGTRAP met at a tracee's signal-delivery stop, as the guard saw it:
 * the evidence for the swallow-or-pass verdict (exechold_trap_is_stray()).
 */
struct exechold_trap {
	int si_code;		/* EXECHOLD_NO_SIGINFO when PTRACE_GETSIGINFO failed */
	uint64_t fault_addr;	/* si_addr */
	uint64_t ip;		/* the thread's instruction pointer at the stop */
	uint64_t dr6;		/* ptrace's view of DR6 (PEEKUSER u_debugreg[6]), 0 unread */
	bool tf;		/* EFLAGS.TF at the stop: the program single-steps itself */
	int prev_byte;		/* the byte before ip (0xf1: an icebp ran), -1 unread */
	pid_t tid;
	int cpu;		/* the CPU it stopped on (/proc), -1 unknown */
};

#define EXECHOLD_NO_SIGINFO INT32_MIN

struct exechold_traps {
	uint64_t swallowed;	/* SIGTRAPs our breakpoints caused, kept from the tracees */
	uint64_t passed;	/* SIGTRAPs passed on (the program's own) */
	struct exechold_trap last_swallowed, last_passed;
};

/*
 * The guarded session's breakpoint addresses (trigger_bp.c notes each one
 * it arms): a debug trap at one of them that the program did not make is
 * ours. One session per process, so one table, kept to the end (a trap can
 * wait at a thread's stop after its breakpoint is closed). 0 or -ENOSPC.
 */
#define EXECHOLD_MAX_BP 64	/* TRIGGER_MAX triggers, one address each */
int exechold_note_breakpoint(uint64_t addr);

/*
 * Whether a SIGTRAP is a stray debug trap of our breakpoints (to swallow),
 * from its siginfo and the thread's state at the stop; @bp the session's
 * breakpoint addresses. See "Stray debug traps" in tests/kernel/README.md.
 */
bool exechold_trap_is_stray(const struct exechold_trap *tr, const uint64_t *bp, int nr_bp);

/*
 * Resume every tracee stop waiting now, never blocking. Returns true when
 * @pid (the workload, the caller's child) has ended, its wait status in
 * *@status. SIGTRAPs swallowed and passed on are counted in @t.
 */
bool exechold_poll(pid_t pid, int *status, struct exechold_traps *t);

/*
 * A running process (-p), guarded the same way: every thread seized with
 * PTRACE_SEIZE (the threads and children it starts later follow by
 * PTRACE_O_TRACECLONE, TRACEFORK, TRACEVFORK), its stops resumed by
 * exechold_group_poll() as exechold_poll() does, and every thread detached
 * by exechold_group_release(), each at a stop of its own, its pending
 * signal passed on (a stray trap's swallowed), a group-stop kept. A thread
 * other than the leader that execs takes the leader's id: its own, which no
 * exit reports, is forgotten at the exec stop (PTRACE_GETEVENTMSG).
 */
struct exechold_group;

/*
 * Whether seizing @pid looks possible, without touching it: -EPERM with
 * @why when it is traced already (a debugger, strace) or ptrace_scope is 3;
 * -ESRCH when it is gone; else 0 (the seize itself can still be refused).
 */
int exechold_group_check(pid_t pid, char *why, size_t len);
/*
 * Seize every thread of @pid, rescanning its threads until no new one comes
 * (a zombie leader is skipped). On error nothing stays seized: -EPERM with
 * @why (traced already, ptrace_scope, no permission), -ESRCH, -ENOMEM.
 */
int exechold_group_seize(struct exechold_group **g, pid_t pid, char *why, size_t len,
			 struct error *e);
/* Resume every stop waiting now, never blocking (the caller has no other child). */
void exechold_group_poll(struct exechold_group *g, struct exechold_traps *t);
/*
 * Detach every thread: each is interrupted and let go at its next stop, for
 * two seconds at most. Returns how many could not be (the kernel detaches
 * them when we exit). @t (may be NULL) counts stray traps met on the way.
 */
int exechold_group_release(struct exechold_group *g, struct exechold_traps *t);
void exechold_group_free(struct exechold_group *g);


#endif
