// SPDX-License-Identifier: MIT
/* archive: the mapped files and the kernel's text into the bundle, each checked against the records. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive.h"
#include "bundle.h"
#include "fileio.h"
#include "images.h"
#include "kimage.h"
#include "symbols.h"

#define TMP_PREFIX ".ptcollect-archive."
#define RUNNING_KALLSYMS "/proc/kallsyms"
#define RUNNING_KCORE "/proc/kcore"

struct archiver {
	int dirfd;		/* the bundle */
	const char *dir;	/* its name, for messages */
	int root;		/* its sysroot */
	struct archive_result *r;
	struct error *e;
};

__attribute__((format(printf, 3, 4)))
static int item(struct archiver *a, bool refused, const char *fmt, ...)
{
	size_t have = (size_t)a->r->nr_items;
	struct archive_item *n = a->r->items;
	va_list ap;
	int ret;

	/* room for the next power of two: one item per file of 80,000 is no quadratic copy */
	if (!have || !(have & (have - 1))) {
		n = realloc(a->r->items, (have ? 2 * have : 1) * sizeof(*n));
		if (!n)
			return err_runtime(a->e, -ENOMEM, "out of memory");
	}
	a->r->items = n;
	va_start(ap, fmt);
	ret = vasprintf(&n[a->r->nr_items].msg, fmt, ap);
	va_end(ap);
	if (ret < 0)
		return err_runtime(a->e, -ENOMEM, "out of memory");
	n[a->r->nr_items++].refused = refused;
	a->r->refused += refused;
	return 0;
}

/* A write into the bundle failed: the archive stops there. */
static int bundle_failed(struct archiver *a, int err, const char *what)
{
	return err_runtime(a->e, err, "%s/%s%s: %s", a->dir, BUNDLE_SYSROOT, what, strerror(-err));
}

/*
 * The directory that will hold @path below the sysroot, made 0700 where it
 * is missing and opened without following links; *@base is the file's name.
 * A descriptor, or -errno (-ELOOP or -ENOTDIR: something else is in the way).
 */
static int open_dirs(int root, const char *path, const char **base)
{
	int fd = dup(root);
	const char *p = path + 1;

	while (fd >= 0) {
		size_t n = strcspn(p, "/");
		char name[NAME_MAX + 1];
		int sub;

		if (!p[n]) {
			*base = p;
			return fd;
		}
		if (n > NAME_MAX) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		if (mkdirat(fd, name, 0700) && errno != EEXIST) {
			sub = -errno;
		} else {
			sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			sub = sub < 0 ? -errno : sub;
		}
		close(fd);
		if (sub < 0)
			return sub == -ENOENT ? -ENOTDIR : sub;
		fd = sub;
		p += n + 1;
	}
	return -errno;
}

/* Copy all of @in to @out; *@write_failed tells whose error it was. */
static int copy_fd(int in, int out, bool *write_failed)
{
	char buf[1 << 16];
	off_t off = 0;

	*write_failed = false;
	for (;;) {
		ssize_t n = pread(in, buf, sizeof(buf), off);
		int ret;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;
		ret = write_all(out, buf, (size_t)n);
		if (ret) {
			*write_failed = true;
			return ret;
		}
		off += n;
	}
}

/* Whether @a and @b hold the same bytes. */
static bool same_bytes(int a, int b)
{
	char x[1 << 15], y[1 << 15];
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(a, x, sizeof(x), off), m = pread(b, y, sizeof(y), off);

		if (n < 0 || n != m || memcmp(x, y, (size_t)n))
			return false;
		if (!n)
			return true;
		off += n;
	}
}

/*
 * @name in @dirfd is a copy from an earlier archive: the same bytes as @src
 * is kept; anything else in its place is not ours to replace.
 */
static int check_existing(struct archiver *a, int dirfd, const char *name, int src,
			  const char *path)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	bool same = fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) && same_bytes(fd, src);

	if (fd >= 0)
		close(fd);
	if (same) {
		a->r->kept++;
		return 0;
	}
	return item(a, true, "%s: not archived: %s%s already exists and is another file (or a "
		    "link): remove it and archive again", path, BUNDLE_SYSROOT, path);
}

enum placed {
	PLACED,			/* copied */
	PLACED_EXISTS,		/* something is at the name already */
	PLACED_UNREADABLE,	/* reading the source failed: said as an item */
};

