// SPDX-License-Identifier: MIT
/*
 * `ptcollect import` on perf's own files: the real intel_pt perf.data of
 * ../shared/traces/hase-loopy-skylake (Skylake, perf 4.15), whose imported
 * bundle libipt's ptxed (../shared/oracle) decodes through the line `info`
 * prints to exactly the instructions of the reference decode; its pipe-mode
 * form as Debian's perf writes it (perf inject -o -), whole and cut short;
 * perf.data files without Intel PT that Debian's perf records here; and the
 * command's refusals.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manifest.h"
#include "perfgen.h"
#include "run.h"
#include "suitewatch.h"
#include "tempfile.h"
#include "vdso.h"

#define HASE "traces/hase-loopy-skylake"
#define HASE_BINARY "/home/joerg/git/angr/hase/tests/bin/loopy/loopy"	/* as recorded */

static char *base;

static void make_base(void)
{
	suitewatch(120);
	base = temp_dir("ptc-import-it");
}

static void remove_base(void)
{
	temp_dir_remove(base);
}

TestSuite(import, .init = make_base, .fini = remove_base);

static char *in_base(const char *name)
{
	return temp_path(base, name);
}

/* The reference data (run_shared: ../shared or $PTCOLLECT_SHARED), or a skip that says why. */
static char *shared(const char *rel)
{
	return run_shared(rel);
}

static bool have(const char *prog)
{
	char *cmd;
	int ret;

	cr_assert(asprintf(&cmd, "command -v %s >/dev/null 2>&1", prog) > 0);
	ret = system(cmd);
	free(cmd);
	return !ret;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	char *buf;

	cr_assert(f, "%s is missing", path);
	cr_assert_eq(fstat(fileno(f), &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	cr_assert_eq(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	buf[st.st_size] = '\0';
	fclose(f);
	*len = (size_t)st.st_size;
	return buf;
}

static void expect_same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *x = slurp(a, &la), *y = slurp(b, &lb);

	cr_expect(la == lb && !memcmp(x, y, la), "%s (%zu bytes) and %s (%zu bytes) differ", a,
		  la, b, lb);
	free(x);
	free(y);
}

static int sh(const char *script, struct run_result *r)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };

	return run_argv(argv, NULL, r);
}

/* This machine's vdso, as a stand-in for the traced machine's (the hase program never runs it). */
static char *vdso_file(void)
{
	char *path = in_base("vdso.so");
	struct error e = { 0 };
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

	cr_assert_geq(fd, 0, "%s", path);
	cr_assert_eq(vdso_save(fd, &e), 0, "%s", e.why);
	close(fd);
	return path;
}

/* The ptxed line `info` prints for @file, with --pevent:sysroot before the sideband files. */
static char *ptxed_line(const char *info_out, const char *file, const char *sysroot)
{
	const char *at = strstr(info_out, file), *line, *end, *primary;
	char *out, *ptxed;

	cr_assert(at, "info names no stream %s:\n%s", file, info_out);
	line = strstr(at, "ptxed: ");
	cr_assert(line, "no ptxed line after %s:\n%s", file, info_out);
	line += strlen("ptxed: ");
	end = strchrnul(line, '\n');
	primary = strstr(line, " --pevent:primary ");
	cr_assert(primary && primary < end, "no --pevent:primary in %.*s", (int)(end - line), line);
	cr_assert(!strncmp(line, "ptxed ", 6));
	ptxed = shared("oracle/ptxed");
	cr_assert(asprintf(&out, "'%s' %.*s --pevent:sysroot '%s'%.*s", ptxed,
			   (int)(primary - line - 6), line + 6, sysroot, (int)(end - primary),
			   primary) > 0);
	free(ptxed);
	return out;
}

