// SPDX-License-Identifier: MIT
/* A workload stopped after its exec with ptrace, and let go by detaching. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "exechold.h"

int exechold_child(void)
{
	return ptrace(PTRACE_TRACEME, 0, NULL, NULL) ? -errno : 0;
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
	if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP)
		return 0;
	if (WIFSTOPPED(st)) {
		/* Any other stop before the exec's: pass the signal on and keep waiting. */
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(st)))
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