/* Copy @src to @name in @dirfd: a temporary file, then a rename that replaces nothing. */
static int place(struct archiver *a, int dirfd, const char *name, int src, const char *path)
{
	char tmp[sizeof(TMP_PREFIX) + 16];
	bool write_failed;
	int fd, ret;

	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%d", (int)getpid());
	unlinkat(dirfd, tmp, 0);	/* a crashed archive's; a link is removed, not followed */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return bundle_failed(a, -errno, path);
	ret = copy_fd(src, fd, &write_failed);
	if (!ret && fsync(fd))
		ret = -errno, write_failed = true;
	if (close(fd) && !ret)
		ret = -errno, write_failed = true;
	if (!ret && renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE))
		ret = -errno, write_failed = errno != EEXIST;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	if (!ret)
		return PLACED;
	if (write_failed)
		return bundle_failed(a, ret, path);
	if (ret == -EEXIST)
		return PLACED_EXISTS;
	ret = item(a, true, "%s: not archived: reading it failed: %s", path, strerror(-ret));
	return ret ? ret : PLACED_UNREADABLE;
}

/*
 * Which of the images mapped at @i's path (all of them, @ip's chain from @i) the file
 * open at @fd is; *@v says how sure, *@nth which of them it is (1: the first).
 */
static int match(const struct manifest *m, const struct image_paths *ip, int i, int fd,
		 enum image_verdict *v, int *nth, char *why, size_t len)
{
	int unchecked = -1, unchecked_nth = 0, k = 0;

	*v = IMAGE_CHANGED;
	for (int j = i; j >= 0; j = ip->next[j]) {
		enum image_verdict got = images_verify_fd(&m->images[j], fd, why, len);

		k++;
		if (got == IMAGE_SAME) {
			*v = got;
			*nth = k;
			return j;
		}
		if (got == IMAGE_UNCHECKED && unchecked < 0) {
			unchecked = j;
			unchecked_nth = k;
		}
	}
	if (unchecked >= 0) {
		*v = IMAGE_UNCHECKED;
		*nth = unchecked_nth;
		return unchecked;
	}
	if (k > 1)
		snprintf(why, len, "it is none of the %d files mapped at that path", k);
	return -1;
}

/* What became of the file once it was checked: copied, kept, or why not. */
static int record_outcome(struct archiver *a, int placed, int src, int dir, const char *base,
			  const char *path, enum image_verdict v)
{
	if (placed == PLACED_EXISTS)
		return check_existing(a, dir, base, src, path);
	if (placed != PLACED)
		return 0;
	a->r->copied++;
	if (v != IMAGE_UNCHECKED)
		return 0;
	a->r->unchecked++;
	return item(a, false, "%s: copied unchecked: no build-id, device or inode was recorded "
		    "for it to be held against", path);
}

/*
 * Files of the running system that are not what was mapped: /proc/self/exe or
 * /proc/self/environ, named by a crafted sideband, would be ptcollect's own
 * binary or environment; /sys and /dev hold no code either.
 */
static const char *pseudo_fs(const char *path)
{
	static const char *const roots[] = { "/proc", "/sys", "/dev" };

	for (size_t r = 0; r < sizeof(roots) / sizeof(roots[0]); r++) {
		size_t n = strlen(roots[r]);

		if (!strncmp(path, roots[r], n) && (path[n] == '/' || !path[n]))
			return roots[r];
	}
	return NULL;
}

static int archive_file(struct archiver *a, const struct manifest *m,
			const struct image_paths *ip, int i)
{
	const char *path = m->images[i].path, *base = NULL, *pseudo = pseudo_fs(path);
	int n = ip->count[i], src, dir, ret, k, nth = 0;
	enum image_verdict v;
	char why[512];

	if (pseudo)
		return item(a, true, "%s: not archived: a file under %s is the running system's, "
			    "not one a program maps from disk; a sideband that names it was not "
			    "recorded by the kernel", path, pseudo);
	src = file_open_input(AT_FDCWD, path, NULL);
	if (src < 0)
		return item(a, true, "%s: not archived: %s", path,
			    src == -ENOENT ? "it is gone" : strerror(-src));
	k = match(m, ip, i, src, &v, &nth, why, sizeof(why));
	if (k < 0) {
		close(src);
		return item(a, true, "%s: not archived: %s: it was replaced after it was mapped",
			    path, why);
	}
	dir = open_dirs(a->root, path, &base);
	if (dir < 0) {
		close(src);
		if (dir == -ENAMETOOLONG)
			return item(a, true, "%s: not archived: %s", path, strerror(-dir));
		if (dir != -ELOOP && dir != -ENOTDIR)
			return bundle_failed(a, dir, path);
		return item(a, true, "%s: not archived: something other than a directory is in "
			    "its way below %s", path, BUNDLE_SYSROOT);
	}
	ret = place(a, dir, base, src, path);
	if (ret >= 0)
		ret = record_outcome(a, ret, src, dir, base, path, v);
	if (!ret && n > 1)
		ret = item(a, true, "%s was mapped as %d different files (it was replaced while "
			   "it was traced): the sysroot holds the %d. of them, the one there now; "
			   "the code of the others will not decode", path, n, nth);
	close(dir);
	close(src);
	return ret;
}

