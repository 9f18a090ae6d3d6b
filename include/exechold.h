/* SPDX-License-Identifier: MIT */
/*
 * Holding a workload at its exec: the new program is mapped but has not run
 * an instruction, so addresses in it (a PIE's, a library's) can be read from
 * /proc/PID/maps and breakpoints placed before the first call. The child asks
 * to be traced just before exec; the kernel stops it with SIGTRAP after the
 * exec; the parent arms, then detaches, which lets it run untraced.
 */
#ifndef PTC_EXECHOLD_H
#define PTC_EXECHOLD_H

#include <sys/types.h>

#include "error.h"

/* In the child, right before exec. 0 or -errno (then exec anyway: nothing is held). */
int exechold_child(void);
/*
 * In the parent: wait until @pid stops at its exec. 0; or -ECHILD when it
 * ended instead (its wait status in *@status: the exec failed), -errno.
 */
int exechold_wait(pid_t pid, int *status, struct error *e);
/* Let it run: detach, the SIGTRAP of the exec dropped. 0 or -errno. */
int exechold_release(pid_t pid, struct error *e);

#endif
