// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD=pollfail.so: poll() that waits without a bound on two or more
 * descriptors (the record loop's wait) fails with ENOMEM, as the kernel's
 * poll can. Every other poll() is the real one. For the test that a failed
 * wait ends a recording with a stop reason and a non-zero exit.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>

int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	static int (*real)(struct pollfd *, nfds_t, int);

	if (timeout < 0 && nfds >= 2) {
		errno = ENOMEM;
		return -1;
	}
	if (!real)
		real = (int (*)(struct pollfd *, nfds_t, int))dlsym(RTLD_NEXT, "poll");
	return real(fds, nfds, timeout);
}
