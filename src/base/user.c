// SPDX-License-Identifier: MIT
/* record --user: who the workload runs as, resolved before the fork and become after it. */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user.h"

static bool numeric(const char *s, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return !errno && !*end && *v < UINT_MAX;
}

int user_resolve(const char *spec, struct user *u, struct error *e)
{
	struct passwd *pw;
	unsigned long id;
	bool num = numeric(spec, &id);
	int n = USER_MAX_GROUPS;

	memset(u, 0, sizeof(*u));
	if (!*spec || strlen(spec) >= sizeof(u->name))
		return err_usage(e, "'%s' is not a user name or number", spec);
	errno = 0;
	pw = num ? getpwuid((uid_t)id) : getpwnam(spec);
	if (!pw && !num)
		return err_usage_code(e, -ENOENT, "no user '%s'%s%s", spec, errno ? ": " : "",
				      errno ? strerror(errno) : "");
	if (!pw) {
		/* A uid nobody named: its own group, nothing more. */
		snprintf(u->name, sizeof(u->name), "%lu", id);
		u->uid = (uid_t)id;
		u->gid = (gid_t)id;
		u->groups[0] = u->gid;
		u->nr_groups = 1;
		return 0;
	}
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	if (getgrouplist(pw->pw_name, pw->pw_gid, u->groups, &n) < 0)
		return err_usage(e, "user '%s' is in more than %d groups", spec, USER_MAX_GROUPS);
	u->nr_groups = n;
	return 0;
}

int user_become(const struct user *u)
{
	if (setgroups((size_t)u->nr_groups, u->groups) || setgid(u->gid) || setuid(u->uid))
		return -errno;
	/* Nothing may be left of root: a uid of 0 kept anywhere could be taken back. */
	if (getuid() != u->uid || geteuid() != u->uid || getgid() != u->gid ||
	    getegid() != u->gid || (u->uid && !setuid(0)))
		return -EPERM;
	return 0;
}
