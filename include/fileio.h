/* SPDX-License-Identifier: MIT */
/*
 * Reading inputs and writing outputs the same way everywhere: an input is
 * opened without blocking and must be a regular file (a FIFO given as a file
 * never hangs us), a file is read whole up to a limit, and a write goes on
 * through EINTR and short counts until every byte is written or it fails.
 */
#ifndef PTC_FILEIO_H
#define PTC_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/*
 * Open @path (relative to @dirfd, AT_FDCWD for the working directory) for
 * reading. Refused with a usage error when it is not a regular file.
 * Returns the descriptor, or a negative errno with @e.
 */
int file_open_input(int dirfd, const char *path, struct error *e);

/*
 * Read all of @path into a malloc'd buffer (NUL-terminated, *@len bytes
 * without the NUL). Files under /proc that report size 0 are read to EOF.
 * More than @max bytes is an error. Returns 0 or a negative errno with @e.
 */
int file_read_all(int dirfd, const char *path, size_t max, char **buf, size_t *len,
		  struct error *e);
/* The same from an open descriptor (read from its current offset). */
int fd_read_all(int fd, size_t max, char **buf, size_t *len);

/*
 * All of @path (relative to @dirfd), opened as file_open_input() opens it and mapped
 * for reading (MAP_PRIVATE): @m->len is the file's size, @m->p NULL for an empty file.
 * @keep_fd: the descriptor stays open in @m->fd (a mapped file's only: -1 when @m->p is
 * NULL); else it is closed and @m->fd is -1. 0, or a negative errno with @e.
 */
struct file_map {
	void *p;
	size_t len;
	int fd;
};
int file_map_input(int dirfd, const char *path, bool keep_fd, struct file_map *m,
		   struct error *e);
/* Unmap @m and close its descriptor, if it maps a file (a zeroed @m: nothing). */
void file_unmap(struct file_map *m);

/*
 * A file mapping read once, front to back (a trace or a sideband file): its
 * pages before @cur, less MAP_KEEP_BEHIND, are dropped from *@dropped on (both
 * offsets from @base; *@dropped is advanced), so that resident memory stays
 * bounded whatever the file's size. Only for a MAP_PRIVATE mapping of a file
 * that is never written: a dropped page is read from the file again if touched.
 */
#define MAP_KEEP_BEHIND (1u << 20)
void map_drop_behind(const void *base, size_t cur, size_t *dropped);

/*
 * Where the data of @fd resumes at or after @off: past a hole of a sparse file
 * (SEEK_DATA), which holds zeroes only, no read needed. @off itself when @fd has no
 * hole there (or cannot tell), UINT64_MAX when the rest of the file is a hole.
 */
uint64_t file_next_data(int fd, uint64_t off);
/*
 * Where the next hole of @fd starts at or after @off (SEEK_HOLE): the file's end when it
 * has none; @off when it cannot tell.
 */
uint64_t file_next_hole(int fd, uint64_t off);

/* Write all @len bytes; EINTR and short writes are retried. 0 or -errno. */
int write_all(int fd, const void *buf, size_t len);

/*
 * Can names @len bytes long be made in @dir? Tried, not guessed: a directory
 * of that length's name is made there and removed at once (permissions, a
 * read-only mount, /proc, /sys, a name too long). 0, or -errno.
 */
int fileio_try_create_in(const char *dir, size_t len);

#endif
