// SPDX-License-Identifier: MIT
/* Processes and threads from /proc. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procfs.h"

/* The numeric entries of @dir (pids or tids), malloc'd. */
static int scan(const char *dir, pid_t **out, int *nr)
{
	struct dirent *de;
	pid_t *ids = NULL, *n;
	int cnt = 0, cap = 0;
	DIR *d = opendir(dir);

	*out = NULL;
	*nr = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (*end || v <= 0 || de->d_name[0] == '\0')
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			n = realloc(ids, (size_t)cap * sizeof(*ids));
			if (!n) {
				free(ids);
				closedir(d);
				return -ENOMEM;
			}
			ids = n;
		}
		ids[cnt++] = (pid_t)v;
	}
	closedir(d);
	*out = ids;
	*nr = cnt;
	return 0;
}

char procfs_state(pid_t tid)
{
	char path[64], buf[512], *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold spaces and parentheses; the last ')' ends it. */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

int procfs_tasks(pid_t pid, pid_t **tids, int *nr)
{
	char dir[64];
	bool live = false;
	int ret;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	ret = scan(dir, tids, nr);
	if (ret == -ENOENT || ret == -ESRCH)
		return -ESRCH;
	if (ret)
		return ret;
	/* A process whose main thread exited still runs while one thread does. */
	for (int i = 0; i < *nr && !live; i++) {
		char s = procfs_state((*tids)[i]);

		live = s && s != 'Z' && s != 'X';
	}
	if (!live) {
		free(*tids);
		*tids = NULL;
		*nr = 0;
		return -ESRCH;
	}
	return 0;
}

int procfs_field(const char *path, const char *key, int base, unsigned long long *v)
{
	size_t n = strlen(key);
	char line[256];
	int ret = -ENOENT;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		char *end;

		if (strncmp(line, key, n) || line[n] != ':')
			continue;
		errno = 0;
		*v = strtoull(line + n + 1, &end, base);
		ret = errno || end == line + n + 1 ? -EINVAL : 0;
	}
	fclose(f);
	return ret;
}

pid_t procfs_tgid(pid_t tid)
{
	unsigned long long v;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	return procfs_field(path, "Tgid", 10, &v) ? 0 : (pid_t)v;
}

pid_t procfs_tracer(pid_t tid)
{
	unsigned long long v;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	return procfs_field(path, "TracerPid", 10, &v) ? -1 : (pid_t)v;
}

bool procfs_maps_line(char *line, struct procfs_map *m)
{
	unsigned long long lo, hi, pgoff, ino;
	int n = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &lo, &hi, m->perms, &pgoff, &m->maj,
		   &m->min, &ino, &n) < 7 || !n || hi < lo)
		return false;
	m->start = lo;
	m->end = hi;
	m->pgoff = pgoff;
	m->ino = ino;
	line[n + strcspn(line + n, "\n")] = '\0';
	m->name = line + n;
	return true;
}

int procfs_pids(pid_t **pids, int *nr)
{
	return scan("/proc", pids, nr);
}
