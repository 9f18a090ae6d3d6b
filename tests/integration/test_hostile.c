// SPDX-License-Identifier: MIT
/*
 * Issue 22: hostile input and a hostile process state (a umask, a reader
 * that has gone, a mount inside an old bundle, a name that is the working
 * directory), each with the words and exit status a user must see now.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bundle.h"
#include "oracle.h"
#include "perfgen.h"
#include "run.h"
#include "suitewatch.h"
#include "tempfile.h"
#include "testbundle.h"
#include "workload.h"

#define HASE_DATA "traces/hase-loopy-skylake/perf.data"

static char *base;

static void make_base(void)
{
	suitewatch(60);
	base = temp_dir("ptc-hostile");
}

static void remove_base(void)
{
	temp_dir_remove(base);
}

TestSuite(hostile, .init = make_base, .fini = remove_base);

static char *in_base(const char *name)
{
	return temp_path(base, name);
}

/* `sh -c SCRIPT` with $0 = ptcollect and $1... = @args (NULL-terminated). */
static void sh_run_env(char **env, const char *script, const char *const *args,
		       struct run_result *r)
{
	const char *argv[24] = { "sh", "-c", script, run_bin() };
	int n = 4;

	for (; args && *args && n < 23; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	cr_assert_eq(run_argv((char *const *)argv, env, r), 0);
}

static void sh_run(const char *script, const char *const *args, struct run_result *r)
{
	sh_run_env(NULL, script, args, r);
}

/* The hase perf.data imported as @dir (no vdso: its decode has errors). */
static void import_hase(const char *dir)
{
	char *data = run_shared(HASE_DATA);
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "import", data, dir, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	free(data);
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/* ---- 12: the bundle's modes are bundle(5)'s, whatever the umask -------------------------- */

static void expect_modes(const char *dir)
{
	struct run_result r;
	const char *args[] = { dir, NULL };

	/* Every directory 0700, every file 0600: find prints what is not. */
	sh_run("find \"$1\" \\( -type d ! -perm 0700 \\) -o \\( -type f ! -perm 0600 \\) "
	       "-printf '%m %p\\n'", args, &r);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_empty(r.out, "modes that are not 0700/0600:\n%s", r.out);
	run_free(&r);
}

Test(hostile, the_bundle_is_0700_and_0600_whatever_the_umask)
{
	static const char *const masks[] = { "0200", "0777", "0000", "0022" };
	char *data = run_shared(HASE_DATA);

	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		char name[32], *dir, script[64];
		struct run_result r;
		const char *args[4];

		snprintf(name, sizeof(name), "umask-%s", masks[i]);
		dir = in_base(name);
		args[0] = data;
		args[1] = dir;
		args[2] = NULL;
		snprintf(script, sizeof(script), "umask %s; exec \"$0\" import \"$1\" \"$2\"",
			 masks[i]);
		sh_run(script, args, &r);
		cr_assert_eq(r.status, 0, "umask %s: %s", masks[i], r.err);
		run_free(&r);
		expect_modes(dir);
		free(dir);
	}
	free(data);
}

/* ---- 16: decode errors and a full stdout: exit 1, said --------------------------------- */

Test(hostile, decode_stats_to_a_full_stdout_with_decode_errors_exits_1_and_says_so)
{
	char *dir = in_base("hase");
	const char *args[] = { dir, NULL };
	struct run_result r;

	import_hase(dir);
	sh_run("exec \"$0\" decode -q \"$1\" --stats >/dev/full", args, &r);
	cr_expect_eq(r.status, 1, "exit %d: %s", r.status, r.err);
	cr_expect_eq(count(r.err, "cannot write the results to standard output"), 1, "%s",
		     r.err);
	run_free(&r);
	free(dir);
}

/*
 * Each command that prints a lot, to a full stdout: exit 1 and the write's own error,
 * "No space left on device" (was: errno read after the flush, whatever came since).
 */
Test(hostile, a_full_stdout_is_said_with_the_writes_own_error_by_every_command_that_prints_a_lot)
{
	static const char *const scripts[] = {
		"exec \"$0\" decode -q \"$1\" >/dev/full",
		"exec \"$0\" decode -q --json \"$1\" >/dev/full",
		"exec \"$0\" decode -q --stats \"$1\" >/dev/full",
		"exec \"$0\" dump \"$1/cpu2.pt\" >/dev/full",
		"exec \"$0\" dump --json \"$1/cpu2.pevent\" >/dev/full",
		"exec \"$0\" report -q \"$1\" >/dev/full",
		"exec \"$0\" report -q --json \"$1\" >/dev/full",
		"exec \"$0\" info --json \"$1\" >/dev/full",
		"exec \"$0\" info \"$1\" >/dev/full",
	};
	char *dir = in_base("hase-full");
	const char *args[] = { dir, NULL };

	import_hase(dir);
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		struct run_result r;

		sh_run(scripts[i], args, &r);
		cr_expect_eq(r.status, 1, "%s: exit %d: %s", scripts[i], r.status, r.err);
		cr_expect(strstr(r.err, "cannot write the ") &&
			  strstr(r.err, "No space left on device"), "%s: %s", scripts[i], r.err);
		run_free(&r);
	}
	free(dir);
}

