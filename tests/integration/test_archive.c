// SPDX-License-Identifier: MIT
/*
 * A self-contained bundle: build-ids taken when files are mapped (by the
 * kernel with attr.build_id, by the /proc synthesis), `archive` copying
 * every mapped file into the sysroot once and only when it is the file that
 * was mapped, and a bundle moved elsewhere, its program deleted, decoded by
 * libipt's ptxed and ptdump through the lines and the script `info` prints.
 *
 * The bundle is written by the recorder's own code from a real run: the
 * host kernel's sideband of playprog's exec (a dummy event), the PT stream
 * ptplay derives for that run (tests/kernel/README.md, "Played streams"),
 * a /proc synthesis of a running copy of sleep(1), and the vdso.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auxring.h"
#include "bundle.h"
#include "images.h"
#include "manifest.h"
#include "run.h"
#include "sbrun.h"
#include "sideband.h"
#include "stream.h"
#include "symbols.h"
#include "vdso.h"

struct fix {
	char root[64];		/* /tmp/ptc-archive-XXXXXX: everything below */
	char run[96];		/* the programs the bundle maps, deleted to play "elsewhere" */
	char prog[128];		/* run/playprog, traced */
	char sleeper[128];	/* run/sleeper (a copy of sleep), running: proc.pevent */
	char *bundle;
	char stream[128], insns[128];	/* ptplay's stream and instruction addresses */
	char trace[32];		/* tidN.pt */
};

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;

	va_start(ap, fmt);
	cr_assert_gt(vasprintf(&cmd, fmt, ap), 0);
	va_end(ap);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	free(cmd);
}

/* All of @path, NUL-terminated; its size in *@len when @len is not NULL. */
static char *slurp_n(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	cr_assert_eq(read(fd, buf, (size_t)st.st_size), st.st_size, "%s", path);
	buf[st.st_size] = '\0';
	close(fd);
	if (len)
		*len = (size_t)st.st_size;
	return buf;
}

static char *slurp(const char *path)
{
	return slurp_n(path, NULL);
}

static void copy_file(const char *from, const char *to)
{
	sh("cp '%s' '%s' && chmod 755 '%s'", from, to, to);
}

/* ptplay's stream of playprog, or a skip where ptrace is not permitted. */
static void play(struct fix *f)
{
	char *gen = run_testprog("ptplay"), *prog = run_testprog("playprog");
	char *argv[] = { gen, prog, f->stream, f->insns, NULL };
	struct run_result r;

	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	if (r.status == 3)
		cr_skip_test("ptrace is not permitted here: %s", r.err);
	cr_assert_eq(r.status, 0, "ptplay: %s", r.err);
	run_free(&r);
	free(gen);
	free(prog);
}

static void describe(struct manifest *m, pid_t tid)
{
	static char *self[] = { "ptcollect", "record", "--per-thread", "--", "playprog" };

	manifest_init(m);
	cr_assert_eq(manifest_set(&m->tool_version, "test"), 0);
	cr_assert_eq(manifest_set_argv(&m->command, &m->command_argc, self, 5), 0);
	cr_assert_eq(manifest_set_argv(&m->target.command, &m->target.command_argc, self + 4, 1),
		     0);
	m->target.kind = TARGET_COMMAND;
	m->per_thread = true;
	cr_assert_eq(manifest_set(&m->pmu_name, "intel_pt"), 0);
	cr_assert_eq(manifest_set(&m->event, "intel_pt//u"), 0);
	cr_assert_eq(manifest_set(&m->cpu.vendor, "GenuineIntel"), 0);
	m->attr.exclude_kernel = m->attr.exclude_hv = true;
	m->attr.sample_type = SIDEBAND_SAMPLE_TYPE;
	m->cpu.family = 6;
	m->cpu.model = 94;
	m->cpu.stepping = 3;
	m->mtc_freq = 3;
	m->complete = true;
	(void)tid;
}

