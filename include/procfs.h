/* SPDX-License-Identifier: MIT */
/* What /proc says about processes and threads: one scanner for every caller. */
#ifndef PTC_PROCFS_H
#define PTC_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The threads of process @pid now, in /proc order, malloc'd. Returns 0, or
 * -ESRCH when the process is gone (or a zombie with no live thread), -ENOMEM.
 */
int procfs_tasks(pid_t pid, pid_t **tids, int *nr);
/* The state letter of thread @tid ('R', 'S', 'Z', ...), or 0 when it is gone. */
char procfs_state(pid_t tid);
/* The process of thread @tid (its Tgid), or 0 when /proc does not say. */
pid_t procfs_tgid(pid_t tid);
/* TracerPid of @tid (0: none), -1 when it cannot be read. */
pid_t procfs_tracer(pid_t tid);
/*
 * The first line "KEY: VALUE" of a /proc file (status, meminfo) as a number
 * in @base (16 for CapEff). 0, or -errno (-ENOENT: no such line).
 */
int procfs_field(const char *path, const char *key, int base, unsigned long long *v);
/* One line of /proc/PID/maps. */
struct procfs_map {
	uint64_t start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8];		/* "r-xp" */
	const char *name;	/* the path, "[vdso]", or "" for an anonymous mapping */
};

/* Parse @line (its newline is cut off); false when it is not a maps line. */
bool procfs_maps_line(char *line, struct procfs_map *m);
/* Every process now (the numeric entries of /proc), malloc'd. 0 or -errno. */
int procfs_pids(pid_t **pids, int *nr);

#endif
