// SPDX-License-Identifier: MIT
/* Copies of the traced processes' JIT perf maps (/tmp/perf-PID.map) into the bundle. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "fileio.h"
#include "perfmap.h"
#include "perfmaps.h"
#include "sideband.h"

#define MAX_PIDS 4096	/* processes with JIT code remembered from the sideband */

struct pidset {
	int pids[MAX_PIDS];
	int nr;
	bool full;
};

static bool anon_code(const char *file)
{
	return !strcmp(file, "//anon") || !strncmp(file, "[anon:", 6) ||
	       !strncmp(file, "/memfd:", 7);
}

static void pid_add(struct pidset *s, int pid)
{
	for (int i = 0; i < s->nr; i++)
		if (s->pids[i] == pid)
			return;
	if (s->nr == MAX_PIDS) {
		s->full = true;
		return;
	}
	s->pids[s->nr++] = pid;
}

/* A pid that mapped JIT code (@r a user-space MMAP/MMAP2 of anonymous code) into @ctx. */
static int jit_pid(const struct sb_record *r, void *ctx)
{
	const char *name = sideband_mmap_file(r);
	uint32_t pid;

	if (!name || !anon_code(name) || r->body_len < 4 ||
	    (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
		return 0;
	memcpy(&pid, r->body, 4);
	if (pid && pid <= INT32_MAX)
		pid_add(ctx, (int)pid);
	return 0;
}

/* The pids of the user-space mappings of JIT code in the sideband file @file. */
static void scan(int dirfd, const char *file, struct pidset *s)
{
	sideband_each(dirfd, file, jit_pid, s, NULL);
}

/*
 * Copy @in (open, a regular file) to @out: at most PERFMAP_MAX_FILE bytes, cut
 * after the last whole line within them. 0 or -errno; *@bytes copied.
 */
static int copy(int in, int out, uint64_t *bytes, bool *cut)
{
	static char buf[1 << 16];
	uint64_t total = 0, last_nl = 0;
	int ret;

	*cut = false;
	for (;;) {
		size_t want = sizeof(buf);
		ssize_t n;
		char *nl;

		if (total + want > PERFMAP_MAX_FILE)
			want = (size_t)(PERFMAP_MAX_FILE - total);
		if (!want) {
			char c;

			*cut = pread(in, &c, 1, (off_t)total) == 1;
			break;
		}
		n = read(in, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		ret = write_all(out, buf, (size_t)n);
		if (ret)
			return ret;
		nl = memrchr(buf, '\n', (size_t)n);
		if (nl)
			last_nl = total + (uint64_t)(nl - buf) + 1;
		total += (uint64_t)n;
	}
	if (*cut && ftruncate(out, (off_t)last_nl))
		return -errno;
	*bytes = *cut ? last_nl : total;
	return 0;
}

/*
 * A map not copied: the warning names the file and why, and the manifest lists it
 * (MANIFEST_MAX_PERF_MAPS at most, the reason cut to MANIFEST_MAX_PERF_MAP_WHY bytes).
 */
struct copy_ctx {
	int dirfd, tmpfd;
	const char *tmpdir;
	uid_t owner;
	struct manifest *m;
	struct warnings *w;
};

__attribute__((format(printf, 5, 6)))
static int refuse(const struct copy_ctx *x, int ret, const char *name, int pid,
		  const char *fmt, ...)
{
	struct manifest *m = x->m;
	struct mperfmap_refused *r;
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	warn_add(x->w, "%s/%s: not copied: %s", x->tmpdir, name, why);
	if (m->nr_perf_maps_refused >= MANIFEST_MAX_PERF_MAPS)
		return ret;
	why[MANIFEST_MAX_PERF_MAP_WHY] = '\0';
	r = manifest_add_perf_map_refused(m);
	if (r) {
		r->pid = pid;
		r->why = strdup(why);
		if (!r->why)
			m->nr_perf_maps_refused--;
	}
	return ret;
}

/* Whose map @pid may have: @owner, or its /proc entry's owner while it lives, else ours. */
static uid_t owner_of(int pid, uid_t owner)
{
	char path[32];
	struct stat st;

	if (owner != PERFMAPS_OWNER_OF_PROCESS)
		return owner;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	return stat(path, &st) ? geteuid() : st.st_uid;
}

/*
 * What is wrong with the map @st for @pid (a link, not a regular file, a second name,
 * another user's, writable by others), as refuse() says it; 0 when nothing is.
 */
static int check(const struct copy_ctx *x, const struct stat *st, int pid, const char *name)
{
	uid_t want = owner_of(pid, x->owner);

	if (S_ISLNK(st->st_mode))
		return refuse(x, -ELOOP, name, pid, "a symbolic link (a perf map is "
			      "read only from a regular file): remove it");
	if (!S_ISREG(st->st_mode))
		return refuse(x, -EINVAL, name, pid, "not a regular file (a perf map is "
			      "read only from a regular file): remove it");
	/* A JIT writes its map new; a second name is a hard link someone made to another file. */
	if (st->st_nlink != 1)
		return refuse(x, -EPERM, name, pid, "it has %ju names (a hard link): "
			      "remove the other names", (uintmax_t)st->st_nlink);
	/* perf reads only its own user's or root's maps; the JIT writes it as the process. */
	if (st->st_uid && st->st_uid != want)
		return refuse(x, -EPERM, name, pid, "owned by uid %ju, neither the "
			      "process's (uid %ju) nor root: another user may have planted its "
			      "names; remove it", (uintmax_t)st->st_uid, (uintmax_t)want);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return refuse(x, -EPERM, name, pid, "group or others may write it "
			      "(mode %04o): its names may not be the JIT's; chmod go-w it if they are",
			      (unsigned int)(st->st_mode & 07777));
	return 0;
}

/* Copy /tmp/perf-PID.map; 1 when copied, 0 when there is none, -errno (said in @w). */
static int copy_one(const struct copy_ctx *x, int pid)
{
	struct manifest *m = x->m;
	struct warnings *w = x->w;
	const char *tmpdir = x->tmpdir;
	char name[64], dst[96];
	struct mperfmap *pm;
	struct stat st, fst;
	uint64_t bytes = 0;
	int in, out, ret;
	bool cut;

	snprintf(name, sizeof(name), "perf-%d.map", pid);
	/* Looked at first, the name itself: a FIFO or a device is never opened. */
	if (fstatat(x->tmpfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		ret = -errno;
		return refuse(x, ret, name, pid, "%s", strerror(-ret));
	}
	ret = check(x, &st, pid, name);
	if (ret)
		return ret;
	in = openat(x->tmpfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (in < 0 && errno == ENOENT)
		return 0;
	if (in < 0) {
		ret = -errno;
		if (ret == -ELOOP)
			return refuse(x, ret, name, pid, "a symbolic link (a perf map is "
				      "read only from a regular file): remove it");
		return refuse(x, ret, name, pid, "%s", strerror(-ret));
	}
	/* What was opened, checked again: the name may have been replaced in between. */
	if (fstat(in, &fst)) {
		ret = -errno;
		close(in);
		return refuse(x, ret, name, pid, "%s", strerror(-ret));
	}
	ret = check(x, &fst, pid, name);
	if (!ret && (fst.st_dev != st.st_dev || fst.st_ino != st.st_ino))
		ret = refuse(x, -EAGAIN, name, pid, "replaced while it was being "
			     "opened: copy it by hand if it is the JIT's");
	if (ret) {
		close(in);
		return ret;
	}
	snprintf(dst, sizeof(dst), BUNDLE_PERF_MAPS "/%s", name);
	out = openat(x->dirfd, dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		ret = -errno;
		close(in);
		return refuse(x, ret, name, pid, "not copied into the bundle: %s",
			      strerror(-ret));
	}
	ret = copy(in, out, &bytes, &cut);
	close(in);
	if (close(out) && !ret)
		ret = -errno;
	pm = ret ? NULL : manifest_add_perf_map(m);
	if (pm) {
		pm->pid = pid;
		pm->bytes = bytes;
		pm->cut = cut;
		pm->file = strdup(dst);
	}
	if (!pm || !pm->file) {
		ret = ret ? ret : -ENOMEM;
		if (pm)
			m->nr_perf_maps--;
		unlinkat(x->dirfd, dst, 0);
		return refuse(x, ret, name, pid, "%s", strerror(-ret));
	}
	if (cut)
		warn_add(w, "%s/%s: longer than %llu MiB: its first %llu bytes (whole lines) were "
			 "copied", tmpdir, name, PERFMAP_MAX_FILE >> 20, (unsigned long long)bytes);
	return 1;
}

int perfmaps_copy(int dirfd, const char *tmpdir, uid_t owner, struct manifest *m,
		  struct warnings *w)
{
	struct copy_ctx x = { .dirfd = dirfd, .tmpdir = tmpdir, .owner = owner, .m = m, .w = w };
	struct pidset *s = calloc(1, sizeof(*s));
	int tmpfd, copied = 0, skipped = 0;

	if (!s) {
		warn_add(w, "JIT perf maps not copied: out of memory");
		return 0;
	}
	if (m->proc_sideband)
		scan(dirfd, m->proc_sideband, s);
	for (int i = 0; i < m->nr_streams; i++)
		scan(dirfd, m->streams[i].sideband, s);
	tmpfd = s->nr ? open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (tmpfd >= 0 && mkdirat(dirfd, BUNDLE_PERF_MAPS, 0700) && errno != EEXIST) {
		warn_add(w, "%s: JIT perf maps not copied: %s", BUNDLE_PERF_MAPS, strerror(errno));
		close(tmpfd);
		tmpfd = -1;
	}
	for (int i = 0; tmpfd >= 0 && i < s->nr; i++) {
		if (m->nr_perf_maps >= MANIFEST_MAX_PERF_MAPS) {
			skipped++;
			continue;
		}
		x.tmpfd = tmpfd;
		if (copy_one(&x, s->pids[i]) > 0)
			copied++;
	}
	if (skipped)
		warn_add(w, "%d more processes had JIT code: only %d perf maps are copied", skipped,
			 MANIFEST_MAX_PERF_MAPS);
	if (s->full)
		warn_add(w, "more than %d processes had JIT code: the perf maps of the others are "
			 "not copied", MAX_PIDS);
	if (tmpfd >= 0) {
		close(tmpfd);
		if (!copied)
			unlinkat(dirfd, BUNDLE_PERF_MAPS, AT_REMOVEDIR);
	}
	free(s);
	return copied;
}
