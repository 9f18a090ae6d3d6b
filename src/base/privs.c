// SPDX-License-Identifier: MIT
/* perf permissions and the mlock budget, read from /proc and rlimits. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "privs.h"
#include "procfs.h"

#define CAP_SYS_ADMIN_BIT	21
#define CAP_IPC_LOCK_BIT	14
#define CAP_PERFMON_BIT		38

static long read_long(const char *path, long def)
{
	FILE *f = fopen(path, "re");
	long v;

	if (!f)
		return def;
	if (fscanf(f, "%ld", &v) != 1)
		v = def;
	fclose(f);
	return v;
}

static uint64_t cap_eff(void)
{
	unsigned long long v;

	return procfs_field("/proc/self/status", "CapEff", 16, &v) ? 0 : v;
}

void privs_read(struct privs *p)
{
	uint64_t caps = cap_eff();
	struct rlimit rl;

	memset(p, 0, sizeof(*p));
	p->paranoid = (int)read_long("/proc/sys/kernel/perf_event_paranoid", INT32_MIN);
	p->mlock_kb = read_long("/proc/sys/kernel/perf_event_mlock_kb", -1);
	p->euid = geteuid();
	p->cap_perfmon = caps & (1ULL << CAP_PERFMON_BIT);
	p->cap_sys_admin = caps & (1ULL << CAP_SYS_ADMIN_BIT);
	p->cap_ipc_lock = caps & (1ULL << CAP_IPC_LOCK_BIT);
	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		p->rlimit_memlock = 0;
	else
		p->rlimit_memlock = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur;
}

bool privs_privileged(const struct privs *p)
{
	return p->euid == 0 || p->cap_perfmon || p->cap_sys_admin;
}

/* Debian adds level 3: no perf at all without privilege. */
bool privs_may_trace_user(const struct privs *p)
{
	return privs_privileged(p) || p->paranoid <= 2;
}

bool privs_may_trace_kernel(const struct privs *p)
{
	return privs_privileged(p) || p->paranoid <= 1;
}

bool privs_may_trace_cpu(const struct privs *p)
{
	return privs_privileged(p) || p->paranoid <= 0;
}

/* perf_mmap()'s rule: only CAP_IPC_LOCK or paranoid -1 lift the limit. */
uint64_t privs_mlock_budget(const struct privs *p, unsigned int online_cpus)
{
	uint64_t free_bytes;

	if (p->cap_ipc_lock || p->paranoid < 0 || p->rlimit_memlock == UINT64_MAX)
		return UINT64_MAX;
	free_bytes = p->mlock_kb > 0 ? (uint64_t)p->mlock_kb * 1024 : 0;
	return free_bytes * (online_cpus ? online_cpus : 1) + p->rlimit_memlock;
}

uint64_t privs_mem_available(void)
{
	unsigned long long kb;

	return procfs_field("/proc/meminfo", "MemAvailable", 10, &kb) ? 0 : (uint64_t)kb * 1024;
}

void privs_nofile(uint64_t *soft, uint64_t *hard)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		*soft = *hard = UINT64_MAX;
		return;
	}
	*soft = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur;
	*hard = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : rl.rlim_max;
}

int privs_raise_nofile(uint64_t need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur == RLIM_INFINITY || need <= rl.rlim_cur || rl.rlim_cur == rl.rlim_max)
		return 0;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -errno : 0;
}
