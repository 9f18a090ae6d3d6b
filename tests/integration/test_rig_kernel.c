// SPDX-License-Identifier: MIT
/*
 * The kernel rig's choice of kernel ABI (tests/kernel/README.md, "The pinned kernel"): the
 * pin while apt offers it, else the ABI Debian offers now, with a notice. `rig kernel` and
 * scripts/deps.sh run against a fake apt (apt-cache, apt-get, dpkg-query and sudo first in
 * PATH) whose offers each test writes.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

#define META_ABI "6.1.0-99-amd64"	/* what the fake linux-headers-amd64 depends on */
#define META_VER "6.1.999-1"

struct fake {
	char dir[64];		/* the fake tools; the cache is dir/cache */
	char path[128], apt[96], installed[96], log[96], cache[96];
	char env_path[1200], env_apt[128], env_inst[128], env_log[128], env_cache[128];
	char env_kernel[96];
	char *env[8];
};

static void put_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(chmod(path, mode), 0);
}

static void put_tool(const struct fake *fk, const char *name, const char *body)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", fk->dir, name);
	put_file(path, body, 0755);
}

/* Fake apt: FAKE_APT lists "PACKAGE VERSION" offers and "meta ABI"; FAKE_INSTALLED what
 * dpkg has; every apt call is logged to FAKE_LOG. */
static void fake_tools(const struct fake *fk)
{
	put_tool(fk, "apt-cache", "#!/bin/sh\necho \"apt-cache $*\" >>\"$FAKE_LOG\"\n"
		 "case $1 in\npolicy)\n\tshift\n\tfor p; do\n"
		 "\t\tv=$(awk -v p=\"$p\" '$1 == p { print $2 }' \"$FAKE_APT\")\n"
		 "\t\t[ -n \"$v\" ] || continue\n"
		 "\t\tprintf '%s:\\n  Installed: (none)\\n  Candidate: %s\\n' \"$p\" \"$v\"\n"
		 "\tdone ;;\ndepends)\n\ta=$(awk '$1 == \"meta\" { print $2 }' \"$FAKE_APT\")\n"
		 "\t[ -z \"$a\" ] || printf 'linux-headers-amd64\\n  Depends: linux-headers-%s\\n' "
		 "\"$a\" ;;\nesac\n");
	put_tool(fk, "apt-get", "#!/bin/sh\necho \"apt-get $*\" >>\"$FAKE_LOG\"\n");
	put_tool(fk, "sudo", "#!/bin/sh\n[ \"$1\" = -n ] && shift\n[ \"$1\" = -- ] && shift\n"
		 "exec \"$@\"\n");
	put_tool(fk, "dpkg-query", "#!/bin/sh\nfmt=${2#-f=}\n"
		 "v=$(awk -v p=\"$3\" '$1 == p { print $2 }' \"$FAKE_INSTALLED\")\n"
		 "[ -n \"$v\" ] || { echo \"dpkg-query: no packages found matching $3\" >&2; exit 1; }\n"
		 "printf '%s' \"$fmt\" | sed \"s/\\${db:Status-Abbrev}/ii /; "
		 "s/\\${Status}/install ok installed/; s/\\${Version}/$v/\"\n");
}

