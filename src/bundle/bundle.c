// SPDX-License-Identifier: MIT
/* The bundle directory: made fresh, private files, and --force that never loses the old one early. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bundle.h"

struct bundle {
	char *path;		/* as the user gave it, for messages */
	int parent_fd;		/* the directory that holds it */
	char *name;		/* its name in there */
	int dir_fd;
	int lock_fd;		/* manifest_lock(): one writer at a time */
	char *aside;		/* the replaced bundle's name while it waits, or NULL */
	char *final;		/* staged: the name it gets when published, else NULL */
};

/* The staged bundle, for bundle_staged_remove() in a signal handler: no malloc there. */
static volatile int staged_parent = -1;
static char staged_name[NAME_MAX + 1];

/*
 * The mount @name in @dirfd is on ("" with AT_EMPTY_PATH: @dirfd's own): its
 * mount ID, which tells a bind mount of the same filesystem apart too; its
 * device where the kernel has no mount IDs (before Linux 5.8).
 */
static int mount_of(int dirfd, const char *name, uint64_t *id)
{
	struct statx stx;

	if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH),
		  STATX_TYPE | STATX_MNT_ID, &stx))
		return -errno;
	*id = stx.stx_mask & STATX_MNT_ID ? stx.stx_mnt_id :
	      makedev(stx.stx_dev_major, stx.stx_dev_minor);
	return 0;
}

/*
 * Remove everything below @fd (a directory we own, on mount @mnt), links as
 * links; then close it. A directory on another mount (a filesystem mounted,
 * or bound, inside the bundle) is not ours: it is left, whole, and that is
 * -EXDEV.
 */
static int empty_tree(int fd, uint64_t mnt)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int ret = 0;

	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct stat st;
		uint64_t sub_mnt;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);

			/* Checked on the open directory: nothing can be mounted in between. */
			if (sub >= 0 && (mount_of(sub, "", &sub_mnt) || sub_mnt != mnt)) {
				close(sub);
				ret = ret ?: -EXDEV;
				continue;
			}
			if (sub < 0 || empty_tree(sub, mnt)) {
				ret = ret ?: -EIO;
				continue;
			}
			if (unlinkat(fd, de->d_name, AT_REMOVEDIR))
				ret = ret ?: -errno;
		} else if (unlinkat(fd, de->d_name, 0)) {
			ret = ret ?: -errno;
		}
	}
	closedir(d);
	return ret;
}

static int remove_tree(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), ret;
	uint64_t mnt;

	if (fd < 0)
		return -errno;
	ret = mount_of(fd, "", &mnt);
	if (ret) {
		close(fd);
		return ret;
	}
	ret = empty_tree(fd, mnt);
	if (!ret && unlinkat(parent, name, AT_REMOVEDIR))
		ret = -errno;
	return ret;
}

/*
 * The first entry below @fd (on mount @mnt) that is on another mount, as a
 * path from @fd in @rel: 1; 0 when there is none; -errno.
 */
static int find_mount(int fd, uint64_t mnt, char *rel, size_t cap, int depth)
{
	int dup_fd = dup(fd), ret = 0;
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;

	if (!d) {
		ret = -errno;
		if (dup_fd >= 0)
			close(dup_fd);
		return ret;
	}
	rewinddir(d);
	while (!ret && (de = readdir(d))) {
		size_t n = strlen(rel);
		uint64_t m;
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN && de->d_type != DT_REG)
			continue;
		snprintf(rel + n, cap - n, "%s%s", n ? "/" : "", de->d_name);
		if (mount_of(fd, de->d_name, &m) == 0 && m != mnt) {
			ret = 1;
			break;
		}
		sub = de->d_type == DT_REG ? -1 :
		      openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			ret = depth < 64 ? find_mount(sub, mnt, rel, cap, depth + 1) : 0;
			close(sub);
		}
		if (!ret)
			rel[n] = '\0';
	}
	closedir(d);
	return ret;
}

