// SPDX-License-Identifier: MIT
/*
 * A workload stopped after its exec with ptrace, and let go by detaching, or
 * kept as a tracee whose stray debug traps are swallowed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "exechold.h"

#ifndef TRAP_HWBKPT
#define TRAP_HWBKPT 4
#endif

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

bool exechold_is_hwbkpt(const siginfo_t *si)
{
	return si->si_signo == SIGTRAP && si->si_code == TRAP_HWBKPT;
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

/* Resume one tracee stop: the signal to pass on, or a swallowed trap. */
static void resume(pid_t tid, int st, struct exechold_traps *t)
{
	int sig = WSTOPSIG(st), event = st >> 16;
	siginfo_t si;

	if (event == PTRACE_EVENT_STOP) {
		/* A group-stop stays stopped; a new tracee's first stop goes on. */
		ptrace(is_stop_signal(sig) ? PTRACE_LISTEN : PTRACE_CONT, tid, NULL, NULL);
		return;
	}
	if (event) {		/* fork, vfork, clone, exec: the new ones are tracees too */
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	}
	if (sig == SIGTRAP && !ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) &&
	    exechold_is_hwbkpt(&si)) {
		t->swallowed++;
		t->last_addr = (uint64_t)(uintptr_t)si.si_addr;
		t->last_tid = tid;
		t->last_cpu = last_cpu(tid);
		sig = 0;
	}
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