/* ---- 18: help -h is help on help --------------------------------------------------------- */

Test(hostile, help_h_and_help_help_show_helps_usage)
{
	static const char *const opts[] = { "-h", "--help", "help" };

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		struct run_result r;

		cr_assert_eq(run_ptcollect(NULL, &r, "help", opts[i], NULL), 0);
		cr_expect_eq(r.status, 0, "help %s: exit %d: %s", opts[i], r.status, r.err);
		cr_expect(strstr(r.out, "usage: ptcollect help [COMMAND]"), "help %s: %s", opts[i],
			  r.out);
		cr_expect_str_empty(r.err, "help %s: %s", opts[i], r.err);
		run_free(&r);
	}
}

/* ---- 1: --force and a filesystem mounted inside the old bundle --------------------------- */

/* A private mount namespace for this test's process and its children, or a skip. */
static void private_mounts(void)
{
	if (geteuid())
		cr_skip_test("bind mounts need root");
	if (unshare(CLONE_NEWNS))
		cr_skip_test("unshare(CLONE_NEWNS): %s", strerror(errno));
	cr_assert_eq(mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL), 0, "%s",
		     strerror(errno));
}

/* @host with one file in it, bound at @at. */
static void bind_host(const char *host, const char *at)
{
	char *f;
	int fd;

	cr_assert_eq(mkdir(host, 0700), 0, "%s", strerror(errno));
	cr_assert(asprintf(&f, "%s/precious", host) > 0);
	fd = open(f, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	free(f);
	cr_assert_eq(mkdir(at, 0700), 0, "%s: %s", at, strerror(errno));
	cr_assert_eq(mount(host, at, NULL, MS_BIND, NULL), 0, "%s", strerror(errno));
}

static void expect_host_kept(const char *host)
{
	char *f;

	cr_assert(asprintf(&f, "%s/precious", host) > 0);
	cr_expect_eq(access(f, F_OK), 0, "%s was removed", f);
	free(f);
}

Test(hostile, force_leaves_a_filesystem_mounted_inside_the_old_bundle)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *b = in_base("old"), *host = in_base("host"), *at, **env;
	struct bundle *nb = NULL;
	struct error e = { 0 };
	struct oracle_env oe;
	struct run_result r;

	private_mounts();
	testbundle_write(b, &pc, true);
	cr_assert(asprintf(&at, "%s/sysroot", b) > 0);
	cr_assert_eq(mkdir(at, 0700), 0);
	free(at);
	cr_assert(asprintf(&at, "%s/sysroot/host", b) > 0);
	bind_host(host, at);
	/* The plan, which --dry-run shows, refuses it by name. */
	env = oracle_fixture_env(&oe, "skylake");
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--force", "-o", b, "--",
				   "true", NULL), 0);
	cr_expect_eq(r.status, 2, "exit %d: %s%s", r.status, r.out, r.err);
	cr_expect(strstr(r.err, "sysroot/host is a mount point"), "%s", r.err);
	run_free(&r);
	/* The recording's own step refuses it too, and its removal never reaches it. */
	if (!bundle_create(&nb, b, true, &e)) {
		bundle_begun(nb, &e);
		bundle_free(nb);
		cr_expect_fail("bundle_create replaced a bundle with a mount inside");
	} else {
		cr_expect_eq(e.code, -EXDEV, "%s", e.why);
	}
	expect_host_kept(host);
	cr_expect_eq(umount(at), 0);
	free(at);
	free(host);
	free(b);
}

