// SPDX-License-Identifier: MIT
/* Child processes for the integration tests, with captured stdout and stderr. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "suitewatch.h"

struct buf {
	char *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const char *d, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/*
 * The CPU time @pid has used and reaped from its children (/proc/PID/stat's utime, stime,
 * cutime, cstime, in ticks): it grows while @pid or any child it has waited for works.
 */
static unsigned long long cpu_ticks(pid_t pid)
{
	unsigned long long t[4] = { 0 };
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	/* After the name: state, then fields 4 to 13, then utime stime cutime cstime. */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			 &t[0], &t[1], &t[2], &t[3]) != 4)
		return 0;
	return t[0] + t[1] + t[2] + t[3];
}

static int run_argv_idle(char *const argv[], char *const env[], struct run_result *r,
			 unsigned idle_secs);

int run_argv(char *const argv[], char *const env[], struct run_result *r)
{
	return run_argv_idle(argv, env, r, 0);
}

int run_argv_busy(char *const argv[], char *const env[], struct run_result *r,
		  unsigned idle_secs)
{
	return run_argv_idle(argv, env, r, idle_secs);
}

/* run_argv(); with @idle_secs, the watchdog re-armed to it each second cpu_ticks() grew. */
static int run_argv_idle(char *const argv[], char *const env[], struct run_result *r,
			 unsigned idle_secs)
{
	int op[2], ep[2], st;
	struct buf out = { 0 }, err = { 0 };
	unsigned long long ticks = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe2(op, O_CLOEXEC) || pipe2(ep, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		dup2(nul, 0);
		dup2(op[1], 1);
		dup2(ep[1], 2);
		for (int i = 0; env && env[i]; i++) {
			char *eq = strchr(env[i], '=');
			char name[256];

			if (!eq || (size_t)(eq - env[i]) >= sizeof(name))
				continue;
			memcpy(name, env[i], eq - env[i]);
			name[eq - env[i]] = '\0';
			if (eq[1])
				setenv(name, eq + 1, 1);
			else
				unsetenv(name);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "run: cannot execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(op[1]);
	close(ep[1]);
	buf_add(&out, "", 0);
	buf_add(&err, "", 0);
	for (int open_fds = 2; open_fds;) {
		struct pollfd pf[2] = { { op[0], POLLIN, 0 }, { ep[0], POLLIN, 0 } };
		char tmp[8192];
		int ready = poll(pf, 2, idle_secs ? 1000 : -1);

		if (ready < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (idle_secs && cpu_ticks(pid) != ticks) {
			ticks = cpu_ticks(pid);
			suitewatch(idle_secs);
		}
		if (!ready)
			continue;
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(pf[i].fd, tmp, sizeof(tmp));
			if (n > 0) {
				buf_add(i ? &err : &out, tmp, n);
			} else if (n == 0 || errno != EINTR) {
				close(pf[i].fd);
				if (i)
					ep[0] = -1;
				else
					op[0] = -1;
				open_fds--;
			}
		}
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = out.p;
	r->err = err.p;
	return 0;
}

/*
 * The environment variable @name that make check-run sets, or a message naming it and the
 * end of the test (abort(): it may be a job's thread, where an assertion cannot end it).
 */
static const char *need_env(const char *name)
{
	const char *v = getenv(name);

	if (!v || !*v) {
		fprintf(stderr, "%s is not set: run the tests through 'make check' (or 'make "
			"check-run'), which sets PTCOLLECT_BIN, PTCOLLECT_TESTPROGS and "
			"PTCOLLECT_SRCDIR\n", name);
		abort();
	}
	return v;
}

const char *run_bin(void)
{
	return need_env("PTCOLLECT_BIN");
}

const char *run_srcdir(void)
{
	const char *s = getenv("PTCOLLECT_SRCDIR");

	return s ? s : ".";
}

char *run_testprog(const char *name)
{
	const char *d = need_env("PTCOLLECT_TESTPROGS");
	char *p;

	if (asprintf(&p, "%s/%s", d, name) < 0)
		abort();
	return p;
}

char *run_srcpath(const char *rel)
{
	char *p;

	if (asprintf(&p, "%s/%s", run_srcdir(), rel) < 0)
		abort();
	return p;
}

char *run_shared(const char *rel)
{
	const char *env = getenv("PTCOLLECT_SHARED"), *req = getenv("PTCOLLECT_REQUIRE_SHARED");
	bool required = req && !strcmp(req, "1");
	struct stat st;
	char *dir, *p, *glob;

	if ((env && *env ? asprintf(&dir, "%s", env) :
	     asprintf(&dir, "%s/../shared", run_srcdir())) < 0 ||
	    asprintf(&p, "%s/%s", dir, rel) < 0)
		abort();
	/* A glob pattern (the caller globs it) is checked up to the folder before its first
	 * wildcard. */
	glob = strpbrk(p + strlen(dir), "*?[");
	free(dir);
	if (glob) {
		char *cut = strndupa(p, glob - p), *slash = strrchr(cut, '/');

		if (slash)
			*slash = '\0';
		if (!stat(cut, &st))
			return p;
	} else if (!stat(p, &st)) {
		return p;
	}
	if (required)
		cr_assert_fail("%s: %s: the reference data (libipt's tools, the real traces) is "
			       "required here (PTCOLLECT_REQUIRE_SHARED=1): set PTCOLLECT_SHARED "
			       "to its directory", p, strerror(errno));
	criterion_skip_test("%s: %s: the reference data lives beside the checkout in "
			    "../shared (or set PTCOLLECT_SHARED); nothing to compare with",
			    p, strerror(errno));
}

char *run_oracle(const char *tool)
{
	char *rel, *p;

	if (asprintf(&rel, "oracle/%s", tool) < 0)
		abort();
	p = run_shared(rel);
	free(rel);
	if (access(p, X_OK))
		cr_assert_fail("%s is there but not runnable: %s", p, strerror(errno));
	return p;
}

int run_ptcollect(char *const env[], struct run_result *r, const char *arg, ...)
{
	char *argv[64];
	int n = 0, ret;
	va_list ap;

	argv[n++] = (char *)run_bin();
	va_start(ap, arg);
	for (const char *a = arg; a && n < 63; a = va_arg(ap, const char *))
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	ret = run_argv(argv, env, r);
	return ret;
}

void run_free(struct run_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

void args_add(struct args *a, const char *s)
{
	cr_assert_lt(a->n, ARGS_MAX - 1);
	a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

void args_addv(struct args *a, const char *const *list)
{
	for (; *list; list++)
		args_add(a, *list);
}

void run_fast_same(const struct args *args, const char *what, struct run_result *fast)
{
	static char *const nofast[] = { "PTCOLLECT_DECODE_NO_FAST=1", NULL };
	struct args a = { .n = 0 };
	struct run_result slow;

	args_add(&a, run_bin());
	args_addv(&a, (const char *const *)args->v);
	cr_assert_eq(run_argv(a.v, NULL, fast), 0, "%s", what);
	cr_assert_eq(run_argv(a.v, nofast, &slow), 0, "%s", what);
	cr_expect_eq(fast->status, slow.status, "%s: exit %d on the fast path, %d without", what,
		     fast->status, slow.status);
	cr_expect(fast->out[0] && !strcmp(fast->out, slow.out), "%s: the fast path prints %s", what,
		  fast->out[0] ? "other output than libipt's decoders" : "nothing");
	cr_expect_str_eq(fast->err, slow.err, "%s", what);
	run_free(&slow);
}

int run_start(char *const argv[], struct run_child *c)
{
	int ip[2], op[2];

	if (pipe2(ip, O_CLOEXEC))
		return -errno;
	if (pipe2(op, O_CLOEXEC)) {
		close(ip[0]);
		close(ip[1]);
		return -errno;
	}
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		dup2(ip[0], 0);
		dup2(op[1], 1);
		execvp(argv[0], argv);
		fprintf(stderr, "run: cannot execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(ip[0]);
	close(op[1]);
	c->in = ip[1];
	c->out = op[0];
	return 0;
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

int run_wait_line(struct run_child *c, const char *line, int secs)
{
	long long end = now_ms() + secs * 1000LL;
	size_t want = strlen(line), have = 0;
	char cur[512];

	for (;;) {
		struct pollfd pf = { c->out, POLLIN, 0 };
		long long left = end - now_ms();
		char ch;
		ssize_t n;

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			return -1;
		n = read(c->out, &ch, 1);	/* a byte at a time: nothing past the line */
		if (n <= 0)
			return -1;
		if (ch != '\n') {
			if (have < sizeof(cur) - 1)
				cur[have++] = ch;
			continue;
		}
		if (have == want && !memcmp(cur, line, want))
			return 0;
		have = 0;
	}
}

long run_read_all(struct run_child *c, char *buf, size_t size, int secs)
{
	long long end = now_ms() + secs * 1000LL;
	size_t len = 0;

	for (;;) {
		struct pollfd pf = { c->out, POLLIN, 0 };
		long long left = end - now_ms();
		ssize_t n;

		buf[len] = '\0';
		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			return -1;
		n = read(c->out, buf + len, size - 1 - len);
		if (n < 0)
			return -1;
		if (n == 0 || len + (size_t)n == size - 1) {
			len += (size_t)(n > 0 ? n : 0);
			buf[len] = '\0';
			return (long)len;
		}
		len += (size_t)n;
	}
}

int run_end(struct run_child *c, int secs)
{
	long long end = now_ms() + secs * 1000LL;
	int st;

	close(c->in);
	close(c->out);
	while (waitpid(c->pid, &st, WNOHANG) == 0) {
		if (now_ms() > end) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &st, 0);
			break;
		}
		usleep(1000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

bool run_poll(int pid, bool (*ready)(int pid, const void *arg), const void *arg, int secs)
{
	long long end = now_ms() + secs * 1000LL;
	int st;

	while (!ready(pid, arg)) {
		/* A child that has ended (a zombie's state was checked above) never gets there. */
		if (now_ms() > end || run_ended(pid, &st))
			return false;
		usleep(1000);
	}
	return true;
}

bool run_ended(int pid, int *st)
{
	siginfo_t si = { .si_pid = 0 };

	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) || si.si_pid != pid)
		return false;
	*st = si.si_code == CLD_EXITED ? si.si_status << 8 : si.si_status;
	return true;
}

void run_wait_file(int pid, const char *path, const char *what, int secs)
{
	long long end = now_ms() + secs * 1000LL;
	int st = 0;

	suitewatch_awaiting(what);
	/* A 1 ms poll of two cheap checks: the file, then whether its maker still lives. */
	while (access(path, F_OK)) {
		cr_assert(!run_ended(pid, &st), "%s: pid %d ended (wait status %#x) without "
			  "making %s", what, pid, st, path);
		cr_assert(now_ms() <= end, "%s: no %s after %d s while pid %d still runs", what,
			  path, secs, pid);
		usleep(1000);
	}
	suitewatch_awaiting(NULL);
}

bool run_proc_state(int pid, const void *arg)
{
	char path[64], buf[512], *close_paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	close_paren = strrchr(buf, ')');
	return close_paren && close_paren[1] == ' ' && close_paren[2] == *(const char *)arg;
}

bool run_proc_maps(int pid, const void *arg)
{
	char path[64], line[4200];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, (const char *)arg) != NULL;
	fclose(f);
	return found;
}

char *run_read_line(int fd, int secs)
{
	static char line[8192];
	size_t n = 0;

	while (n + 1 < sizeof(line)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char c;

		cr_assert_eq(poll(&p, 1, secs * 1000), 1, "no line within %d s (so far '%.*s')",
			     secs, (int)n, line);
		cr_assert_eq(read(fd, &c, 1), 1);
		if (c == '\n')
			break;
		line[n++] = c;
	}
	line[n] = '\0';
	return line;
}
