// SPDX-License-Identifier: MIT
/* fork, hold, exec, reap: the traced command's life. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

/*
 * The exec error pipe is close-on-exec: EOF means the exec worked, an int
 * means its errno (negative: becoming --user failed).
 */
int workload_start(struct workload *w, const char *path, char *const argv[],
		   const sigset_t *mask, const struct user *user, struct error *e)
{
	int go[2], ep[2];

	memset(w, 0, sizeof(*w));
	w->go_fd = w->exec_err_fd = -1;
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
		int err;

		close(go[1]);
		close(ep[0]);
		sigprocmask(SIG_SETMASK, mask, NULL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* the collector gave up */
		/* After the events exist: they were opened on a task of root's. */
		err = user ? user_become(user) : 0;
		if (!err)
			execv(path, argv);
		err = err ?: errno;
		if (write(ep[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	w->go_fd = go[1];
	w->exec_err_fd = ep[0];
	return 0;
}

int workload_release(struct workload *w, const char *name, struct error *e)
{
	ssize_t n;
	int err = 0;

	if (write(w->go_fd, "g", 1) != 1)
		return err_runtime(e, -errno, "cannot start the workload: %s", strerror(errno));
	close(w->go_fd);
	w->go_fd = -1;
	do
		n = read(w->exec_err_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(w->exec_err_fd);
	w->exec_err_fd = -1;
	if (n == sizeof(err) && err < 0)
		return err_runtime(e, err, "cannot run '%s' as --user: %s", name, strerror(-err));
	if (n == sizeof(err)) {
		if (err == ENOENT || err == EACCES || err == ENOEXEC)
			return err_usage_code(e, -err, "cannot execute '%s': %s", name,
					      strerror(err));
		return err_runtime(e, -err, "cannot execute '%s': %s", name, strerror(err));
	}
	w->ran = true;
	return 0;
}

bool workload_reap(struct workload *w)
{
	int st;

	if (w->pid <= 0 || waitpid(w->pid, &st, WNOHANG) != w->pid)
		return false;
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