/* A bundle being discarded (a recording that failed) keeps what was mounted in it meanwhile. */
Test(hostile, a_discarded_bundle_leaves_a_filesystem_mounted_inside_it)
{
	char *b = in_base("new"), *host = in_base("host2"), *at;
	struct bundle *nb;
	struct error e = { 0 };

	private_mounts();
	cr_assert_eq(bundle_create(&nb, b, false, &e), 0, "%s", e.why);
	cr_assert(asprintf(&at, "%s/mnt", b) > 0);
	bind_host(host, at);
	bundle_discard(nb);
	bundle_free(nb);
	expect_host_kept(host);
	cr_expect_eq(umount(at), 0);
	free(at);
	free(host);
	free(b);
}

/* ---- 2: --force -o names the working directory, or a directory it is in ------------------ */

Test(hostile, force_refuses_the_working_directory_and_its_ancestors_by_any_name)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *b = in_base("cwd"), *lnk = in_base("lnk"), *sub, *via, **env;
	struct oracle_env oe;

	testbundle_write(b, &pc, true);
	cr_assert(asprintf(&sub, "%s/sysroot", b) > 0);
	cr_assert_eq(mkdir(sub, 0700), 0);
	cr_assert_eq(symlink(b, lnk), 0);
	cr_assert(asprintf(&via, "%s/sysroot", lnk) > 0);
	env = oracle_fixture_env(&oe, "skylake");
	/* -o as $PWD in the bundle, as the bundle from below it, and as $PWD through a link. */
	for (int i = 0; i < 3; i++) {
		const char *where = i ? sub : b, *o = i == 2 ? via : b;
		const char *args[] = { where, o, NULL };
		struct run_result r;

		sh_run_env(env, "cd \"$1\" && exec \"$0\" record --dry-run --force -o \"$2\" -- "
			   "true", args, &r);
		cr_expect_eq(r.status, 2, "-o %s in %s: exit %d: %s%s", o, where, r.status, r.out,
			     r.err);
		cr_expect(strstr(r.err, "not an existing one such as the working directory"),
			  "-o %s in %s: %s", o, where, r.err);
		run_free(&r);
	}
	free(via);
	free(lnk);
	free(sub);
	free(b);
}

/* ---- 19: import's DIR: as record's -o is, without naming -o ------------------------------ */

/* @err names the option -o (a word of its own: not the "-o" of a name like "hostile-oX1"). */
static bool names_option_o(const char *err)
{
	for (const char *p = strstr(err, "-o"); p; p = strstr(p + 1, "-o"))
		if ((p == err || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[2]))
			return true;
	return false;
}

Test(hostile, import_refuses_a_dir_without_parent_or_name_as_bad_input_in_its_own_words)
{
	char *data = run_shared(HASE_DATA), *orphan = in_base("none/dir");
	static const char *const names[] = { NULL, "" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *dir = names[i] ? names[i] : orphan;
		struct run_result r;

		cr_assert_eq(run_ptcollect(NULL, &r, "import", data, dir, NULL), 0);
		cr_expect_eq(r.status, 2, "'%s': exit %d: %s", dir, r.status, r.err);
		cr_expect(!names_option_o(r.err) && !strstr(r.err, "meanwhile"), "'%s': %s", dir,
			  r.err);
		cr_expect(strstr(r.err, names[i] ? "not a name for a new directory" :
				 "the directory"), "'%s': %s", dir, r.err);
		cr_expect(names[i] || strstr(r.err, "does not exist"), "'%s': %s", dir, r.err);
		run_free(&r);
	}
	free(orphan);
	free(data);
}

