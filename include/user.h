/* SPDX-License-Identifier: MIT */
/*
 * Another user for the workload (record --user): resolved once, before
 * anything runs (name or number, primary group, supplementary groups from
 * the group database), and become in the forked workload before its exec,
 * where no name service may be asked.
 */
#ifndef PTC_USER_H
#define PTC_USER_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

#define USER_MAX_GROUPS 256

struct user {
	char name[64];		/* as the user database has it, or the number given */
	uid_t uid;
	gid_t gid;
	gid_t groups[USER_MAX_GROUPS];	/* supplementary, the primary among them */
	int nr_groups;
};

/*
 * Resolve @spec, a user name or a numeric uid. A number with no entry in
 * the user database is that uid, with the group of the same number and no
 * other group. Returns 0, or a usage error naming @spec.
 */
int user_resolve(const char *spec, struct user *u, struct error *e);

/* Become @u (groups, gid, then uid; checked). 0 or -errno. For a forked child. */
int user_become(const struct user *u);

#endif
