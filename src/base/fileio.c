// SPDX-License-Identifier: MIT
/* Whole-file reads of regular files, and writes that finish. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

int file_open_input(int dirfd, const char *path, struct error *e)
{
	struct stat st;
	int fd, ret;

	/* O_NONBLOCK: opening a FIFO for reading must not wait for a writer. */
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		return err_usage_code(e, ret, "%s: %s", path, strerror(-ret));
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return err_runtime(e, ret, "%s: %s", path, strerror(-ret));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return err_usage_code(e, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL,
				      "%s: not a regular file (%s)", path,
				      S_ISDIR(st.st_mode) ? "a directory" :
				      S_ISFIFO(st.st_mode) ? "a FIFO" :
				      S_ISCHR(st.st_mode) ? "a character device" :
				      S_ISSOCK(st.st_mode) ? "a socket" : "a special file");
	}
	if (fcntl(fd, F_SETFL, 0)) {
		ret = -errno;
		close(fd);
		return err_runtime(e, ret, "%s: %s", path, strerror(-ret));
	}
	return fd;
}

int fd_read_all(int fd, size_t max, char **bufp, size_t *lenp)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap + 1), *n;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (len == cap) {
			if (cap > max) {
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			n = realloc(buf, cap + 1);
			if (!n) {
				free(buf);
				return -ENOMEM;
			}
			buf = n;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int ret = -errno;

			free(buf);
			return ret;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	if (len > max) {
		free(buf);
		return -EFBIG;
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

int file_read_all(int dirfd, const char *path, size_t max, char **buf, size_t *len,
		  struct error *e)
{
	int fd = file_open_input(dirfd, path, e), ret;

	if (fd < 0)
		return fd;
	ret = fd_read_all(fd, max, buf, len);
	close(fd);
	if (ret == -EFBIG)
		return err_usage_code(e, ret, "%s: larger than %zu bytes: not the file "
				      "expected here", path, max);
	if (ret)
		return err_runtime(e, ret, "%s: %s", path, strerror(-ret));
	return 0;
}

int file_map_input(int dirfd, const char *path, bool keep_fd, struct file_map *m,
		   struct error *e)
{
	int fd = file_open_input(dirfd, path, e), ret = 0;
	struct stat st;

	m->p = NULL;
	m->len = 0;
	m->fd = -1;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return err_runtime(e, ret, "%s: %s", path, strerror(-ret));
	}
	if (st.st_size) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED) {
			ret = -errno;
			close(fd);
			return err_runtime(e, ret, "%s: %s", path, strerror(-ret));
		}
		m->p = p;
		m->len = (size_t)st.st_size;
	}
	if (keep_fd && m->p)
		m->fd = fd;
	else
		close(fd);
	return 0;
}

void file_unmap(struct file_map *m)
{
	/* Only a mapping has a descriptor: a zeroed map's fd 0 is not closed. */
	if (!m->p)
		return;
	munmap(m->p, m->len);
	if (m->fd >= 0)
		close(m->fd);
	m->p = NULL;
	m->len = 0;
	m->fd = -1;
}

void map_drop_behind(const void *base, size_t cur, size_t *dropped)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), b = (uintptr_t)base, from, to;

	if (cur < *dropped + 2 * (size_t)MAP_KEEP_BEHIND)
		return;
	from = (b + *dropped) & ~(page - 1);
	to = (b + cur - MAP_KEEP_BEHIND) & ~(page - 1);
	if (to > from && !madvise((void *)from, to - from, MADV_DONTNEED))
		*dropped = to - b;
}

uint64_t file_next_data(int fd, uint64_t off)
{
	off_t d;

	if (fd < 0 || off > (uint64_t)INT64_MAX)
		return off;
	d = lseek(fd, (off_t)off, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? UINT64_MAX : off;
	return (uint64_t)d > off ? (uint64_t)d : off;
}

uint64_t file_next_hole(int fd, uint64_t off)
{
	off_t h;

	if (fd < 0 || off > (uint64_t)INT64_MAX)
		return off;
	h = lseek(fd, (off_t)off, SEEK_HOLE);
	return h < 0 || (uint64_t)h < off ? off : (uint64_t)h;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (!w)
			return -EIO;	/* write(2) makes no progress: nothing more will go */
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * Can names @len bytes long be made in @dir, as the recording will make them
 * (the bundle's directory, the old one's aside name, --ready's temporary
 * file)? Tried, not guessed: a directory of that length's name is made there and
 * removed at once. Permissions, a read-only mount, /proc, /sys and a name
 * too long all fail here as they would in the recording. 0, or -errno.
 */
int fileio_try_create_in(const char *dir, size_t len)
{
	char name[NAME_MAX + 2];
	int n = snprintf(name, sizeof(name), ".ptcollect-probe-%d-", (int)getpid());
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (len > NAME_MAX + 1)
		len = NAME_MAX + 1;
	while ((size_t)n < len)
		name[n++] = 'x';
	name[n] = '\0';
	if (mkdirat(fd, name, 0700))
		ret = -errno;
	else
		unlinkat(fd, name, AT_REMOVEDIR);
	close(fd);
	return ret;
}