static bool empty_dir(int fd)
{
	int dup_fd = dup(fd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;
	bool empty = true;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return false;
	}
	while (empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	return empty;
}

int bundle_replaceable(int fd, const char *path, struct error *e)
{
	struct manifest m;
	int ret;

	char rel[PATH_MAX] = "";
	uint64_t mnt;

	if (empty_dir(fd))
		return 0;
	ret = manifest_read(fd, path, &m, e);
	manifest_free(&m);
	if (ret) {
		err_what(e, "-o %s: not a ptcollect bundle", path);
		err_hint(e, "--force only replaces a bundle that ptcollect wrote; choose another "
			 "name for -o");
		e->usage = true;
		return ret;
	}
	/* Removing it must not reach into a filesystem mounted inside it. */
	ret = mount_of(fd, "", &mnt);
	if (!ret)
		ret = find_mount(fd, mnt, rel, sizeof(rel), 0);
	if (ret < 0)
		return err_runtime(e, ret, "-o %s: %s", path, strerror(-ret));
	if (ret) {
		err_usage_code(e, -EXDEV, "-o %s: %s/%s is a mount point: --force removes only "
			       "the bundle's own files, not another filesystem's", path, path, rel);
		err_hint(e, "unmount it first, or choose another name for -o");
		return -EXDEV;
	}
	return 0;
}

/* Move the old bundle to a hidden name beside it, and check it is still a bundle there. */
static int move_aside(struct bundle *b, struct error *e)
{
	char tail[32];
	int fd, ret, keep;

	/* Whatever the name's length, the aside name fits NAME_MAX: the name is cut. */
	snprintf(tail, sizeof(tail), ".replaced-%d", (int)getpid());
	keep = NAME_MAX - 1 - (int)strlen(tail);
	if (asprintf(&b->aside, ".%.*s%s", keep, b->name, tail) < 0) {
		b->aside = NULL;
		return err_runtime(e, -ENOMEM, "out of memory");
	}
	/* Never onto something there (a directory left by a crash with our pid). */
	if (renameat2(b->parent_fd, b->name, b->parent_fd, b->aside, RENAME_NOREPLACE)) {
		ret = -errno;
		free(b->aside);
		b->aside = NULL;
		return err_runtime(e, ret, "-o %s: cannot move the old bundle aside: %s", b->path,
				   strerror(-ret));
	}
	fd = openat(b->parent_fd, b->aside, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	ret = fd < 0 ? -errno : bundle_replaceable(fd, b->path, e);
	if (fd >= 0)
		close(fd);
	if (ret) {
		/* It changed since it was checked: it is not ours to remove. */
		renameat(b->parent_fd, b->aside, b->parent_fd, b->name);
		free(b->aside);
		b->aside = NULL;
		if (ret == -EXDEV)
			return ret;	/* a mount appeared in it: said so */
		return err_usage_code(e, ret, "-o %s: it is no longer a ptcollect bundle; "
				      "nothing was replaced", b->path);
	}
	return 0;
}

static int create(struct bundle **bp, const char *path, bool replace, bool staged,
		  struct error *e)
{
	struct bundle *b = calloc(1, sizeof(*b));
	char *copy = NULL, *parent;
	size_t n;
	int ret;

	*bp = NULL;
	if (!b)
		return err_runtime(e, -ENOMEM, "out of memory");
	b->parent_fd = b->dir_fd = b->lock_fd = -1;
	if (!(b->path = strdup(path)) || !(copy = strdup(path)))
		goto nomem;
	n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	if (!(b->name = strdup(basename(copy))))
		goto nomem;
	parent = dirname(copy);
	/* "", ".", "..", "/": names of a directory that is there, not of a new one. */
	if (!*path || !strcmp(b->name, ".") || !strcmp(b->name, "..") || !strcmp(b->name, "/")) {
		ret = err_usage(e, "'%s': not a name for a new directory", path);
		err_hint(e, "name the bundle's directory, one that does not exist yet");
		goto fail;
	}
	b->parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->parent_fd < 0) {
		ret = -errno;
		if (ret == -ENOENT || ret == -ENOTDIR)
			err_usage_code(e, ret, "%s: the directory %s does not exist", path, parent);
		else
			err_runtime(e, ret, "%s: %s: %s", path, parent, strerror(-ret));
		goto fail;
	}
	if (replace && (ret = move_aside(b, e)))
		goto fail;
	if (staged) {
		/* Made under a hidden name beside it, cut to fit NAME_MAX, until published. */
		char tail[32];

		snprintf(tail, sizeof(tail), ".staged-%d", (int)getpid());
		b->final = b->name;
		if (asprintf(&b->name, ".%.*s%s", NAME_MAX - 1 - (int)strlen(tail), b->final,
			     tail) < 0) {
			b->name = NULL;
			goto nomem;
		}
	}
	/* mkdir fails on anything already there: the directory is ours alone. */
	if (mkdirat(b->parent_fd, b->name, 0700)) {
		ret = -errno;
		if (ret == -EEXIST)
			err_usage_code(e, ret, "%s: something else created it meanwhile; "
				       "nothing was written", path);
		else
			err_runtime(e, ret, "%s: cannot create the directory: %s", path,
				    strerror(-ret));
		goto fail;
	}
	b->dir_fd = openat(b->parent_fd, b->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			   O_CLOEXEC);
	if (b->dir_fd < 0) {
		ret = err_runtime(e, -errno, "%s: %s", path, strerror(errno));
		goto fail;
	}
	if (staged) {
		snprintf(staged_name, sizeof(staged_name), "%s", b->name);
		staged_parent = b->parent_fd;
	}
	/* Made by us just now: only an archive or import run meanwhile can hold it. */
	b->lock_fd = manifest_lock(b->dir_fd, path, e);
	if (b->lock_fd < 0) {
		ret = b->lock_fd;
		goto fail;
	}
	free(copy);
	*bp = b;
	return 0;
nomem:
	ret = err_runtime(e, -ENOMEM, "out of memory");
fail:
	free(copy);
	bundle_discard(b);
	bundle_free(b);
	return ret;
}

int bundle_create(struct bundle **bp, const char *path, bool replace, struct error *e)
{
	return create(bp, path, replace, false, e);
}

int bundle_create_staged(struct bundle **bp, const char *path, struct error *e)
{
	return create(bp, path, false, true, e);
}

int bundle_publish(struct bundle *b, struct error *e)
{
	int ret;

	if (!b->final)
		return 0;
	/* Never onto something that appeared at the name meanwhile. */
	if (renameat2(b->parent_fd, b->name, b->parent_fd, b->final, RENAME_NOREPLACE)) {
		ret = -errno;
		if (ret == -EEXIST)
			return err_usage_code(e, ret, "%s: something else created it meanwhile; "
					      "nothing was written", b->path);
		return err_runtime(e, ret, "%s: %s", b->path, strerror(-ret));
	}
	staged_parent = -1;
	free(b->name);
	b->name = b->final;
	b->final = NULL;
	return 0;
}

/* Remove every entry of @fd, a directory (@depth levels of them below), by system calls alone. */
static void remove_entries(int fd, int depth)
{
	char buf[4096] __attribute__((aligned(8)));
	long n;

	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);

			off += d->reclen;
			if (!strcmp(d->name, ".") || !strcmp(d->name, ".."))
				continue;
			if (d->type == DT_DIR && depth > 0) {
				int sub = openat(fd, d->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC);

				if (sub >= 0) {
					remove_entries(sub, depth - 1);
					close(sub);
				}
				unlinkat(fd, d->name, AT_REMOVEDIR);
			} else {
				unlinkat(fd, d->name, 0);
			}
		}
	}
}

