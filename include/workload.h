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
#include "exechold.h"
#include "user.h"

struct workload {
	pid_t pid;		/* 0: none, or reaped */
	int go_fd;		/* write a byte: exec */
	int exec_err_fd;	/* what failed and its errno, or EOF when the exec worked */
	bool ran;		/* exec succeeded */
	bool hold;		/* stopped after its exec until workload_run() */
	bool guarded;		/* kept as a tracee by workload_run() (exechold.h) */
	struct exechold_traps traps;	/* stray debug traps kept from it */
	int status;		/* exit code, or 128+signal, once reaped */
};

/*
 * Fork @argv[0] as @path, held; the child gets @mask as its signal mask.
 * With @hold it also stops right after its exec (exechold.h), its program
 * mapped and not one instruction run, until workload_run(). When @user is
 * not NULL it becomes that user just before its exec.
 */
int workload_start(struct workload *w, const char *path, char *const argv[],
		   const sigset_t *mask, bool hold, const struct user *user,
		   struct error *e);
/* Let it exec; the exec's failure is an error. */
int workload_release(struct workload *w, const char *name, struct error *e);
/*
 * A workload held after its exec runs from here (nothing to do for one not
 * held). With @guard it stays a tracee (exechold_keep()), and
 * workload_reap() resumes its stops, swallowing stray debug traps.
 */
int workload_run(struct workload *w, bool guard, struct error *e);
/* Reap it if it exited (never blocks): true when it is gone now. */
bool workload_reap(struct workload *w);
/* Send @sig if it still runs. */
void workload_signal(const struct workload *w, int sig);
/* SIGKILL and reap (a workload that never ran, or outlived its grace). */
void workload_kill(struct workload *w);
void workload_close(struct workload *w);

/*
 * What ptcollect changed of what its caller gave it (the umask's owner bits,
 * SIGPIPE's disposition), noted once in main: the workload gets them back.
 */
void workload_note_caller(mode_t umask, const struct sigaction *sigpipe);

#endif
