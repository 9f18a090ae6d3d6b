/* SPDX-License-Identifier: MIT */
/*
 * A directory tree removed without a shell (no path to quote), for the tests and for the
 * fuzz targets, which do not link Criterion or this folder's objects: so, inline here.
 */
#ifndef PTC_TEST_TREERM_H
#define PTC_TEST_TREERM_H

#include <ftw.h>
#include <unistd.h>

static inline int treerm_one(const char *path, const struct stat *st, int type,
			     struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

/* @dir and all below it, depth first, links not followed: 0, or -1 and errno. */
static inline int tree_remove(const char *dir)
{
	return nftw(dir, treerm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