/* The lines of @text that are instructions (ptxed prints events in brackets). */
static char *instructions(const char *text, int *count)
{
	char *out = calloc(1, strlen(text) + 1), *p = out;

	*count = 0;
	for (const char *l = text; *l;) {
		const char *e = strchrnul(l, '\n');

		if (*l != '[' && e > l) {
			memcpy(p, l, (size_t)(e - l));
			p += e - l;
			*p++ = '\n';
			(*count)++;
		}
		l = *e ? e + 1 : e;
	}
	return out;
}

static void import_hase(const char *dir, bool with_vdso)
{
	char *data = shared(HASE "/perf.data"), *vdso = with_vdso ? vdso_file() : NULL;
	struct run_result r;

	if (vdso)
		cr_assert_eq(run_ptcollect(NULL, &r, "import", "--vdso", vdso, data, dir, NULL), 0);
	else
		cr_assert_eq(run_ptcollect(NULL, &r, "import", data, dir, NULL), 0);
	cr_assert_eq(r.status, 0, "import failed: %s", r.err);
	cr_expect(strstr(r.out, "streams: 4") && strstr(r.out, "trace bytes: 1392"), "%s", r.out);
	run_free(&r);
	free(data);
	free(vdso);
}

Test(import, hase_trace_equals_the_aux_stream_cut_from_perf_data)
{
	char *dir = in_base("hase"), *pt = in_base("hase/cpu2.pt");
	char *want = shared(HASE "/aux.aux-idx2-cpu2-tid19233.pt");

	import_hase(dir, false);
	expect_same_file(pt, want);
	free(dir);
	free(pt);
	free(want);
}

Test(import, hase_manifest_holds_the_recording_machine)
{
	char *dir = in_base("hase");
	struct error e = { 0 };
	struct manifest m;
	int fd;

	import_hase(dir, false);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(manifest_read(fd, dir, &m, &e), 0, "%s", e.why);
	close(fd);
	/* SOURCE.txt: i5-6500, GenuineIntel,6,94,3, config 0x300e601, TSC:CTC 266/2, ... */
	cr_expect_str_eq(m.cpu.vendor, "GenuineIntel");
	cr_expect(m.cpu.family == 6 && m.cpu.model == 94 && m.cpu.stepping == 3);
	cr_expect_eq(m.attr.config, 0x300e601);
	cr_expect_eq(m.mtc_freq, 3);
	cr_expect_eq(m.nom_freq, 32);
	cr_expect(m.has_cpuid_0x15 && m.cpuid_0x15_eax == 2 && m.cpuid_0x15_ebx == 266);
	cr_expect_eq(m.time_conv.time_shift, 31);
	cr_expect_eq(m.time_conv.time_mult, 672770566);
	cr_expect_eq(m.time_conv.time_zero, 18446744061102431664ull);
	cr_expect(!m.per_thread);
	cr_expect_str_eq(m.event, "intel_pt//u");
	cr_expect_str_eq(m.source.version, "4.15.12");
	cr_expect_str_eq(m.source.cpudesc, "Intel(R) Core(TM) i5-6500 CPU @ 3.20GHz");
	cr_expect_eq(m.target.kind, TARGET_COMMAND);
	cr_assert_eq(m.target.nr_pids, 1);
	cr_expect_eq(m.target.pids[0], 19233);
	cr_assert_eq(m.target.command_argc, 6);
	cr_expect_str_eq(m.target.command[0], HASE_BINARY);
	cr_assert_eq(m.nr_streams, 4);
	cr_expect_eq(m.streams[2].cpu, 2);
	cr_expect_eq(m.streams[2].bytes, 1392);
	cr_expect_eq(m.streams[2].itrace_start, 1);
	manifest_free(&m);
	free(dir);
}

/*
 * info on the imported bundle exits 0, and its ptxed line, run by libipt's
 * ptxed with the program in a sysroot at its recorded path, decodes the same
 * instructions as the reference decode in expected/, with no error.
 */