void bundle_staged_remove(void)
{
	int parent = staged_parent, fd;

	if (parent < 0)
		return;
	fd = openat(parent, staged_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		remove_entries(fd, 4);
		close(fd);
	}
	unlinkat(parent, staged_name, AT_REMOVEDIR);
}

int bundle_dirfd(const struct bundle *b)
{
	return b->dir_fd;
}

const char *bundle_path(const struct bundle *b)
{
	return b->path;
}

int bundle_create_file(struct bundle *b, const char *name, struct error *e)
{
	int fd = openat(b->dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);

	if (fd < 0)
		return err_runtime(e, -errno, "%s/%s: %s", b->path, name, strerror(errno));
	return fd;
}

int bundle_mkdir(struct bundle *b, const char *name, struct error *e)
{
	if (mkdirat(b->dir_fd, name, 0700) && errno != EEXIST)
		return err_runtime(e, -errno, "%s/%s: %s", b->path, name, strerror(errno));
	return 0;
}

int bundle_open_stream(struct bundle *b, struct stream *s, struct error *e)
{
	s->trace_fd = bundle_create_file(b, s->trace, e);
	if (s->trace_fd < 0)
		return s->trace_fd;
	s->sb_fd = bundle_create_file(b, s->sideband, e);
	if (s->sb_fd < 0) {
		int ret = s->sb_fd;

		close(s->trace_fd);
		s->trace_fd = -1;
		return ret;
	}
	return 0;
}