/* Write the stream's two files and proc.pevent through the bundle module, and the manifest. */
static void write_bundle(struct fix *f, pid_t tid, pid_t sleeper)
{
	struct error e = { 0 };
	struct stream st;
	struct manifest m;
	struct bundle *b;
	char sbpath[160], *pt, *sb;
	size_t ptlen, sblen;
	int fd, ret;

	snprintf(sbpath, sizeof(sbpath), "%s/sb", f->root);
	pt = slurp_n(f->stream, &ptlen);
	sb = slurp_n(sbpath, &sblen);
	describe(&m, tid);
	cr_assert_eq(bundle_create(&b, f->bundle, false, &e), 0, "%s", e.why);
	stream_init(&st, -1, tid);
	cr_assert_eq(bundle_open_stream(b, &st, &e), 0, "%s", e.why);
	snprintf(f->trace, sizeof(f->trace), "%s", st.trace);
	/* the played stream as the trace, the kernel's records of the run as its sideband */
	cr_assert_eq(write(st.trace_fd, pt, ptlen), (ssize_t)ptlen);
	cr_assert_eq(write(st.sb_fd, sb, sblen), (ssize_t)sblen);
	st.ring.stats.aux_bytes = ptlen;
	st.ring.stats.record_bytes = sblen;
	free(pt);
	free(sb);
	cr_assert_eq(bundle_describe_stream(&st, manifest_add_stream(&m)), 0);
	cr_assert_eq(bundle_close_stream(b, &st, &e), 0, "%s", e.why);
	fd = bundle_create_file(b, BUNDLE_PROC, &e);
	cr_assert_geq(fd, 0, "%s", e.why);
	ret = sideband_synthesize_proc(sleeper, fd, &e);
	cr_assert_gt(ret, 0, "%s", e.why);
	close(fd);
	cr_assert_eq(manifest_set(&m.proc_sideband, BUNDLE_PROC), 0);
	cr_assert_eq(bundle_mkdir(b, BUNDLE_SYSROOT, &e), 0);
	fd = bundle_create_file(b, BUNDLE_VDSO, &e);
	cr_assert_geq(fd, 0, "%s", e.why);
	cr_assert_eq(vdso_save(fd, &e), 0, "%s", e.why);
	close(fd);
	cr_assert_eq(manifest_set(&m.vdso, BUNDLE_VDSO), 0);
	cr_assert_eq(images_collect(bundle_dirfd(b), &m, &e), 0, "%s", e.why);
	cr_assert_eq(bundle_write_manifest(b, &m, &e), 0, "%s", e.why);
	bundle_free(b);
	manifest_free(&m);
}

/* In its sleep (clock_nanosleep or nanosleep): past its exec and its libraries' mappings. */
static bool asleep(int pid, const void *arg)
{
	char path[64], buf[64] = "";
	FILE *f;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return !strncmp(buf, "230 ", 4) || !strncmp(buf, "35 ", 3);
}

/* A running copy of sleep, so that proc.pevent maps it (and libc). */
static pid_t start_sleeper(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		execl(path, path, "60", (char *)NULL);
		_exit(127);
	}
	cr_assert_gt(pid, 0);
	cr_assert(run_poll(pid, asleep, NULL, 60), "%s (%d) reached its sleep", path, (int)pid);
	cr_assert(run_poll(pid, run_proc_maps, "libc.so", 1), "%s maps libc", path);
	return pid;
}