static void fake_setup(struct fake *fk, const char *offers, const char *installed)
{
	int n = 0;

	strcpy(fk->dir, "/tmp/ptc-rigk-XXXXXX");
	cr_assert_not_null(mkdtemp(fk->dir));
	snprintf(fk->apt, sizeof(fk->apt), "%s/offers", fk->dir);
	snprintf(fk->installed, sizeof(fk->installed), "%s/installed", fk->dir);
	snprintf(fk->log, sizeof(fk->log), "%s/log", fk->dir);
	snprintf(fk->cache, sizeof(fk->cache), "%s/cache", fk->dir);
	put_file(fk->apt, offers, 0644);
	put_file(fk->installed, installed, 0644);
	put_file(fk->log, "", 0644);
	fake_tools(fk);
	snprintf(fk->env_path, sizeof(fk->env_path), "PATH=%s:%s", fk->dir, getenv("PATH"));
	snprintf(fk->env_apt, sizeof(fk->env_apt), "FAKE_APT=%s", fk->apt);
	snprintf(fk->env_inst, sizeof(fk->env_inst), "FAKE_INSTALLED=%s", fk->installed);
	snprintf(fk->env_log, sizeof(fk->env_log), "FAKE_LOG=%s", fk->log);
	snprintf(fk->env_cache, sizeof(fk->env_cache), "RIG_CACHE=%s", fk->cache);
	snprintf(fk->env_kernel, sizeof(fk->env_kernel), "RIG_KERNEL=");
	fk->env[n++] = fk->env_path;
	fk->env[n++] = fk->env_apt;
	fk->env[n++] = fk->env_inst;
	fk->env[n++] = fk->env_log;
	fk->env[n++] = fk->env_cache;
	fk->env[n++] = fk->env_kernel;
	fk->env[n] = NULL;
}