Test(import, hase_ptxed_line_decodes_as_the_reference)
{
	char *dir = in_base("hase"), *sysroot = in_base("sysroot"), *cmd, *line, *got, *want, *text;
	char *ref = shared(HASE "/expected/ptxed-aux.aux-idx2-cpu2-tid19233.txt");
	char *bin = shared(HASE "/loopy");
	struct run_result r;
	int n_got, n_want;
	size_t len;

	import_hase(dir, true);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_assert_eq(r.status, 0, "info: %s", r.err);
	line = ptxed_line(r.out, "cpu2.pt", sysroot);
	run_free(&r);
	cr_assert(asprintf(&cmd, "d=$(dirname '%s%s') && mkdir -p \"$d\" && cp '%s' '%s%s'",
			   sysroot, HASE_BINARY, bin, sysroot, HASE_BINARY) > 0);
	cr_assert_eq(sh(cmd, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	cr_assert_eq(sh(line, &r), 0);
	cr_expect_eq(r.status, 0, "%s\n%s%s", line, r.out, r.err);
	cr_expect(!strstr(r.out, "error") && !strstr(r.err, "error"), "ptxed reports errors:\n%s\n"
		  "%s%s", line, r.out, r.err);
	got = instructions(r.out, &n_got);
	text = slurp(ref, &len);
	want = instructions(text, &n_want);
	free(text);
	cr_expect_eq(n_got, n_want, "%d instructions, the reference decode has %d", n_got,
		     n_want);
	cr_expect_str_eq(got, want);
	cr_expect_eq(n_want, 57);
	run_free(&r);
	free(got);
	free(want);
	free(line);
	free(cmd);
	free(bin);
	free(ref);
	free(sysroot);
	free(dir);
}

/* Without a vdso, import says what ptxed will report, and what to do. */
Test(import, hase_without_a_vdso_says_so)
{
	char *data = shared(HASE "/perf.data"), *dir = in_base("novdso");
	char *home = in_base("home"), *env_home, *env[2];
	struct run_result r;

	cr_assert_eq(mkdir(home, 0700), 0);
	cr_assert(asprintf(&env_home, "HOME=%s", home) > 0);
	env[0] = env_home;
	env[1] = NULL;
	cr_assert_eq(run_ptcollect(env, &r, "import", data, dir, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "maps [vdso]") && strstr(r.err, "--vdso") &&
		  strstr(r.err, "5b7f4e93791692274a59376c969b651ba1cb0d96"), "%s", r.err);
	run_free(&r);
	free(env_home);
	free(home);
	free(dir);
	free(data);
}

/* perf's build-id cache holds the vdso under the build-id perf.data names: import takes it. */
Test(import, the_vdso_comes_from_perfs_build_id_cache)
{
	char *data = shared(HASE "/perf.data"), *dir = in_base("cached");
	char *home = in_base("home"), *vdso = vdso_file(), *cmd, *env[2], *saved;
	struct run_result r;

	cr_assert(asprintf(&cmd, "mkdir -p '%s/.debug/[vdso]/5b7f4e93791692274a59376c969b651ba1cb0d96'"
			   " && cp '%s' '%s/.debug/[vdso]/5b7f4e93791692274a59376c969b651ba1cb0d96/"
			   "vdso'", home, vdso, home) > 0);
	cr_assert_eq(sh(cmd, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	cr_assert(asprintf(&env[0], "HOME=%s", home) > 0);
	env[1] = NULL;
	cr_assert_eq(run_ptcollect(env, &r, "import", data, dir, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(!strstr(r.err, "[vdso]"), "%s", r.err);
	run_free(&r);
	saved = in_base("cached/sysroot/vdso-x64.so");
	expect_same_file(saved, vdso);
	free(saved);
	free(env[0]);
	free(cmd);
	free(vdso);
	free(home);
	free(dir);
	free(data);
}

/*
 * Pipe mode as Debian's perf writes it: perf inject turns the file into a
 * pipe-mode stream (its own header features, the same records), and import
 * from standard input gives the same trace and sideband, byte for byte.
 * Cut short, it is refused with the offset, and nothing is left.
 */
Test(import, hase_through_a_pipe_from_perf_inject)
{
	static const char *const files[] = {
		"cpu0.pt", "cpu1.pt", "cpu2.pt", "cpu3.pt", "cpu0.pevent", "cpu1.pevent",
		"cpu2.pevent", "cpu3.pevent", "proc.pevent",
	};
	char *data = shared(HASE "/perf.data"), *fdir = in_base("file"), *pdir = in_base("pipe");
	char *cdir = in_base("cut"), *cmd;
	struct run_result r;

	if (!have("perf"))
		cr_skip_test("Debian's perf (linux-perf) is not installed: scripts/deps.sh adds it");
	import_hase(fdir, false);
	cr_assert(asprintf(&cmd, "perf inject -i '%s' -o - | '%s' import - '%s'", data,
			   run_bin(), pdir) > 0);
	cr_assert_eq(sh(cmd, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "format: pipe"), "%s", r.out);
	run_free(&r);
	free(cmd);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *a, *b;

		cr_assert(asprintf(&a, "%s/%s", fdir, files[i]) > 0);
		cr_assert(asprintf(&b, "%s/%s", pdir, files[i]) > 0);
		expect_same_file(a, b);
		free(a);
		free(b);
	}
	cr_assert(asprintf(&cmd, "perf inject -i '%s' -o - | head -c 9000 | '%s' import - '%s'",
			   data, run_bin(), cdir) > 0);
	cr_assert_eq(sh(cmd, &r), 0);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "import: -: at offset ") && strstr(r.err, "cut short"), "%s",
		  r.err);
	cr_expect(access(cdir, F_OK), "%s was left behind", cdir);
	run_free(&r);
	free(cmd);
	free(cdir);
	free(pdir);
	free(fdir);
	free(data);
}

/* A perf.data of a software event, recorded here by Debian's perf: not Intel PT, refused. */
Test(import, a_perf_data_without_intel_pt_is_refused)
{
	char *file = in_base("sw.data"), *dir = in_base("sw"), *cmd;
	struct run_result r;

	if (!have("perf"))
		cr_skip_test("Debian's perf (linux-perf) is not installed: scripts/deps.sh adds it");
	cr_assert(asprintf(&cmd, "perf record -q -e cpu-clock -o '%s' -- true", file) > 0);
	cr_assert_eq(sh(cmd, &r), 0);
	if (r.status)
		cr_skip_test("perf record cannot record a software event here: %s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "import", file, dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, file) && strstr(r.err, "no Intel PT trace") &&
		  strstr(r.err, "offset"), "%s", r.err);
	cr_expect_str_empty(r.out);
	cr_expect(access(dir, F_OK), "%s was left behind", dir);
	run_free(&r);
	free(cmd);
	cr_assert(asprintf(&cmd, "perf record -q -e cpu-clock -o - -- true 2>/dev/null | '%s' "
			   "import - '%s'", run_bin(), dir) > 0);
	cr_assert_eq(sh(cmd, &r), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "import: -: ") && strstr(r.err, "no Intel PT trace"), "%s",
		  r.err);
	cr_expect(access(dir, F_OK), "%s was left behind", dir);
	run_free(&r);
	free(cmd);
	free(dir);
	free(file);
}

/* The tests' perf.data files are perf's: Debian's perf reads every record of them. */
Test(import, perf_reads_the_files_the_tests_make)
{
	struct run_result r;
	struct pgen g;
	uint8_t *p;
	size_t n;
	char *file, *cmd;

	if (!have("perf"))
		cr_skip_test("Debian's perf (linux-perf) is not installed: scripts/deps.sh adds it");
	for (int mixed = 0; mixed < 2; mixed++) {
		pgen_standard(&g, false, mixed);
		p = pgen_file(&g, &n);
		file = temp_file(".data", p, n);
		cr_assert(asprintf(&cmd, "perf script --show-task-events --show-mmap-events "
				   "--show-switch-events --show-lost-events --itrace=e -i '%s'",
				   file) > 0);
		cr_assert_eq(sh(cmd, &r), 0);
		cr_expect_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.out, "PERF_RECORD_COMM exec: prog:100/100") &&
			  strstr(r.out, "PERF_RECORD_MMAP2 100/100: [0x400000(0x1000) @ 0") &&
			  strstr(r.out, "PERF_RECORD_LOST lost 5") &&
			  strstr(r.out, "PERF_RECORD_SWITCH_CPU_WIDE OUT"), "%s", r.out);
		cr_expect(!strstr(r.err, "non matching") && !strstr(r.err, "failed"), "%s", r.err);
		run_free(&r);
		unlink(file);
		free(file);
		free(cmd);
		free(p);
		pgen_free(&g);
	}
}