/* The bundle of a run of playprog, recorded as the recorder does; skips without a kernel or ptrace. */
static void setup(struct fix *f, const char *bundle_name)
{
	char sb[160], *tmp, *argv[] = { f->prog, NULL };
	pid_t tid = 0, sleeper;
	int out, ret;

	memset(f, 0, sizeof(*f));
	strcpy(f->root, "/tmp/ptc-archive-XXXXXX");
	cr_assert_not_null(mkdtemp(f->root));
	snprintf(f->run, sizeof(f->run), "%s/run", f->root);
	cr_assert_eq(mkdir(f->run, 0755), 0);
	snprintf(f->prog, sizeof(f->prog), "%s/playprog", f->run);
	snprintf(f->sleeper, sizeof(f->sleeper), "%s/sleeper", f->run);
	snprintf(f->stream, sizeof(f->stream), "%s/playprog.pt", f->root);
	snprintf(f->insns, sizeof(f->insns), "%s/playprog.insns", f->root);
	cr_assert_gt(asprintf(&f->bundle, "%s/%s", f->root, bundle_name), 0);
	play(f);
	tmp = run_testprog("playprog");
	copy_file(tmp, f->prog);
	free(tmp);
	copy_file("/bin/sleep", f->sleeper);
	snprintf(sb, sizeof(sb), "%s/sb", f->root);
	out = open(sb, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(out, 0);
	ret = sbrun(argv, true, out, &tid);
	close(out);
	if (ret)
		cr_skip_test("perf_event_open of a dummy event with build_id: %s", strerror(-ret));
	sleeper = start_sleeper(f->sleeper);
	write_bundle(f, tid, sleeper);
	kill(sleeper, SIGKILL);
	waitpid(sleeper, NULL, 0);
}

static void teardown(struct fix *f)
{
	sh("rm -rf '%s'", f->root);
	free(f->bundle);
}

/* Every MMAP2 of @file in the sideband @path; the build-ids they carry must be @want. */
static int mmaps_with_build_id(const char *path, const char *file, const char *want)
{
	size_t off = 0, size;
	char *buf = slurp_n(path, &size);
	int n = 0;

	while (off < size) {
		struct sb_record r;
		struct error e = { 0 };
		char id[41];
		int len = sideband_parse((uint8_t *)buf, size, off,
					 SIDEBAND_SAMPLE_TYPE, &r, &e);

		cr_assert_gt(len, 0, "%s: %s", path, e.why);
		if (r.type == PERF_RECORD_MMAP2 && sideband_mmap_file(&r) &&
		    !strcmp(sideband_mmap_file(&r), file)) {
			cr_expect(r.misc & PERF_RECORD_MISC_MMAP_BUILD_ID, "no build-id flag");
			cr_expect_gt(sideband_mmap_build_id(&r, id, sizeof(id)), 0);
			cr_expect_str_eq(id, want);
			n++;
		}
		off += (size_t)len;
	}
	free(buf);
	return n;
}

Test(archive, mmap2_records_carry_the_build_id_the_file_had_when_mapped)
{
	struct fix f;
	char id[41], sb[192];

	setup(&f, "b");
	cr_assert_eq(symbols_build_id(f.prog, id, sizeof(id)), 0);
	snprintf(sb, sizeof(sb), "%s/sb", f.root);
	cr_expect_geq(mmaps_with_build_id(sb, f.prog, id), 1, "the kernel's MMAP2 of the program");
	cr_assert_eq(symbols_build_id(f.sleeper, id, sizeof(id)), 0);
	snprintf(sb, sizeof(sb), "%s/%s", f.bundle, "proc.pevent");
	cr_expect_geq(mmaps_with_build_id(sb, f.sleeper, id), 1, "the synthesized MMAP2");
	teardown(&f);
}

/* ptcollect archive --json @dir; the "KEY": number it printed. */
static long archived(const struct run_result *r, const char *key)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), "\"%s\": ", key);
	p = strstr(r->out, want);
	cr_assert_not_null(p, "no %s in:\n%s", key, r->out);
	return strtol(p + strlen(want), NULL, 10);
}

static void expect_mode(const char *path, mode_t want)
{
	struct stat st;

	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_expect_eq(st.st_mode & 07777, want, "%s: mode %o, want %o", path, st.st_mode & 07777,
		     want);
}

/* Whether the files @a and @b hold the same bytes. */
static bool same_file(const char *a, const char *b)
{
	char *cmd;
	int rc;

	cr_assert_gt(asprintf(&cmd, "cmp -s '%s' '%s'", a, b), 0);
	rc = system(cmd);
	free(cmd);
	return rc == 0;
}