/* ---- 10: --dry-run says what the recording will do -------------------------------------- */

/* record --dry-run @opt @arg (with -o a new name when @opt is --ready): exit 2, and @words. */
static void expect_dry_run_refuses(const char *opt, const char *arg, const char *words)
{
	char *o = in_base("dry-new"), **env;
	struct oracle_env oe;
	struct run_result r;

	env = oracle_fixture_env(&oe, "skylake");
	if (!strcmp(opt, "-o"))
		cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-o", arg, "--", "true",
					   NULL), 0);
	else
		cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "-o", o, opt, arg, "--",
					   "true", NULL), 0);
	cr_expect_eq(r.status, 2, "%s %s: exit %d: %s%s", opt, arg, r.status, r.out, r.err);
	cr_expect(strstr(r.err, words), "%s %s: %s", opt, arg, r.err);
	cr_expect(!strstr(r.err, "ptcollect-probe"), "the probe's name shows: %s", r.err);
	run_free(&r);
	free(o);
}

Test(hostile, dry_run_refuses_output_in_proc_and_sys_as_the_recording_would)
{
	expect_dry_run_refuses("-o", "/proc/ptc-hostile", "cannot create a directory in /proc");
	expect_dry_run_refuses("-o", "/sys/ptc-hostile", "cannot create a directory in /sys");
	expect_dry_run_refuses("--ready", "/proc/ptc-ready", "--ready /proc/ptc-ready: cannot "
			       "create it in the directory /proc");
}

Test(hostile, dry_run_refuses_output_on_a_read_only_mount_as_the_recording_would)
{
	char *ro = in_base("ro"), *o, *ready;

	private_mounts();
	cr_assert_eq(mkdir(ro, 0700), 0);
	cr_assert_eq(mount(ro, ro, NULL, MS_BIND, NULL), 0, "%s", strerror(errno));
	cr_assert_eq(mount(NULL, ro, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL), 0, "%s",
		     strerror(errno));
	cr_assert(asprintf(&o, "%s/bundle", ro) > 0);
	cr_assert(asprintf(&ready, "%s/ready", ro) > 0);
	expect_dry_run_refuses("-o", o, "Read-only file system");
	expect_dry_run_refuses("--ready", ready, "Read-only file system");
	cr_expect_eq(umount(ro), 0);
	free(ready);
	free(o);
	free(ro);
}

