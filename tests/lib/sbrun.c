// SPDX-License-Identifier: MIT
/* A program's run under a dummy event: the kernel's sideband records, as a recording gets them. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auxring.h"
#include "sbrun.h"
#include "sideband.h"

#define DATA_PAGES 64

/* Forked and held on a pipe until the event exists, then exec'd. */
static pid_t start(char *const argv[], int *go)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		dup2(open("/dev/null", O_WRONLY), 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

int sbrun(char *const argv[], bool build_id, int out, pid_t *pid_out)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY, .size = sizeof(a),
		.sample_type = SIDEBAND_SAMPLE_TYPE, .sample_id_all = 1, .disabled = 1,
		.enable_on_exec = 1, .mmap = 1, .mmap2 = 1, .comm = 1, .comm_exec = 1, .task = 1,
		.context_switch = 1, .build_id = build_id,
	};
	long pg = sysconf(_SC_PAGESIZE);
	int go, fd, ret = 0;
	struct auxring r;
	void *base;
	pid_t pid = start(argv, &go);

	if (pid < 0)
		return -errno;
	fd = (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, 0);
	base = fd < 0 ? MAP_FAILED : mmap(NULL, pg * (DATA_PAGES + 1), PROT_READ | PROT_WRITE,
					  MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		ret = -errno;
		kill(pid, SIGKILL);
	} else {
		auxring_attach(&r, base, pg * DATA_PAGES, NULL, 0, false);
		if (write(go, "g", 1) != 1)
			ret = -EIO;
	}
	close(go);
	waitpid(pid, NULL, 0);
	if (!ret)
		ret = auxring_read_data(&r, out);
	if (base != MAP_FAILED)
		munmap(base, pg * (DATA_PAGES + 1));
	if (fd >= 0)
		close(fd);
	*pid_out = pid;
	return ret;
}