/* The instruction addresses in ptxed's output, one per line; counts the error lines. */
static char *ptxed_addresses(const char *out, int *errors)
{
	char *addrs = calloc(1, strlen(out) + 1);
	size_t len = 0;

	*errors = 0;
	for (const char *l = out; *l; l = *strchrnul(l, '\n') ? strchrnul(l, '\n') + 1 :
								 strchrnul(l, '\n')) {
		const char *nl = strchrnul(l, '\n'), *err = strcasestr(l, "error");

		if (strspn(l, "0123456789abcdef") == 16 && l[16] == ' ') {
			memcpy(addrs + len, l, 16);
			addrs[len + 16] = '\n';
			len += 17;
		} else if (err && err < nl) {
			(*errors)++;
		}
	}
	return addrs;
}

/* The JSON string value after "@key": in @json, unescaped as far as the lines need. */
static char *json_line(const char *json, const char *key)
{
	char want[32], *out, *o;
	const char *p;

	snprintf(want, sizeof(want), "\"%s\": \"", key);
	p = strstr(json, want);
	cr_assert_not_null(p, "no %s in:\n%s", key, json);
	p += strlen(want);
	out = o = malloc(strlen(p) + 1);
	for (; *p && *p != '"'; p++) {
		if (*p == '\\') {
			p++;
			*o++ = *p == 'n' ? '\n' : *p;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

/* An archived bundle moved to a name no shell reads unquoted; the programs it maps deleted. */
static char *archive_and_move(struct fix *f)
{
	struct run_result r;
	char *moved;

	cr_assert_eq(run_ptcollect(NULL, &r, "archive", "--json", f->bundle, NULL), 0);
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	run_free(&r);
	cr_assert_gt(asprintf(&moved, "%s/moved 'q' \"d\" $x `y` \\\nline", f->root), 0);
	cr_assert_eq(rename(f->bundle, moved), 0);
	sh("rm -rf '%s'", f->run);
	return moved;
}

Test(archive, copies_each_mapped_file_once_private_and_verified)
{
	char path[512], *want;
	struct run_result r;
	long copied;
	struct fix f;

	setup(&f, "b");
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", "--json", f.bundle, NULL), 0);
	cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
	copied = archived(&r, "copied");
	cr_expect_geq(copied, 3, "playprog, sleeper and libc at least: %s", r.out);
	cr_expect_eq(archived(&r, "refused"), 0, "%s", r.out);
	cr_expect_eq(archived(&r, "unchecked"), 0, "%s", r.out);
	run_free(&r);
	snprintf(path, sizeof(path), "%s/sysroot%s", f.bundle, f.prog);
	cr_expect(same_file(path, f.prog), "%s", path);
	expect_mode(path, 0600);
	snprintf(path, sizeof(path), "%s/sysroot%s", f.bundle, f.sleeper);
	cr_expect(same_file(path, f.sleeper), "%s", path);
	snprintf(path, sizeof(path), "%s/sysroot%s", f.bundle, f.run);
	expect_mode(path, 0700);
	snprintf(path, sizeof(path), "%s/sysroot/tmp", f.bundle);
	expect_mode(path, 0700);
	snprintf(path, sizeof(path), "%s/manifest.json", f.bundle);
	want = slurp(path);
	cr_expect(strstr(want, "\"sysroot\": \"sysroot\""), "%s", want);
	free(want);
	/* Again: every file is there already, the same bytes; nothing is copied twice. */
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", "--json", f.bundle, NULL), 0);
	cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
	cr_expect_eq(archived(&r, "copied"), 0, "%s", r.out);
	cr_expect_eq(archived(&r, "kept"), copied, "%s", r.out);
	run_free(&r);
	/* The sysroot goes before the sideband files it applies to (libipt's order). */
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", f.bundle, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_gt(asprintf(&want, "--pevent:vdso-x64 %s/sysroot/vdso-x64.so --pevent:sysroot "
			      "%s/sysroot --pevent:primary %s/%s", f.bundle, f.bundle, f.bundle,
			      f.trace), 0);
	want[strlen(want) - 3] = '\0';	/* ".pt" -> the .pevent prefix */
	cr_expect(strstr(r.out, want), "no '%s' in:\n%s", want, r.out);
	cr_expect(!strstr(r.err, "mapped files"), "an archived bundle lacks nothing: %s", r.err);
	free(want);
	run_free(&r);
	teardown(&f);
}

Test(archive, the_printed_ptxed_line_decodes_the_moved_bundle_without_its_programs)
{
	char *ptxed = run_oracle("ptxed"), *moved, *line, *want, *got, *env[2] = { NULL, NULL };
	char *argv[] = { "sh", "-c", NULL, NULL };
	struct run_result r;
	struct fix f;
	int errors;

	setup(&f, "b");
	moved = archive_and_move(&f);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", moved, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	line = json_line(r.out, "ptxed");
	run_free(&r);
	cr_assert_gt(asprintf(&env[0], "PATH=%.*s:/usr/bin:/bin", (int)(strrchr(ptxed, '/') - ptxed),
			      ptxed), 0);
	argv[2] = line;
	cr_assert_eq(run_argv(argv, env, &r), 0);
	want = slurp(f.insns);
	got = ptxed_addresses(r.out, &errors);
	cr_expect_eq(r.status, 0, "%s\n%s%s", line, r.out, r.err);
	cr_expect_eq(errors, 0, "%s\n%s", line, r.out);
	cr_expect_gt(strlen(want), 0);
	cr_expect_str_eq(got, want, "ptxed decoded another sequence:\n%s\n%s", line, r.out);
	run_free(&r);
	free(got);
	free(want);
	free(line);
	free(env[0]);
	free(moved);
	free(ptxed);
	teardown(&f);
}

/* Run the script @script with @args from the directory @cwd, the oracle's decoders named. */
static void run_script(const char *script, const char *cwd, const char *bundle,
		       struct run_result *r)
{
	char *ptxed = run_oracle("ptxed"), *ptdump = run_oracle("ptdump"), *env[3] = { NULL };
	char *argv[] = { "sh", "-c", "cd \"$1\" && shift && exec sh \"$@\"", "sh", (char *)cwd,
			 (char *)script, (char *)bundle, NULL };

	cr_assert_gt(asprintf(&env[0], "PTXED=%s", ptxed), 0);
	cr_assert_gt(asprintf(&env[1], "PTDUMP=%s", ptdump), 0);
	cr_assert_eq(run_argv(argv, env, r), 0);
	free(env[0]);
	free(env[1]);
	free(ptxed);
	free(ptdump);
}

/* What the script wrote for the stream into @out: ptxed's instructions equal the run's. */
static void expect_decoded(const struct fix *f, const char *out, const struct run_result *r)
{
	char path[512], *text, *got, *want = slurp(f->insns);
	int errors, n = (int)strlen(f->trace) - 3;

	cr_expect_eq(r->status, 0, "%s%s", r->out, r->err);
	cr_expect(strstr(r->out, "exited 0, 0 error lines"), "%s", r->out);
	snprintf(path, sizeof(path), "%s/%.*s.ptxed", out, n, f->trace);
	text = slurp(path);
	got = ptxed_addresses(text, &errors);
	cr_expect_eq(errors, 0, "%s", text);
	cr_expect_str_eq(got, want, "%s", text);
	free(text);
	free(got);
	snprintf(path, sizeof(path), "%s/%.*s.ptdump", out, n, f->trace);
	text = slurp(path);
	cr_expect(strstr(text, "psb") && !strcasestr(text, "error"), "%s", text);
	free(text);
	free(want);
}

Test(archive, info_script_decodes_every_stream_from_any_directory)
{
	char *ptxed = run_oracle("ptxed"), *ptdump = run_oracle("ptdump");
	char *moved, *again, script[160], out[160], inside[600];
	struct run_result r;
	struct fix f;
	FILE *s;

	free(ptxed);
	free(ptdump);
	setup(&f, "b");
	moved = archive_and_move(&f);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--script", moved, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(!strncmp(r.out, "#!/bin/sh\n", 10), "%s", r.out);
	/* outside the bundle: it decodes the bundle it was written for, from anywhere */
	snprintf(script, sizeof(script), "%s/decode.sh", f.root);
	s = fopen(script, "w");
	fputs(r.out, s);
	fclose(s);
	run_free(&r);
	snprintf(out, sizeof(out), "%s/out", f.root);
	cr_assert_eq(mkdir(out, 0700), 0);
	run_script(script, out, NULL, &r);
	expect_decoded(&f, out, &r);
	run_free(&r);
	/* inside the bundle: the bundle is where the script is, wherever that went */
	snprintf(inside, sizeof(inside), "%s/decode.sh", moved);
	{
		char buf[1 << 16];
		size_t n;
		FILE *in = fopen(script, "r"), *o = fopen(inside, "w");

		cr_assert(in && o);
		n = fread(buf, 1, sizeof(buf), in);
		cr_assert_eq(fwrite(buf, 1, n, o), n);
		fclose(in);
		fclose(o);
	}
	cr_assert_gt(asprintf(&again, "%s/again\n'x' \"y\"", f.root), 0);
	cr_assert_eq(rename(moved, again), 0);
	snprintf(inside, sizeof(inside), "%s/decode.sh", again);
	sh("rm -rf '%s'/*", out);
	run_script(inside, out, NULL, &r);
	expect_decoded(&f, out, &r);
	run_free(&r);
	/* and any bundle given as its argument */
	sh("rm -rf '%s'/*", out);
	run_script(script, out, again, &r);
	expect_decoded(&f, out, &r);
	run_free(&r);
	free(again);
	free(moved);
	teardown(&f);
}

Test(archive, refuses_a_file_whose_build_id_changed_by_name_and_copies_the_rest)
{
	char path[512];
	struct run_result r;
	struct fix f;

	setup(&f, "b");
	/* a new build at the path that was mapped */
	sh("cp /bin/true '%s.new' && mv '%s.new' '%s'", f.sleeper, f.sleeper, f.sleeper);
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", f.bundle, NULL), 0);
	cr_expect_eq(r.status, 1, "%s%s", r.out, r.err);
	cr_expect(strstr(r.err, f.sleeper) && strstr(r.err, "not archived") &&
		  strstr(r.err, "build-id") && strstr(r.err, "replaced after it was mapped"),
		  "%s", r.err);
	cr_expect(strstr(r.out, "not archived: 1"), "%s", r.out);
	run_free(&r);
	snprintf(path, sizeof(path), "%s/sysroot%s", f.bundle, f.sleeper);
	cr_expect_neq(access(path, F_OK), 0, "%s was copied", path);
	snprintf(path, sizeof(path), "%s/sysroot%s", f.bundle, f.prog);
	cr_expect(same_file(path, f.prog), "the rest is copied: %s", path);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", f.bundle, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "1 of the mapped files are not in sysroot") &&
		  strstr(r.err, f.sleeper), "%s", r.err);
	run_free(&r);
	teardown(&f);
}