Test(hostile, dry_run_refuses_a_ready_file_whose_temporary_name_is_too_long)
{
	char name[251], *ready;

	memset(name, 'r', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ready = in_base(name);
	expect_dry_run_refuses("--ready", ready, "File name too long");
	free(ready);
}

/* --force on a bundle named with 250 characters: replaced, as the dry run says. */
Test(hostile, force_replaces_a_bundle_with_a_250_character_name)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char name[251], *b, *m, **env;
	struct bundle *nb;
	struct error e = { 0 };
	struct oracle_env oe;
	struct run_result r;

	memset(name, 'b', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	b = in_base(name);
	testbundle_write(b, &pc, true);
	env = oracle_fixture_env(&oe, "skylake");
	cr_assert_eq(run_ptcollect(env, &r, "record", "--dry-run", "--force", "-o", b, "--",
				   "true", NULL), 0);
	cr_expect_eq(r.status, 0, "exit %d: %s", r.status, r.err);
	run_free(&r);
	cr_assert_eq(bundle_create(&nb, b, true, &e), 0, "%s", e.why);
	cr_expect_eq(bundle_begun(nb, &e), 0, "%s", e.why);
	bundle_free(nb);
	cr_assert(asprintf(&m, "%s/manifest.json", b) > 0);
	cr_expect_neq(access(m, F_OK), 0, "the old bundle's manifest is still there");
	cr_expect_eq(access(b, F_OK), 0, "the new bundle is not there");
	free(m);
	free(b);
}

/* ---- 4: decode --timeline FILE ----------------------------------------------------------- */

#define HASE_PT "traces/hase-loopy-skylake/aux.aux-idx2-cpu2-tid19233.pt"

static void decode_timeline(const char *pt, const char *file, struct run_result *r)
{
	cr_assert_eq(run_ptcollect(NULL, r, "decode", "-q", "--pt", pt, "--timeline", file, NULL),
		     0);
}

Test(hostile, decode_timeline_refuses_an_input_and_a_link_and_replaces_a_file_0600)
{
	char *src = run_shared(HASE_PT), *pt = in_base("t.pt"), *link = in_base("link");
	char *victim = in_base("victim"), *old = in_base("old.json"), *fresh = in_base("new.json");
	const char *args[] = { src, pt, NULL };
	struct run_result r;
	struct stat st;
	int fd;

	sh_run("cp \"$1\" \"$2\"", args, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	/* The input itself: refused, whole. */
	decode_timeline(pt, pt, &r);
	cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
	cr_expect(strstr(r.err, "an input of this decode"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(stat(pt, &st), 0);
	cr_expect_eq(st.st_size, 1392, "the input is %jd bytes now", (intmax_t)st.st_size);
	/* A link: refused, nothing written through it. */
	cr_assert_eq(symlink(victim, link), 0);
	decode_timeline(pt, link, &r);
	cr_expect_eq(r.status, 2, "exit %d: %s", r.status, r.err);
	cr_expect(strstr(r.err, "a symbolic link"), "%s", r.err);
	cr_expect_neq(access(victim, F_OK), 0, "written through the link");
	run_free(&r);
	/* A regular file of 0644: replaced by the timeline, 0600. */
	fd = open(old, O_WRONLY | O_CREAT | O_EXCL, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(fchmod(fd, 0644), 0);
	close(fd);
	for (int i = 0; i < 2; i++) {
		const char *f = i ? fresh : old;

		decode_timeline(pt, f, &r);
		/* Exit 2: the hase trace decodes with errors without its binary. */
		cr_expect(r.status == 0 || r.status == 2, "%s: exit %d: %s",
			  f, r.status, r.err);
		run_free(&r);
		cr_assert_eq(stat(f, &st), 0, "%s: %s", f, strerror(errno));
		cr_expect_eq(st.st_mode & 07777, 0600, "%s: mode %o", f, st.st_mode & 07777);
		cr_expect_gt(st.st_size, 16, "%s: %jd bytes", f, (intmax_t)st.st_size);
	}
	/* No temporary file is left beside them. */
	args[0] = base;
	args[1] = NULL;
	sh_run("ls -a \"$1\" | grep tmp", args, &r);
	cr_expect_str_empty(r.out, "left: %s", r.out);
	run_free(&r);
	free(fresh);
	free(old);
	free(victim);
	free(link);
	free(pt);
	free(src);
}

/* ---- 3: an interrupted import leaves nothing --------------------------------------------- */

/* The names in base, one a line, sorted. */
static char *base_listing(void)
{
	const char *args[] = { base, NULL };
	struct run_result r;
	char *s;

	sh_run("ls -A \"$1\"", args, &r);
	cr_assert_eq(r.status, 0, "%s", r.err);
	s = strdup(r.out);
	run_free(&r);
	return s;
}

/* Some directory in base that was not in @before holds a .pt file. */
static bool import_began(const char *before)
{
	const char *args[] = { base, NULL };
	struct run_result r;
	bool began = false;
	char *line, *save;

	sh_run("cd \"$1\" && for d in .[!.]* *; do [ -d \"$d\" ] && ls \"$d\" | grep -q '\\.pt$' "
	       "&& echo \"$d\"; done; true", args, &r);
	for (line = strtok_r(r.out, "\n", &save); line && !began; line = strtok_r(NULL, "\n", &save))
		began = !strstr(before, line);
	run_free(&r);
	return began;
}

Test(hostile, an_interrupted_import_leaves_no_bundle_and_the_next_one_works)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	char *dir = in_base("imported"), *before;
	struct run_result r;
	struct pgen g;
	uint8_t *data;
	size_t len;

	pgen_standard(&g, false, false);
	data = pgen_pipe(&g, &len);
	before = base_listing();
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		int p[2], st;
		pid_t pid;
		char *after;

		cr_assert_eq(pipe(p), 0);
		pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			int nul = open("/dev/null", O_WRONLY);

			dup2(p[0], 0);
			dup2(nul, 1);
			dup2(nul, 2);
			close(p[1]);
			for (size_t j = 0; j < sizeof(sigs) / sizeof(sigs[0]); j++)
				signal(sigs[j], SIG_DFL);
			execl(run_bin(), "ptcollect", "import", "-", dir, (char *)NULL);
			_exit(127);
		}
		close(p[0]);
		/* All but the last record's end: import has made its files and waits for more. */
		cr_assert_eq(write(p[1], data, len - 8), (ssize_t)(len - 8));
		/* While import lives: a hang is the watchdog's, which names what it awaited. */
		suitewatch_awaiting("import - to make its first stream file");
		while (!import_began(before)) {
			cr_assert(!run_ended(pid, &st), "import - ended (wait status %#x) before it "
				  "made a stream file", st);
			usleep(1000);
		}
		suitewatch_awaiting(NULL);
		cr_assert_eq(kill(pid, sigs[i]), 0);
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		close(p[1]);
		cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i], "signal %d: status 0x%x",
			  sigs[i], st);
		after = base_listing();
		cr_expect_str_eq(after, before, "signal %d left:\n%s", sigs[i], after);
		free(after);
	}
	/* The same DIR, imported whole now. */
	{
		char *file = temp_file(".data", data, len);

		cr_assert_eq(run_ptcollect(NULL, &r, "import", file, dir, NULL), 0);
		cr_expect_eq(r.status, 0, "%s", r.err);
		run_free(&r);
		unlink(file);
		free(file);
	}
	free(before);
	free(data);
	pgen_free(&g);
	free(dir);
}