static void fake_teardown(struct fake *fk)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fk->dir);
	cr_assert_eq(system(cmd), 0);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;

	cr_assert_not_null(f, "%s", path);
	if (getdelim(&buf, &cap, '\0', f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

/* The ABI pinned in the tree, e.g. "6.1.0-50-amd64". */
static char *pinned(void)
{
	char *path = run_srcpath("tests/kernel/KERNEL_VERSION"), *abi = slurp(path);

	abi[strcspn(abi, " \t\n")] = 0;
	cr_assert_gt(strlen(abi), 0);
	free(path);
	return abi;
}

static void rig_kernel(struct fake *fk, struct run_result *r)
{
	char *rig = run_srcpath("tests/kernel/rig");
	char *argv[] = { rig, "kernel", NULL };

	cr_assert_eq(run_argv(argv, fk->env, r), 0);
	free(rig);
}

static char *offers(const char *abi, const char *ver, bool meta)
{
	char *s;

	cr_assert_gt(asprintf(&s, "linux-image-%s %s\nlinux-headers-%s %s\n%s%s%s%s%s", abi, ver,
			      abi, ver, meta ? "linux-image-" META_ABI " " META_VER "\n" : "",
			      meta ? "linux-headers-" META_ABI " " META_VER "\n" : "",
			      meta ? "meta " : "", meta ? META_ABI : "", meta ? "\n" : ""), 0);
	return s;
}

Test(rig_kernel, pin_is_used_while_apt_offers_it)
{
	struct fake fk;
	struct run_result r;
	char *pin = pinned(), *o = offers(pin, "6.1.176-1", true), want[128], *log;

	fake_setup(&fk, o, "");
	rig_kernel(&fk, &r);
	snprintf(want, sizeof(want), "kernel=%s\nversion=6.1.176-1\n", pin);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(!strncmp(r.out, want, strlen(want)), "%s", r.out);
	cr_assert_null(strstr(r.err, "notice"), "%s", r.err);
	log = slurp(fk.log);
	cr_assert_null(strstr(log, "apt-get update"), "apt-get update ran: %s", log);
	free(log);
	run_free(&r);
	fake_teardown(&fk);
	free(o);
	free(pin);
}

static void expect_fallback(struct fake *fk, const char *preferred, const char *from)
{
	struct run_result r;
	char *log, *remembered, path[160];

	rig_kernel(fk, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(!strncmp(r.out, "kernel=" META_ABI "\nversion=" META_VER "\n",
			   strlen("kernel=" META_ABI "\nversion=" META_VER "\n")), "%s", r.out);
	cr_assert(strstr(r.err, "notice: apt does not offer the kernel ABI"), "%s", r.err);
	cr_assert(strstr(r.err, preferred) && strstr(r.err, META_ABI) && strstr(r.err, from),
		  "the notice names the ABIs and the pin: %s", r.err);
	log = slurp(fk->log);
	cr_assert(strstr(log, "apt-get update"), "no apt-get update before falling back: %s", log);
	cr_assert_null(strstr(strstr(log, "apt-get update") + 1, "apt-get update"),
		       "apt-get update ran twice: %s", log);
	snprintf(path, sizeof(path), "%s/kernel/fallback-%s", fk->cache, preferred);
	remembered = slurp(path);
	cr_assert_str_eq(remembered, META_ABI "\n");
	free(remembered);
	free(log);
	run_free(&r);
}

Test(rig_kernel, pin_gone_falls_back_to_the_abi_debian_offers_now)
{
	struct fake fk;
	char *pin = pinned(), *o = offers("6.1.0-1-amd64", "6.1.4-1", true);

	fake_setup(&fk, o, "");
	expect_fallback(&fk, pin, "KERNEL_VERSION");
	fake_teardown(&fk);
	free(o);
	free(pin);
}

Test(rig_kernel, rig_kernel_env_gone_falls_back_too)
{
	struct fake fk;
	char *pin = pinned(), *o = offers(pin, "6.1.176-1", true);

	fake_setup(&fk, o, "");
	snprintf(fk.env_kernel, sizeof(fk.env_kernel), "RIG_KERNEL=6.1.0-2-amd64");
	expect_fallback(&fk, "6.1.0-2-amd64", "RIG_KERNEL");
	fake_teardown(&fk);
	free(o);
	free(pin);
}

/* Once fallen back and set up, later runs ask apt nothing, and still say so. */
Test(rig_kernel, a_remembered_fallback_needs_no_apt)
{
	struct fake fk;
	struct run_result r;
	char *pin = pinned(), *o = offers("6.1.0-1-amd64", "6.1.4-1", true), path[160], *log;

	fake_setup(&fk, o, "linux-headers-" META_ABI " " META_VER "\n");
	expect_fallback(&fk, pin, "KERNEL_VERSION");
	snprintf(path, sizeof(path), "%s/kernel/" META_ABI, fk.cache);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/kernel/" META_ABI "/vmlinuz.version", fk.cache);
	put_file(path, META_VER "\n", 0644);
	put_file(fk.log, "", 0644);
	rig_kernel(&fk, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.out, "kernel=" META_ABI "\n"), "%s", r.out);
	cr_assert(strstr(r.err, "earlier setup chose") && strstr(r.err, pin), "%s", r.err);
	log = slurp(fk.log);
	cr_assert_str_eq(log, "", "apt was asked: %s", log);
	free(log);
	run_free(&r);
	fake_teardown(&fk);
	free(o);
	free(pin);
}

Test(rig_kernel, nothing_offered_is_an_error_with_the_remedy)
{
	struct fake fk;
	struct run_result r;

	fake_setup(&fk, "", "");
	rig_kernel(&fk, &r);
	cr_assert_eq(r.status, 126, "%s%s", r.out, r.err);
	cr_assert_str_eq(r.out, "");
	cr_assert(strstr(r.err, "is not available from apt") &&
		  strstr(r.err, "apt-cache policy linux-headers-amd64") &&
		  strstr(r.err, "KERNEL_VERSION"), "%s", r.err);
	run_free(&r);
	fake_teardown(&fk);
}

/* scripts/deps.sh installs the headers of the ABI the rig will use. */
Test(rig_kernel, deps_installs_the_fallback_headers)
{
	struct fake fk;
	struct run_result r;
	char *deps = run_srcpath("scripts/deps.sh"), *pin = pinned(), want[128];
	char *o = offers("6.1.0-1-amd64", "6.1.4-1", true);
	char *argv[] = { "sh", deps, NULL }, dry[] = "PTC_DEPS_DRYRUN=1";

	fake_setup(&fk, o, "");
	fk.env[6] = dry;
	fk.env[7] = NULL;
	cr_assert_eq(run_argv(argv, fk.env, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert(strstr(r.err, " linux-headers-" META_ABI), "%s", r.err);
	snprintf(want, sizeof(want), " linux-headers-%s", pin);
	cr_assert_null(strstr(r.err, want), "%s", r.err);
	cr_assert(strstr(r.err, "notice: apt does not offer the pinned kernel ABI"), "%s", r.err);
	run_free(&r);
	fake_teardown(&fk);
	free(o);
	free(pin);
	free(deps);
}