int bundle_close_stream(struct bundle *b, struct stream *s, struct error *e)
{
	int ret = 0;

	if (s->trace_fd >= 0 && close(s->trace_fd))
		ret = err_runtime(e, -errno, "%s/%s: %s", b->path, s->trace, strerror(errno));
	if (s->sb_fd >= 0 && close(s->sb_fd) && !ret)
		ret = err_runtime(e, -errno, "%s/%s: %s", b->path, s->sideband, strerror(errno));
	s->trace_fd = s->sb_fd = -1;
	return ret;
}

#define RESERVE ".reserve"

int bundle_reserve(struct bundle *b, size_t bytes, struct error *e)
{
	int fd = openat(b->dir_fd, RESERVE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600), ret;
	struct statvfs sv;

	if (fd < 0)
		return err_runtime(e, -errno, "%s/%s: %s", b->path, RESERVE, strerror(errno));
	ret = posix_fallocate(fd, 0, (off_t)bytes);
	close(fd);
	if (!ret)
		return 0;
	unlinkat(b->dir_fd, RESERVE, 0);
	if (ret != ENOSPC)
		return err_runtime(e, -ret, "%s: %zu bytes cannot be kept for the last manifest: %s",
				   b->path, bytes, strerror(ret));
	if (fstatvfs(b->dir_fd, &sv))
		sv.f_bavail = 0, sv.f_frsize = 0;
	err_runtime(e, -ENOSPC, "%s: the last manifest needs %zu bytes kept free, and the "
		    "disk has %llu bytes free: nothing was recorded", b->path, bytes,
		    (unsigned long long)sv.f_bavail * sv.f_frsize);
	err_hint(e, "free some room, or give -o a directory on another disk");
	return -ENOSPC;
}

void bundle_unreserve(struct bundle *b)
{
	unlinkat(b->dir_fd, RESERVE, 0);
}

int bundle_write_manifest(struct bundle *b, const struct manifest *m, struct error *e)
{
	int ret = manifest_write(m, b->dir_fd, e);

	if (ret)
		err_what(e, "%s", b->path);
	return ret;
}

int bundle_begun(struct bundle *b, struct error *e)
{
	int ret;

	if (!b->aside)
		return 0;
	ret = remove_tree(b->parent_fd, b->aside);
	if (ret)
		err_runtime(e, ret, "-o %s: the replaced bundle, moved aside as %s, could not be "
			    "removed: %s", b->path, b->aside, strerror(-ret));
	free(b->aside);
	b->aside = NULL;
	return ret;
}

void bundle_discard(struct bundle *b)
{
	if (!b || b->parent_fd < 0)
		return;
	if (b->final)
		staged_parent = -1;
	if (b->dir_fd >= 0) {
		/* Made fresh by us: everything in it is ours. */
		remove_tree(b->parent_fd, b->name);
		close(b->dir_fd);
		b->dir_fd = -1;
	}
	if (b->aside) {
		renameat(b->parent_fd, b->aside, b->parent_fd, b->name);
		free(b->aside);
		b->aside = NULL;
	}
}

void bundle_free(struct bundle *b)
{
	if (!b)
		return;
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	if (b->final)
		staged_parent = -1;
	if (b->dir_fd >= 0)
		close(b->dir_fd);
	if (b->parent_fd >= 0)
		close(b->parent_fd);
	free(b->aside);
	free(b->final);
	free(b->name);
	free(b->path);
	free(b);
}

int bundle_describe_stream(const struct stream *s, struct mstream *m)
{
	const struct auxring_stats *st = &s->ring.stats;

	if (manifest_set(&m->file, s->trace) || manifest_set(&m->sideband, s->sideband))
		return -ENOMEM;
	m->cpu = s->cpu;
	m->tid = s->tid;
	m->bytes = st->aux_bytes;
	m->sideband_bytes = st->sideband_bytes;
	m->lost.truncated = st->truncated;
	m->lost.lost = st->lost;
	m->lost.lost_records = st->lost_events;
	m->lost.partial = st->partial;
	m->lost.collision = st->collision;
	m->lost.sideband_full = st->data_full;
	/* What the kernel dropped beyond what its LOST records said. */
	m->lost.counted = stream_unreported(s, &m->lost.unreported);
	m->restarts = st->restarts;
	m->itrace_start = st->itrace_start;
	return 0;
}
