// SPDX-License-Identifier: MIT
/*
 * faultwrite.so, an LD_PRELOAD interposer for the fault tests: write() and
 * writev() to a regular file fail with EINTR every third call and write at
 * most half of what they are given (at least a byte) otherwise, as a slow or
 * interrupted file system may. Pipes and terminals are left alone. When
 * FAULTWRITE_LOG names a file, the counts go there at exit:
 * "calls N eintr N short N".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static unsigned long calls, eintrs, shorts;

static int faulty(int fd)
{
	struct stat st;
	int saved = errno, ret = !fstat(fd, &st) && S_ISREG(st.st_mode);

	errno = saved;
	return ret;
}

/* Fail this call with EINTR? Else how much of @len to write. */
static int plan(size_t len, size_t *allow)
{
	if (++calls % 3 == 0) {
		eintrs++;
		errno = EINTR;
		return -1;
	}
	*allow = len > 1 ? len / 2 : len;
	shorts += *allow < len;
	return 0;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	static ssize_t (*real)(int, const void *, size_t);
	size_t allow = len;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "write");
	if (faulty(fd) && len && plan(len, &allow))
		return -1;
	return real(fd, buf, allow);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	static ssize_t (*real)(int, const struct iovec *, int);
	struct iovec cut[64];
	size_t total = 0, allow;
	int m = 0;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "writev");
	for (int i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (!faulty(fd) || !total || n > (int)(sizeof(cut) / sizeof(cut[0])))
		return real(fd, iov, n);
	if (plan(total, &allow))
		return -1;
	/* The first @allow bytes of the pieces. */
	for (int i = 0; i < n && allow; i++) {
		cut[m] = iov[i];
		if (cut[m].iov_len > allow)
			cut[m].iov_len = allow;
		allow -= cut[m].iov_len;
		m++;
	}
	return real(fd, cut, m);
}

__attribute__((destructor))
static void report(void)
{
	const char *log = getenv("FAULTWRITE_LOG");
	char line[96];
	int fd, len;

	if (!log)
		return;
	len = snprintf(line, sizeof(line), "calls %lu eintr %lu short %lu\n", calls, eintrs, shorts);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0) {
		/* Past the interposer: this write must not count or fail. */
		if (syscall(SYS_write, fd, line, (size_t)len) != len)
			perror("faultwrite");
		close(fd);
	}
}
