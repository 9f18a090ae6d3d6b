/* SPDX-License-Identifier: MIT */
/*
 * The traced command: forked and held before exec until its events exist
 * (they are enabled at its exec, as perf does), released, reaped, and ended
 * when the recording stops before it does.
 */
#ifndef PTC_WORKLOAD_H
#define PTC_WORKLOAD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "user.h"

struct workload {
	pid_t pid;		/* 0: none, or reaped */
	int go_fd;		/* write a byte: exec */
	int exec_err_fd;	/* the exec's errno, or EOF when it worked */
	bool ran;		/* exec succeeded */
	int status;		/* exit code, or 128+signal, once reaped */
};

/*
 * Fork @argv[0] as @path, held; the child gets @mask as its signal mask and,
 * when @user is not NULL, becomes that user just before its exec.
 */
int workload_start(struct workload *w, const char *path, char *const argv[],
		   const sigset_t *mask, const struct user *user, struct error *e);
/* Let it exec; the exec's failure is an error. */
int workload_release(struct workload *w, const char *name, struct error *e);
/* Reap it if it exited (never blocks): true when it is gone now. */
bool workload_reap(struct workload *w);
/* Send @sig if it still runs. */
void workload_signal(const struct workload *w, int sig);
/* SIGKILL and reap (a workload that never ran, or outlived its grace). */
void workload_kill(struct workload *w);
void workload_close(struct workload *w);

#endif
