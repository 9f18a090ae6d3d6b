/* SPDX-License-Identifier: MIT */
/* The running kernel's sideband of a program's run: a dummy event on it from its exec. */
#ifndef PTC_TEST_SBRUN_H
#define PTC_TEST_SBRUN_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * Run @argv (argv[0] a path, its stdout to /dev/null) with a dummy event
 * enabled at its exec, with ptcollect's sample_type and mmap, mmap2, comm,
 * task and context-switch records (and attr.build_id when @build_id), and
 * append the kernel's records to @out once it exited. 0 with *@pid its pid,
 * or -errno when the event cannot be opened (perf_event_paranoid, an old
 * kernel): the caller skips.
 */
int sbrun(char *const argv[], bool build_id, int out, pid_t *pid);

#endif
