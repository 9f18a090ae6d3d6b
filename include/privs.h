/* SPDX-License-Identifier: MIT */
/*
 * What this process may do with perf: perf_event_paranoid, capabilities, and
 * how much memory it may lock for ring buffers. Used by caps and by record's
 * error messages (EACCES, mlock failures).
 */
#ifndef PTC_PRIVS_H
#define PTC_PRIVS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct privs {
	int paranoid;		/* /proc/sys/kernel/perf_event_paranoid, INT32_MIN if unreadable */
	uid_t euid;
	bool cap_perfmon, cap_sys_admin, cap_ipc_lock;
	long mlock_kb;		/* /proc/sys/kernel/perf_event_mlock_kb, -1 if unreadable */
	uint64_t rlimit_memlock;	/* RLIM_INFINITY -> UINT64_MAX */
};

void privs_read(struct privs *p);
/* perf's "privileged": root, CAP_PERFMON or CAP_SYS_ADMIN. */
bool privs_privileged(const struct privs *p);
/* May this process trace user space / kernel of a task, or a whole CPU? */
bool privs_may_trace_user(const struct privs *p);
bool privs_may_trace_kernel(const struct privs *p);
bool privs_may_trace_cpu(const struct privs *p);
/*
 * Bytes of perf ring buffer (each ring counts its pages plus one control
 * page) this user may map, the kernel's rule: perf_event_mlock_kb times the
 * online CPUs, then RLIMIT_MEMLOCK on top. UINT64_MAX when unlimited
 * (CAP_IPC_LOCK, or perf_event_paranoid -1).
 */
uint64_t privs_mlock_budget(const struct privs *p, unsigned int online_cpus);
/* MemAvailable from /proc/meminfo in bytes, 0 when unknown. */
uint64_t privs_mem_available(void);
/* RLIMIT_NOFILE's soft and hard limits (RLIM_INFINITY -> UINT64_MAX). */
void privs_nofile(uint64_t *soft, uint64_t *hard);
/*
 * Raise the soft RLIMIT_NOFILE to the hard one when @need descriptors do not
 * fit under it (perf does the same). 0 or -errno.
 */
int privs_raise_nofile(uint64_t need);

#endif
