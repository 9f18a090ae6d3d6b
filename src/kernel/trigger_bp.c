// SPDX-License-Identifier: MIT
/*
 * Breakpoint triggers: a perf execute breakpoint (PERF_TYPE_BREAKPOINT,
 * HW_BREAKPOINT_X) at the function's runtime address, sampling every hit
 * (period 1) as TID|TIME|CPU on CLOCK_MONOTONIC.
 *
 * The address is FILE's offset as the process mapped it (/proc/PID/maps), so
 * a PIE or a library works wherever it was loaded; the process must have
 * mapped FILE when the trigger is armed. For a workload that means after its
 * exec and before it runs (exechold.h holds it there); perf itself only takes
 * raw addresses (mem:ADDR:x), which a PIE's ASLR makes unknowable before exec.
 *
 * Events are opened as perf record opens a workload's: for each thread, one
 * per CPU with inherit, so threads and children started later are covered
 * (the kernel refuses mmap on an inherited per-thread event), and removed
 * from a process at its exec (remove_on_exec): the new image has other code
 * at that address. The first event
 * on each CPU owns that CPU's ring; the others write into it (SET_OUTPUT).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "procfs.h"
#include "cpuset.h"
#include "exechold.h"
#include "lostcount.h"
#include "trigger_backend.h"

#define BP_RING_PAGES 16	/* data pages per CPU: ~1600 hits between reads (a loaded machine) */

struct bp_ring {
	int fd;
	struct perf_event_mmap_page *pc;
	size_t len;
};

struct trigger_bp {
	unsigned int idx;
	int *fds, nfds;
	struct bp_ring *rings;
	int nrings;
	uint64_t lost, throttled;
	bool uncounted;		/* an event opened without PERF_FORMAT_LOST (before 6.0) */
};

struct bp_sample {		/* PERF_SAMPLE_TID | TIME | CPU, in the kernel's order */
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
};

/* ---- where FILE's offset is in the process --------------------------------- */

static bool maps_line_matches(char *line, const struct stat *st, const char *path,
			      uint64_t offset, uint64_t *addr)
{
	struct procfs_map m;

	if (!procfs_maps_line(line, &m) || m.perms[2] != 'x')
		return false;
	if (offset < m.pgoff || offset - m.pgoff >= m.end - m.start)
		return false;
	/* The file by device and inode, or by name where they differ (overlayfs). */
	if (!(m.ino && m.ino == st->st_ino && m.maj == major(st->st_dev) &&
	      m.min == minor(st->st_dev)) && !(m.name[0] && !strcmp(m.name, path)))
		return false;
	*addr = m.start + (offset - m.pgoff);
	return true;
}