Test(import, bad_usage_is_refused_before_anything_is_made)
{
	char *data = in_base("x.data"), *exists = in_base("exists"), *fifo = in_base("fifo");
	char *dir = in_base("never");
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "import", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "expected PERF.DATA and the bundle DIR"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "import", data, dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, data) && strstr(r.err, "No such file"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(run_ptcollect(NULL, &r, "import", fifo, dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "not a regular file (a FIFO)"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(mkdir(exists, 0700), 0);
	cr_assert_eq(run_ptcollect(NULL, &r, "import", "-", exists, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "it exists"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "import", "-", dir, NULL), 0);
	cr_expect_eq(r.status, 2, "an empty standard input: %s", r.err);
	cr_expect(strstr(r.err, "import: -: at offset 0: the input ends inside the 16-byte "
			 "header"), "%s", r.err);
	cr_expect(access(dir, F_OK), "%s was left behind", dir);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "import", "--bogus", "-", dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--bogus"), "%s", r.err);
	run_free(&r);
	cr_expect(access(dir, F_OK), "%s was made", dir);
	free(dir);
	free(fifo);
	free(exists);
	free(data);
}

/* --vdso that is not an ELF image, or not a file, is refused by name; the bundle is removed. */
Test(import, a_vdso_that_is_not_elf_is_refused)
{
	char *data = shared(HASE "/perf.data"), *dir = in_base("badvdso"), *fifo = in_base("f");
	char *vdso = temp_file(".so", "not elf", 7);
	struct run_result r;

	cr_assert_eq(run_ptcollect(NULL, &r, "import", "--vdso", vdso, data, dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--vdso") && strstr(r.err, "not an ELF file"), "%s", r.err);
	cr_expect(access(dir, F_OK), "%s was left behind", dir);
	run_free(&r);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(run_ptcollect(NULL, &r, "import", "--vdso", fifo, data, dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--vdso") && strstr(r.err, "not a regular file"), "%s", r.err);
	cr_expect(access(dir, F_OK), "%s was left behind", dir);
	run_free(&r);
	free(fifo);
	unlink(vdso);
	free(vdso);
	free(dir);
	free(data);
}

/*
 * hase's perf.data cut at 33548 of its 37756 bytes, inside CPU_TOPOLOGY (a feature
 * import does not read): refused as any other cut, naming the feature (issue 22,
 * item 13); it was imported without a word before.
 */
Test(import, a_file_cut_inside_its_feature_sections_is_refused)
{
	char *data = shared(HASE "/perf.data"), *cut = in_base("cut.data"), *dir = in_base("cut");
	char *cmd;
	struct run_result r;

	cr_assert(asprintf(&cmd, "head -c 33548 '%s' > '%s'", data, cut) > 0);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	cr_assert_eq(run_ptcollect(NULL, &r, "import", cut, dir, NULL), 0);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "cut.data: at offset 14664: feature CPU_TOPOLOGY: 380 bytes at "
			 "33308 run past the end of the file (33548 bytes: cut short?)"), "%s",
		  r.err);
	cr_expect(access(dir, F_OK), "%s was left", dir);
	run_free(&r);
	free(dir);
	free(cut);
	free(data);
}
