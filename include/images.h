/* SPDX-License-Identifier: MIT */
/*
 * The files a recording's sideband maps: what a decoder needs besides the
 * trace, each with the build-id it had when it was mapped.
 */
#ifndef PTC_IMAGES_H
#define PTC_IMAGES_H

#include <stdbool.h>

#include "error.h"
#include "manifest.h"

/*
 * Read the sideband files of @m in the bundle @dirfd and list in @m->images
 * (replacing what was there) every file their user-space MMAP/MMAP2 records
 * map: once per path and build-id, the build-id taken from the records
 * (MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID: read by the kernel, or by
 * ptcollect for proc.pevent, when the file was mapped), NULL when no record
 * of that path carries one. A path listed twice was replaced while it was
 * traced. Names that are no files ([vdso], //anon, "... (deleted)") are left
 * out.
 */
int images_collect(int dirfd, struct manifest *m, struct error *e);

/*
 * Whether the file at @m->images[@i]'s path is now the one that was mapped:
 * a warning in @w for each file whose build-id on disk is not the recorded
 * one (it was replaced, and `archive` will refuse it), and for each path
 * that was mapped with two build-ids.
 */
void images_check(const struct manifest *m, struct warnings *w);

enum image_verdict {
	IMAGE_SAME,		/* its build-id (else device and inode) is the recorded one */
	IMAGE_CHANGED,		/* it is another file now */
	IMAGE_UNCHECKED,	/* nothing was recorded to hold it against */
};

/* Whether the file open at @fd is @img as it was mapped; for IMAGE_CHANGED @why says how. */
enum image_verdict images_verify_fd(const struct mimage *img, int fd, char *why, size_t len);

/*
 * The images grouped by path (a path mapped as two files was replaced while
 * it was traced), built in O(n log n) for the lists of 100,000 files a
 * long recording has. For image i: @first[i] the lowest index of its path,
 * @next[i] the next higher one (-1 after the last), @count[i] how many.
 */
struct image_paths {
	int *first;
	int *next;
	int *count;
};

/* Fill @ip for @m's images: 0, or -ENOMEM. */
int images_paths(const struct manifest *m, struct image_paths *ip);
void images_paths_free(struct image_paths *ip);

/* Whether @path names a file that `archive` may place below the sysroot. */
bool images_path_ok(const char *path);

#endif
