// SPDX-License-Identifier: MIT
/* The bundle directory: made fresh, private files, and --force that never loses the old one early. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bundle.h"

struct bundle {
	char *path;		/* as the user gave it, for messages */
	int parent_fd;		/* the directory that holds it */
	char *name;		/* its name in there */
	int dir_fd;
	int lock_fd;		/* manifest_lock(): one writer at a time */
	char *aside;		/* the replaced bundle's name while it waits, or NULL */
};

/* Remove everything below @fd (a directory we own), links as links; then close it. */
static int empty_tree(int fd)
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

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);

			if (sub < 0 || empty_tree(sub)) {
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

	if (fd < 0)
		return -errno;
	ret = empty_tree(fd);
	if (!ret && unlinkat(parent, name, AT_REMOVEDIR))
		ret = -errno;
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

	if (empty_dir(fd))
		return 0;
	ret = manifest_read(fd, path, &m, e);
	manifest_free(&m);
	if (ret) {
		err_what(e, "-o %s: not a ptcollect bundle", path);
		err_hint(e, "--force only replaces a bundle that ptcollect wrote; choose another "
			 "name for -o");
		e->usage = true;
	}
	return ret;
}

/* Move the old bundle to a hidden name beside it, and check it is still a bundle there. */
static int move_aside(struct bundle *b, struct error *e)
{
	int fd, ret;

	if (asprintf(&b->aside, ".%s.replaced-%d", b->name, (int)getpid()) < 0) {
		b->aside = NULL;
		return err_runtime(e, -ENOMEM, "out of memory");
	}
	if (renameat(b->parent_fd, b->name, b->parent_fd, b->aside)) {
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
		return err_usage_code(e, ret, "-o %s: it is no longer a ptcollect bundle; "
				      "nothing was replaced", b->path);
	}
	return 0;
}

int bundle_create(struct bundle **bp, const char *path, bool replace, struct error *e)
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
	b->parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->parent_fd < 0) {
		ret = err_runtime(e, -errno, "-o %s: %s: %s", path, parent, strerror(errno));
		goto fail;
	}
	if (replace && (ret = move_aside(b, e)))
		goto fail;
	/* mkdir fails on anything already there: the directory is ours alone. */
	if (mkdirat(b->parent_fd, b->name, 0700)) {
		ret = -errno;
		if (ret == -EEXIST)
			err_usage_code(e, ret, "-o %s: something else created it meanwhile; "
				       "nothing was written", path);
		else
			err_runtime(e, ret, "-o %s: cannot create the directory: %s", path,
				    strerror(-ret));
		goto fail;
	}
	b->dir_fd = openat(b->parent_fd, b->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			   O_CLOEXEC);
	if (b->dir_fd < 0) {
		ret = err_runtime(e, -errno, "-o %s: %s", path, strerror(errno));
		goto fail;
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
	if (b->dir_fd >= 0)
		close(b->dir_fd);
	if (b->parent_fd >= 0)
		close(b->parent_fd);
	free(b->aside);
	free(b->name);
	free(b->path);
	free(b);
}