int trigger_map_address(pid_t pid, const char *path, uint64_t offset, uint64_t *addr)
{
	char name[64], line[4096 + 256];
	struct stat st;
	int ret = -ENOENT;
	FILE *f;

	if (stat(path, &st))
		return -errno;
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	f = fopen(name, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (maps_line_matches(line, &st, path, offset, addr)) {
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

/* ---- opening ------------------------------------------------------------- */

/* The online CPUs, as the plan counts them (cpuset). */
static int online_cpus(int **cpus, int *nr)
{
	*cpus = calloc(CLI_MAX_CPUS, sizeof(int));
	if (!*cpus)
		return -ENOMEM;
	return cpuset_online(*cpus, nr, NULL);
}

static int open_error(struct error *e, int err, const char *path, uint64_t offset, pid_t pid,
		      uint64_t addr)
{
	switch (err) {
	case ENOSPC:
		err_runtime(e, -ENOSPC, "%s+0x%" PRIx64 ": a breakpoint slot is taken: every "
			    "hardware breakpoint of the CPU is in use (x86 has 4)", path, offset);
		err_hint(e, "stop the debugger or perf session that holds them, use fewer "
			 "breakpoint triggers, or use a uprobe: trigger");
		return -ENOSPC;
	case EACCES:
	case EPERM:
		err_runtime(e, -EPERM, "no permission to open a breakpoint on process %d",
			    (int)pid);
		err_hint(e, "run as root or with CAP_PERFMON, or as the process's owner with "
			 "kernel.perf_event_paranoid at 2 or less");
		return -EPERM;
	case ESRCH:
		err_runtime(e, -ESRCH, "breakpoint trigger: process %d is gone", (int)pid);
		return -ESRCH;
	case ENOENT:
	case EOPNOTSUPP:
		err_runtime(e, -EOPNOTSUPP, "this kernel or machine has no hardware breakpoints "
			    "(%s)", strerror(err));
		err_hint(e, "use a uprobe: trigger instead");
		return -EOPNOTSUPP;
	default:
		return err_runtime(e, -err, "breakpoint at 0x%" PRIx64 " (%s+0x%" PRIx64 ") in "
				   "process %d: %s", addr, path, offset, (int)pid, strerror(err));
	}
}

/*
 * remove_on_exec: an exec replaces the image the address was resolved in;
 * the breakpoint goes with it (Linux 5.13 on; an older kernel refuses the
 * bit, and the breakpoint then stays across exec as it did there).
 * *@counted: opened with the kernel's count of the fires a full ring dropped
 * (lostcount.h).
 */
static int open_one(uint64_t addr, pid_t tid, int cpu, bool *counted)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(a),
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
		.disabled = 1,
		.inherit = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
		.wakeup_events = 1,
		.bp_type = HW_BREAKPOINT_X,
		.bp_addr = addr,
		.bp_len = sizeof(long),
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.remove_on_exec = 1,
	};
	int fd = lostcount_open(&a, tid, cpu, counted);

	if (fd < 0 && errno == EINVAL) {
		a.remove_on_exec = 0;
		fd = lostcount_open(&a, tid, cpu, counted);
	}
	return fd;
}

/* The event's output: its CPU's ring, mapped on the first event opened there. */
static int attach_ring(struct trigger_bp *b, int slot, int fd, int epfd)
{
	struct bp_ring *r = &b->rings[slot];
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = b };
	long page = sysconf(_SC_PAGESIZE);

	if (r->pc)
		return ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) ? -errno : 0;
	r->len = (size_t)page * (1 + BP_RING_PAGES);
	r->pc = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->pc == MAP_FAILED) {
		r->pc = NULL;
		return -errno;
	}
	r->fd = fd;
	b->nrings = slot + 1 > b->nrings ? slot + 1 : b->nrings;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int open_all(struct trigger_bp *b, uint64_t addr, const pid_t *tids, int ntids,
		    const int *cpus, int ncpus, int epfd, int *err)
{
	for (int t = 0; t < ntids; t++) {
		for (int c = 0; c < ncpus; c++) {
			bool counted;
			int fd = open_one(addr, tids[t], cpus[c], &counted), ret;

			if (fd < 0) {
				/* A thread that ended since the scan is no loss. */
				if (errno == ESRCH && ntids > 1)
					break;
				*err = errno;
				return -1;
			}
			b->fds[b->nfds++] = fd;
			b->uncounted |= !counted;
			ret = attach_ring(b, c, fd, epfd);
			if (ret) {
				*err = -ret;
				return -1;
			}
		}
	}
	return b->nfds ? 0 : (*err = ESRCH, -1);
}

int trigger_bp_open(struct trigger_bp **out, unsigned int idx, const char *path, uint64_t offset,
		    pid_t pid, int epfd, struct error *e)
{
	struct trigger_bp *b = calloc(1, sizeof(*b));
	int *cpus = NULL, ncpus = 0, ntids = 0, ret, err = 0;
	pid_t *tids = NULL;
	uint64_t addr = 0;

	if (!b)
		return err_runtime(e, -ENOMEM, "out of memory");
	b->idx = idx;
	if (pid <= 0) {
		ret = err_usage(e, "%s: a breakpoint trigger needs a process: a workload or -p PID",
				path);
		err_hint(e, "use a uprobe: trigger to catch every process that runs the file");
		goto out;
	}
	ret = trigger_map_address(pid, path, offset, &addr);
	if (ret == -ENOENT) {
		ret = err_runtime(e, -ENOENT, "%s is not mapped executable in process %d (offset "
				  "0x%" PRIx64 ")", path, (int)pid, offset);
		err_hint(e, "a breakpoint needs the code loaded when tracing starts; for a library "
			 "loaded later, use a uprobe: trigger");
		goto out;
	}
	if (ret) {
		ret = open_error(e, -ret, path, offset, pid, 0);
		goto out;
	}
	ret = online_cpus(&cpus, &ncpus);
	if (!ret)
		ret = procfs_tasks(pid, &tids, &ntids);
	if (ret) {
		ret = ret == -ESRCH ? open_error(e, ESRCH, path, offset, pid, addr) :
		      err_runtime(e, ret, "CPUs and threads of process %d: %s", (int)pid,
				  strerror(-ret));
		goto out;
	}
	b->fds = calloc((size_t)ntids * ncpus, sizeof(int));
	b->rings = calloc(ncpus, sizeof(*b->rings));
	if (!b->fds || !b->rings) {
		ret = err_runtime(e, -ENOMEM, "out of memory");
		goto out;
	}
	if (open_all(b, addr, tids, ntids, cpus, ncpus, epfd, &err))
		ret = open_error(e, err, path, offset, pid, addr);
	/* The guard tells our debug traps by their address (exechold_trap_is_stray()). */
	else if (exechold_note_breakpoint(addr))
		ret = err_runtime(e, -ENOSPC, "more than %d breakpoint addresses",
				  EXECHOLD_MAX_BP);
out:
	free(cpus);
	free(tids);
	if (ret)
		trigger_bp_close(b);
	else
		*out = b;
	return ret;
}

