/* SPDX-License-Identifier: MIT */
/* The files a recording's sideband maps: what a decoder needs besides the trace. */
#ifndef PTC_IMAGES_H
#define PTC_IMAGES_H

#include "error.h"
#include "manifest.h"

/*
 * Read the sideband files of @m in the bundle @dirfd and list every file
 * their MMAP/MMAP2 records map in @m->images, each once, with its build-id
 * as it is on disk now. Files that are gone are listed without one.
 */
int images_collect(int dirfd, struct manifest *m, struct error *e);

#endif
