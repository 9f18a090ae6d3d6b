// SPDX-License-Identifier: MIT
/* record --user: names and numbers resolved before the fork; privileges dropped for good. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user.h"

Test(user, a_name_and_a_number_resolve_and_a_stranger_is_its_own_group)
{
	struct error e = { 0 };
	struct user u;

	cr_assert_eq(user_resolve("root", &u, &e), 0, "%s", e.why);
	cr_expect_eq(u.uid, 0);
	cr_expect_str_eq(u.name, "root");
	cr_expect_geq(u.nr_groups, 1);
	cr_assert_eq(user_resolve("0", &u, &e), 0, "%s", e.why);
	cr_expect_str_eq(u.name, "root", "a known uid takes its name");
	cr_assert_eq(user_resolve("4000321", &u, &e), 0, "%s", e.why);
	cr_expect_eq(u.uid, 4000321);
	cr_expect_eq(u.gid, 4000321);
	cr_expect_eq(u.nr_groups, 1);
	cr_expect_eq(u.groups[0], 4000321);
}

Test(user, bad_users_are_usage_errors)
{
	static const char *const bad[] = { "", "ptc-no-such-user", "12x", "-1", "4294967295",
		"a-name-that-is-much-longer-than-any-user-name-can-ever-be-on-linux" };
	struct user u;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct error e = { 0 };

		cr_expect_neq(user_resolve(bad[i], &u, &e), 0, "'%s' resolved", bad[i]);
		cr_expect(e.usage, "'%s': not a usage error", bad[i]);
	}
}

/* Without the right to change ids, becoming another user fails and says so. */
Test(user, becoming_a_user_without_privilege_fails)
{
	struct user u = { .uid = 4000321, .gid = 4000321, .groups = { 4000321 }, .nr_groups = 1 };
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		if (!geteuid() && setuid(65534))
			_exit(3);
		_exit(user_become(&u) == -EPERM ? 0 : 1);
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}
