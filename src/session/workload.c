// SPDX-License-Identifier: MIT
/* fork, hold, exec, reap: the traced command's life. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exechold.h"
#include "workload.h"

static bool have_caller;
static mode_t caller_umask;
static struct sigaction caller_sigpipe;

void workload_note_caller(mode_t umask, const struct sigaction *sigpipe)
{
	caller_umask = umask;
	caller_sigpipe = *sigpipe;
	have_caller = true;
}

/* What the child failed at, sent up the exec error pipe with its errno. */
enum { STEP_EXEC, STEP_HOLD, STEP_USER };

static int child_error(int step, int err, const char *name, struct error *e);

/*
 * The exec error pipe is close-on-exec: EOF means the exec worked, a pair
 * of ints the step that failed and its errno.
 */
int workload_start(struct workload *w, const char *path, char *const argv[],
		   const sigset_t *mask, bool hold, const struct user *user,
		   struct error *e)
{
	int go[2], ep[2];

	memset(w, 0, sizeof(*w));
	w->go_fd = w->exec_err_fd = -1;
	w->hold = hold;
	if (pipe2(go, O_CLOEXEC))
		return err_runtime(e, -errno, "pipe: %s", strerror(errno));
	if (pipe2(ep, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return err_runtime(e, -errno, "pipe: %s", strerror(errno));
	}
	w->pid = fork();
	if (w->pid < 0) {
		int ret = -errno;

		close(go[0]);
		close(go[1]);
		close(ep[0]);
		close(ep[1]);
		w->pid = 0;
		return err_runtime(e, ret, "fork: %s", strerror(-ret));
	}
	if (w->pid == 0) {
		char c;
		int err[2], r;

		close(go[1]);
		close(ep[0]);
		sigprocmask(SIG_SETMASK, mask, NULL);
		if (have_caller) {
			umask(caller_umask);
			sigaction(SIGPIPE, &caller_sigpipe, NULL);
		}
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the collector gave up */
		/* Held: seized by the parent before the go, while still root's like it. */
		r = 0;
		if (user) {
			/* After the events exist: they were opened on a task of root's. */
			err[0] = STEP_USER;
			r = user_become(user);
		}
		if (!r) {
			execv(path, argv);
			err[0] = STEP_EXEC;
			r = -errno;
		}
		err[1] = -r;
		if (write(ep[1], err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	w->go_fd = go[1];
	w->exec_err_fd = ep[0];
	if (hold) {
		int ret = exechold_seize(w->pid);

		if (ret)
			return child_error(STEP_HOLD, -ret, path, e);
	}
	return 0;
}

static int child_error(int step, int err, const char *name, struct error *e)
{
	switch (step) {
	case STEP_HOLD:
		err_runtime(e, -err, "cannot hold the workload at its exec to arm its triggers: "
			    "ptrace: %s", strerror(err));
		err_hint(e, "kernel.yama.ptrace_scope 3 forbids it; with -p PID the triggers arm "
			 "on a running process instead");
		return -err;
	case STEP_USER:
		return err_runtime(e, -err, "cannot run '%s' as --user: %s", name, strerror(err));
	}
	if (err == ENOENT || err == EACCES || err == ENOEXEC)
		return err_usage_code(e, -err, "cannot execute '%s': %s", name, strerror(err));
	return err_runtime(e, -err, "cannot execute '%s': %s", name, strerror(err));
}

int workload_release(struct workload *w, const char *name, struct error *e)
{
	ssize_t n;
	int err[2];

	if (write(w->go_fd, "g", 1) != 1)
		return err_runtime(e, -errno, "cannot start the workload: %s", strerror(errno));
	close(w->go_fd);
	w->go_fd = -1;
	do
		n = read(w->exec_err_fd, err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(w->exec_err_fd);
	w->exec_err_fd = -1;
	if (n == sizeof(err))
		return child_error(err[0], err[1], name, e);
	w->ran = true;
	if (w->hold)
		return exechold_wait(w->pid, NULL, e);
	return 0;
}

int workload_run(struct workload *w, bool guard, struct error *e)
{
	if (!w->hold || w->pid <= 0)
		return 0;
	w->hold = false;
	w->guarded = guard;
	return guard ? exechold_keep(w->pid, e) : exechold_release(w->pid, e);
}

bool workload_reap(struct workload *w)
{
	int st;

	if (w->pid <= 0)
		return false;
	if (w->guarded) {
		if (!exechold_poll(w->pid, &st, &w->traps))
			return false;
	} else if (waitpid(w->pid, &st, WNOHANG) != w->pid) {
		return false;
	}
	w->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	w->pid = 0;
	return true;
}

void workload_signal(const struct workload *w, int sig)
{
	if (w->pid > 0)
		kill(w->pid, sig);
}

void workload_kill(struct workload *w)
{
	int st;

	if (w->pid <= 0)
		return;
	kill(w->pid, SIGKILL);
	if (waitpid(w->pid, &st, 0) == w->pid)
		w->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	w->pid = 0;
}

void workload_close(struct workload *w)
{
	if (w->go_fd >= 0)
		close(w->go_fd);
	if (w->exec_err_fd >= 0)
		close(w->exec_err_fd);
	w->go_fd = w->exec_err_fd = -1;
}
