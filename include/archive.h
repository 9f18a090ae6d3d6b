/* SPDX-License-Identifier: MIT */
/*
 * A self-contained bundle: every file the sideband maps copied into the
 * bundle's sysroot/ at its path, as libipt's perf-copy-mapped-files does, so
 * that ptxed decodes the bundle with --pevent:sysroot on any machine. A file
 * is copied once, and only when it is the file that was mapped: its
 * build-id is the one the records carry (else its device and inode are the
 * ones they name). A file that changed is refused by name, and the rest is
 * copied. The kernel's text is taken too when the kernel was traced, the
 * bundle lacks it, and the running kernel is the one recorded. The vdso is
 * in the bundle from the recording (sysroot/vdso-x64.so, given to ptxed with
 * --pevent:vdso-x64, as the sysroot does not apply to [vdso]).
 *
 * Nothing in the bundle is written through a link: directories are made
 * 0700 and opened with O_NOFOLLOW, files are created 0600 with O_EXCL under
 * a temporary name and renamed into place without replacing anything.
 */
#ifndef PTC_ARCHIVE_H
#define PTC_ARCHIVE_H

#include <stdbool.h>

#include "error.h"
#include "manifest.h"

struct archive_item {
	char *msg;		/* a sentence that names the file */
	bool refused;		/* not in the sysroot; else it was copied, with this note */
};

struct archive_result {
	unsigned int copied;	/* files copied into the sysroot now */
	unsigned int kept;	/* already there from an earlier archive, the same bytes */
	unsigned int unchecked;	/* copied with nothing recorded to hold them against */
	unsigned int refused;	/* not archived: changed, gone, unreadable, or in the way */
	bool kernel_text;	/* the kernel's text was taken now */
	struct archive_item *items;
	int nr_items;
};

/*
 * Archive the bundle @dirfd (@dir names it in messages), whose manifest is
 * @m: list its mapped files again from the sideband (images_collect()), copy
 * them, take the kernel's text if it is missing, and write the manifest with
 * "sysroot" set. Files that are not archived are items of @r, not errors.
 * Returns 0, or a negative errno with @e when the work could not go on (the
 * sideband cannot be read, the sysroot cannot be written, the disk is full).
 */
int archive_bundle(int dirfd, const char *dir, struct manifest *m, struct archive_result *r,
		   struct error *e);
void archive_result_free(struct archive_result *r);

#endif