static int ioctl_all(struct trigger_bp *b, unsigned long req)
{
	for (int i = 0; i < b->nfds; i++)
		if (ioctl(b->fds[i], req, 0) && errno != ESRCH)
			return -errno;
	return 0;
}

int trigger_bp_enable(struct trigger_bp *b, struct error *e)
{
	int ret = ioctl_all(b, PERF_EVENT_IOC_ENABLE);

	if (ret)
		return err_runtime(e, ret, "enabling a breakpoint trigger: %s", strerror(-ret));
	return 0;
}

void trigger_bp_disable(struct trigger_bp *b)
{
	ioctl_all(b, PERF_EVENT_IOC_DISABLE);
}

/* ---- reading ----------------------------------------------------------------- */

static void copy_out(const struct bp_ring *r, uint64_t pos, void *dst, size_t len)
{
	const uint8_t *data = (const uint8_t *)r->pc + r->pc->data_offset;
	uint64_t size = r->pc->data_size, at = pos % size;
	size_t first = len < size - at ? len : (size_t)(size - at);

	memcpy(dst, data + at, first);
	memcpy((uint8_t *)dst + first, data, len - first);
}

static void one_record(struct trigger_bp *b, const struct bp_ring *r, uint64_t pos,
		       const struct perf_event_header *h, trigger_sink_fn sink, void *ctx)
{
	union {
		struct bp_sample s;
		struct { struct perf_event_header h; uint64_t id, lost; } l;
	} rec;
	struct trigger_fire f;

	if (h->type == PERF_RECORD_THROTTLE) {
		b->throttled++;
		return;
	}
	if (h->type == PERF_RECORD_LOST && h->size >= sizeof(rec.l)) {
		copy_out(r, pos, &rec.l, sizeof(rec.l));
		b->lost += rec.l.lost;
		return;
	}
	if (h->type != PERF_RECORD_SAMPLE || h->size < sizeof(rec.s))
		return;
	copy_out(r, pos, &rec.s, sizeof(rec.s));
	f.time = rec.s.time;
	f.idx = b->idx;
	f.pid = (pid_t)rec.s.pid;
	f.tid = (pid_t)rec.s.tid;
	f.cpu = (int)rec.s.cpu;
	sink(ctx, &f);
}

static int read_ring(struct trigger_bp *b, struct bp_ring *r, trigger_sink_fn sink, void *ctx)
{
	uint64_t head = __atomic_load_n(&r->pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->pc->data_tail;
	int n = 0;

	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;

		copy_out(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		one_record(b, r, tail, &h, sink, ctx);
		n += h.type == PERF_RECORD_SAMPLE;
		tail += h.size;
	}
	__atomic_store_n(&r->pc->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

int trigger_bp_read(struct trigger_bp *b, trigger_sink_fn sink, void *ctx)
{
	int n = 0;

	for (int i = 0; i < b->nrings; i++)
		if (b->rings[i].pc)
			n += read_ring(b, &b->rings[i], sink, ctx);
	return n;
}

/*
 * The kernel's count, summed over the events (each counts the records it could not
 * write; an inherited one's children count on it), where every event has it and
 * each read of it worked; else the LOST records' sum, which is also taken where it is
 * the more. *@counted: the kernel's count, not only the LOST records' (which say
 * nothing of a full ring that no fire came after).
 */
uint64_t trigger_bp_dropped(const struct trigger_bp *b, bool *counted)
{
	uint64_t sum;

	*counted = !b->uncounted && lostcount_sum(b->fds, b->nfds, &sum);
	if (!*counted)
		return b->lost;
	return sum > b->lost ? sum : b->lost;
}

uint64_t trigger_bp_throttled(const struct trigger_bp *b)
{
	return b->throttled;
}

void trigger_bp_close(struct trigger_bp *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->nrings; i++)
		if (b->rings[i].pc)
			munmap(b->rings[i].pc, b->rings[i].len);
	for (int i = 0; i < b->nfds; i++)
		close(b->fds[i]);
	free(b->rings);
	free(b->fds);
	free(b);
}