/*
 * The kernel's text, when the kernel was traced and the bundle lacks it
 * (record without --kcore): from /proc/kcore, if the running kernel is the
 * one recorded (libipt decodes kernel code only from it: --raw).
 */
static int archive_kernel(struct archiver *a, struct manifest *m)
{
	struct error ke = { 0 };
	struct kimage k;
	int fd, ret;

	if (!m->kernel.start || m->kernel.kcore)
		return 0;
	if (!m->kernel.kallsyms)
		return item(a, true, "the kernel's text: not archived: the bundle has no kallsyms "
			    "to tell whether the running kernel is the one recorded");
	ret = kimage_same_kernel(a->dirfd, m->kernel.kallsyms, RUNNING_KALLSYMS, &k, &ke);
	if (ret)
		return item(a, true, "the kernel's text: not archived: %s%s", ke.why,
			    ret == -ESTALE ? "; record with --kcore to keep it" : "");
	unlinkat(a->dirfd, TMP_PREFIX "kcore", 0);
	fd = openat(a->dirfd, TMP_PREFIX "kcore", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0)
		return err_runtime(a->e, -errno, "%s/%s: %s", a->dir, BUNDLE_KCORE,
				   strerror(errno));
	ret = kimage_save_text(RUNNING_KCORE, fd, &k, &ke);
	if (close(fd) && !ret)
		ret = err_runtime(&ke, -errno, "%s", strerror(errno));
	if (!ret && renameat2(a->dirfd, TMP_PREFIX "kcore", a->dirfd, BUNDLE_KCORE,
			      RENAME_NOREPLACE))
		ret = err_runtime(&ke, -errno, "%s/%s: %s", a->dir, BUNDLE_KCORE, strerror(errno));
	if (ret) {
		unlinkat(a->dirfd, TMP_PREFIX "kcore", 0);
		return item(a, true, "the kernel's text: not archived: %s", ke.why);
	}
	a->r->kernel_text = true;
	m->kernel.kcore_base = k.text_start;
	return manifest_set(&m->kernel.kcore, BUNDLE_KCORE) ?
	       err_runtime(a->e, -ENOMEM, "out of memory") : 0;
}

/* The sysroot directory, made if missing; never a link. */
static int open_sysroot(struct archiver *a)
{
	if (mkdirat(a->dirfd, BUNDLE_SYSROOT, 0700) && errno != EEXIST)
		return bundle_failed(a, -errno, "");
	a->root = openat(a->dirfd, BUNDLE_SYSROOT, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			 O_CLOEXEC);
	if (a->root >= 0)
		return 0;
	if (errno != ENOTDIR && errno != ELOOP)
		return bundle_failed(a, -errno, "");
	err_hint(a->e, "archive writes only into a directory of the bundle itself; remove it "
		 "and archive again");
	return err_runtime(a->e, -ENOTDIR, "%s/%s is not a directory (a symbolic link or a "
			   "file)", a->dir, BUNDLE_SYSROOT);
}

int archive_bundle(int dirfd, const char *dir, struct manifest *m, struct archive_result *r,
		   struct error *e)
{
	struct archiver a = { .dirfd = dirfd, .dir = dir, .root = -1, .r = r, .e = e };
	struct image_paths ip = { 0 };
	int ret;

	memset(r, 0, sizeof(*r));
	ret = images_collect(dirfd, m, e);
	if (!ret && images_paths(m, &ip))
		ret = err_runtime(e, -ENOMEM, "out of memory");
	if (!ret)
		ret = open_sysroot(&a);
	for (int i = 0; !ret && i < m->nr_images; i++)
		if (ip.first[i] == i)	/* the first image of its path */
			ret = archive_file(&a, m, &ip, i);
	images_paths_free(&ip);
	if (!ret)
		ret = archive_kernel(&a, m);
	if (a.root >= 0)
		close(a.root);
	if (!ret && manifest_set(&m->sysroot, BUNDLE_SYSROOT))
		ret = err_runtime(e, -ENOMEM, "out of memory");
	if (!ret)
		ret = manifest_write(m, dirfd, e);
	return ret;
}

void archive_result_free(struct archive_result *r)
{
	for (int i = 0; i < r->nr_items; i++)
		free(r->items[i].msg);
	free(r->items);
	memset(r, 0, sizeof(*r));
}