/* ---- 12, 17: what main changed of the caller's state, the workload gets back ------------- */

Test(hostile, the_workload_gets_the_callers_umask_and_sigpipe_back)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	char *out = in_base("workload.out"), *script, *argv[4], buf[512] = "";
	struct workload w;
	struct error e = { 0 };
	sigset_t none;
	int st, fd;
	ssize_t n;

	/* As main does: its own umask and SIGPIPE, the caller's noted. */
	workload_note_caller(0277, &dfl);
	umask(0077);
	signal(SIGPIPE, SIG_IGN);
	cr_assert(asprintf(&script, "exec >'%s'; umask; grep SigIgn /proc/self/status", out) > 0);
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = NULL;
	sigemptyset(&none);
	cr_assert_eq(workload_start(&w, "/bin/sh", argv, &none, false, NULL, &e), 0, "%s", e.why);
	cr_assert_eq(workload_release(&w, "sh", &e), 0, "%s", e.why);
	cr_assert_eq(waitpid(w.pid, &st, 0), w.pid);
	w.pid = 0;
	workload_close(&w);
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st), "status 0x%x", st);
	fd = open(out, O_RDONLY);
	cr_assert_geq(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_assert_gt(n, 0);
	cr_expect(!strncmp(buf, "0277\n", 5), "the workload's umask: %s", buf);
	/* SigIgn is hex; SIGPIPE (13) is bit 12 of it: 0x1000. */
	cr_expect(strstr(buf, "SigIgn:") && !(strtoull(strstr(buf, "SigIgn:") + 7, NULL, 16) &
					     (1ULL << (SIGPIPE - 1))), "%s", buf);
	free(script);
	free(out);
}