Test(archive, never_writes_through_a_link_planted_in_the_bundle)
{
	char path[512], elsewhere[160];
	struct run_result r;
	struct fix f;

	setup(&f, "b");
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", f.root);
	cr_assert_eq(mkdir(elsewhere, 0700), 0);
	snprintf(path, sizeof(path), "%s/sysroot/tmp", f.bundle);
	cr_assert_eq(symlink(elsewhere, path), 0);
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", f.bundle, NULL), 0);
	cr_expect_eq(r.status, 1, "%s%s", r.out, r.err);
	cr_expect(strstr(r.err, f.prog) && strstr(r.err, "something other than a directory"),
		  "%s", r.err);
	run_free(&r);
	sh("test -z \"$(ls -A '%s')\"", elsewhere);
	/* the sysroot itself a link: nothing is written, and it says why */
	sh("rm -rf '%s/sysroot'", f.bundle);
	snprintf(path, sizeof(path), "%s/sysroot", f.bundle);
	cr_assert_eq(symlink(elsewhere, path), 0);
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", f.bundle, NULL), 0);
	cr_expect_eq(r.status, 1, "%s%s", r.out, r.err);
	cr_expect(strstr(r.err, "sysroot") && strstr(r.err, "symbolic link"), "%s", r.err);
	cr_expect_str_eq(r.out, "");
	run_free(&r);
	sh("test -z \"$(ls -A '%s')\"", elsewhere);
	teardown(&f);
}

Test(archive, bad_input_exits_two_with_the_reason)
{
	char dir[] = "/tmp/ptc-archive-bad-XXXXXX", path[128];
	struct run_result r;
	FILE *m;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "expected one bundle DIR"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", "--bogus", dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "unknown option '--bogus'"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", "/nonexistent/ptc", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "no such directory"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "manifest.json"), "%s", r.err);
	cr_expect_str_eq(r.out, "");
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--script", "--json", dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "does not go with --json"), "%s", r.err);
	run_free(&r);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	m = fopen(path, "w");
	fputs("{\"format\": \"ptcollect-bundle\", \"version\": 2}", m);
	fclose(m);
	cr_assert_eq(run_ptcollect(NULL, &r, "archive", dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "missing"), "%s", r.err);
	run_free(&r);
	sh("rm -rf '%s'", dir);
}

/* A manifest whose images say what no recording writes: named, exit 2. */
Test(archive, image_fields_of_the_manifest_are_checked)
{
	static const struct { const char *after, *from, *to, *says; } bad[] = {
		{ "\"images\"", "\"build_id\": \"", "\"build_id\": \"XY", "images[0].build_id" },
		{ "\"images\"", "\"path\": \"/", "\"path\": \"rel/", "images[0].path" },
		{ "\"vdso\"", "\"sysroot\": null", "\"sysroot\": \"../up\"", "\"sysroot\"" },
		{ "\"images\"", "\"device\": null", "\"device\": \"8:1x\"", "images[0].device" },
		{ "\"images\"", "\"inode\": null", "\"inode\": \"5\"",
		  "a device and an inode go together" },
	};
	char path[512], *text;
	struct fix f;

	setup(&f, "b");
	snprintf(path, sizeof(path), "%s/manifest.json", f.bundle);
	text = slurp(path);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *at = strstr(strstr(text, bad[i].after), bad[i].from);
		struct run_result r;
		FILE *m;

		cr_assert_not_null(at, "%s", bad[i].from);
		m = fopen(path, "w");
		fprintf(m, "%.*s%s%s", (int)(at - text), text, bad[i].to,
			at + strlen(bad[i].from));
		fclose(m);
		cr_assert_eq(run_ptcollect(NULL, &r, "info", f.bundle, NULL), 0);
		cr_expect_eq(r.status, 2, "%s", bad[i].to);
		cr_expect(strstr(r.err, bad[i].says), "%s", r.err);
		run_free(&r);
	}
	free(text);
	teardown(&f);
}

/*
 * Issue 22 item 9: the manifest path in an error, as info, archive and decode print it,
 * shows a newline of the bundle's name as \n: the name cannot forge a line of its own.
 */
Test(archive, item9_manifest_path_errors_escape_a_newline)
{
	static const char *const cmds[] = { "info", "archive", "decode" };
	char dir[] = "/tmp/ptc-item9-XXXXXX", bundle[128], rm[160];
	struct run_result r;

	cr_assert(mkdtemp(dir));
	snprintf(bundle, sizeof(bundle), "%s/b\nptcollect: hint: all fine", dir);
	cr_assert_eq(mkdir(bundle, 0700), 0);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		cr_assert_eq(run_ptcollect(NULL, &r, cmds[i], bundle, NULL), 0);
		cr_expect_eq(r.status, 2, "%s: %s", cmds[i], r.err);
		cr_expect_null(strstr(r.err, "\nptcollect: hint: all fine"), "%s", r.err);
		cr_expect(strstr(r.err, "/b\\nptcollect: hint: all fine/manifest.json: "), "%s",
			  r.err);
		run_free(&r);
	}
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	cr_expect_eq(system(rm), 0);
}
