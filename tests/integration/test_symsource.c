// SPDX-License-Identifier: MIT
/*
 * Symbols from wherever they are (issue 26), through decode --calls: the
 * mapped files under --sysroot DIR before their recorded path (perf's
 * --symfs), separate debug files by build-id and .gnu_debuglink under it
 * (checked: another build's is refused with a note), JIT code named by the
 * bundle's perf maps; and every miss is "[unknown] (object+0xoff)", never a
 * wrong name.
 *
 * The bundles are ptgen's program and trace with a sideband that maps the
 * program from /gone/prog.elf, a path that exists only under a sysroot.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manifest.h"
#include "perfmaps.h"
#include "run.h"
#include "sideband.h"
#include "suitewatch.h"
#include "testbundle.h"

#define PID 4242

SUITEWATCH(watchdog, 300)

TestSuite(symsource, .init = watchdog);

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static void mmap2(FILE *f, uint64_t addr, uint64_t len, const char *file, uint64_t time)
{
	uint8_t body[64 + 32] = { 0 };
	uint32_t pid[2] = { PID, PID };

	cr_assert_lt(strlen(file), 32);
	memcpy(body, pid, 8);
	memcpy(body + 8, &addr, 8);
	memcpy(body + 16, &len, 8);
	memcpy(body + 64, file, strlen(file));
	/* The name with its NUL, padded to 8 bytes, as the kernel writes it. */
	testbundle_sb_record(f, 10 /* MMAP2 */, body, 64 + ((strlen(file) + 8) & ~7ul), time);
}

/*
 * A bundle in @dir (made here) whose one stream's sideband maps /gone/prog.elf
 * (@file_len bytes of it from 0x400000) and, with @anon, "//anon" at f and g
 * (0x401010..0x402000): JIT code. The program is left in DIR/root/gone, not
 * in the bundle. Returns @dir.
 */
static char *jit_bundle(uint64_t file_len, bool anon)
{
	char *dir = strdup("/tmp/ptc-symsrc-XXXXXX"), path[4200];
	char *argv[] = { run_testprog("ptgen"), "-n", "300", "-p", "2", dir, NULL };
	uint32_t pid[2] = { PID, PID };
	struct error e = { 0 };
	struct run_result r;
	struct mstream *st;
	struct manifest m;
	struct stat sb;
	FILE *f;
	int fd;

	cr_assert(mkdtemp(dir));
	cr_assert_eq(run_argv(argv, NULL, &r), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	free(argv[0]);
	sh("mkdir -p '%s/root/gone' && mv '%s/prog.elf' '%s/root/gone/' && mv '%s/trace.pt' "
	   "'%s/cpu0.pt' && rm '%s/prog.bin'", dir, dir, dir, dir, dir, dir);
	snprintf(path, sizeof(path), "%s/cpu0.pevent", dir);
	f = fopen(path, "w");
	cr_assert(f);
	testbundle_sb_record(f, 12 /* ITRACE_START */, pid, 8, 1);
	mmap2(f, 0x400000, file_len, "/gone/prog.elf", 2);
	if (anon)
		mmap2(f, 0x401010, 0xff0, "//anon", 3);
	fclose(f);
	testbundle_describe_cpu(&m, NULL);
	st = manifest_add_stream(&m);
	cr_assert(st);
	cr_assert_eq(manifest_set(&st->file, "cpu0.pt"), 0);
	cr_assert_eq(manifest_set(&st->sideband, "cpu0.pevent"), 0);
	st->cpu = 0;
	st->tid = -1;
	snprintf(path, sizeof(path), "%s/cpu0.pt", dir);
	cr_assert_eq(stat(path, &sb), 0);
	st->bytes = (uint64_t)sb.st_size;
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(manifest_write(&m, fd, &e), 0, "%s", e.why);
	close(fd);
	manifest_free(&m);
	return dir;
}

/* decode DIR --calls [--sysroot DIR/root] [EXTRA]. */
static void calls(const char *dir, bool sysroot, const char *extra, struct run_result *r)
{
	char root[4200];

	snprintf(root, sizeof(root), "%s/root", dir);
	if (sysroot && extra)
		cr_assert_eq(run_ptcollect(NULL, r, "decode", dir, "--calls", "--sysroot", root,
					   extra, NULL), 0);
	else if (sysroot)
		cr_assert_eq(run_ptcollect(NULL, r, "decode", dir, "--calls", "--sysroot", root,
					   NULL), 0);
	else
		cr_assert_eq(run_ptcollect(NULL, r, "decode", dir, "--calls", NULL), 0);
}

static void cleanup(char *dir)
{
	sh("rm -rf '%s'", dir);
	free(dir);
}

Test(symsource, sysroot_gives_a_bundle_the_program_its_sideband_maps)
{
	char *dir = jit_bundle(0x2000, false);
	struct run_result r;

	calls(dir, false, NULL, &r);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "bad file: /gone/prog.elf") &&
		  strstr(r.err, "--sysroot DIR may say where the files are"), "%s", r.err);
	run_free(&r);
	calls(dir, true, NULL, &r);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "call f+0x0 (0x401010) from _start+0x0\n"), "%.2000s", r.out);
	cr_expect(strstr(r.out, "call g+0x0 (0x401020) from f+0x0\n"), "%.2000s", r.out);
	run_free(&r);
	/* Before the bundle's own sysroot: an empty file there is never read. */
	sh("mkdir -p '%s/sysroot/gone' && : > '%s/sysroot/gone/prog.elf'", dir, dir);
	calls(dir, true, NULL, &r);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "call f+0x0 (0x401010) from _start+0x0\n"), "%.2000s", r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "decode", dir, "--sysroot", "/nonexistent-root",
				   NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--sysroot '/nonexistent-root'"), "%s", r.err);
	run_free(&r);
	cleanup(dir);
}

/*
 * The acceptance: hase-loopy's perf.data imported, its program (recorded at
 * /home/joerg/...) only under --sysroot DIR: decoded without an error.
 */
Test(symsource, sysroot_decodes_the_imported_hase_trace_without_errors)
{
	static const char recorded[] = "/home/joerg/git/angr/hase/tests/bin/loopy";
	char *data = run_shared("traces/hase-loopy-skylake/perf.data");
	char *loopy = run_shared("traces/hase-loopy-skylake/loopy");
	char dir[] = "/tmp/ptc-symsrc-hase-XXXXXX", bundle[64], root[64];
	struct run_result r;

	cr_assert(mkdtemp(dir));
	snprintf(bundle, sizeof(bundle), "%s/bundle", dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	cr_assert_eq(run_ptcollect(NULL, &r, "import", data, bundle, NULL), 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "decode", bundle, "cpu2", "--stats", NULL), 0);
	cr_expect_eq(r.status, 2, "without the program: %s", r.err);
	run_free(&r);
	sh("mkdir -p '%s%s' && cp '%s' '%s%s/'", root, recorded, loopy, root, recorded);
	cr_assert_eq(run_ptcollect(NULL, &r, "decode", bundle, "cpu2", "--stats", "--sysroot",
				   root, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "decode errors: 0"), "%s", r.out);
	cr_expect(strstr(r.out, "instructions: 57"), "%s", r.out);
	run_free(&r);
	sh("rm -rf '%s'", dir);
	free(data);
	free(loopy);
}

/*
 * JIT code: f and g lie in an anonymous executable mapping, so the trace's image has
 * no bytes there (each call into it is a decode error); the bundle's perf map names
 * them. Without a map, or where its entries overlap, they are [unknown].
 */
Test(symsource, a_perf_map_names_jit_code_in_an_anonymous_mapping)
{
	char *dir = jit_bundle(0x1010, true), tl[4200], root[4200];
	struct run_result r;

	calls(dir, true, NULL, &r);
	cr_expect_eq(r.status, 2, "the calls into JIT code cannot be decoded further: %s", r.err);
	cr_expect(strstr(r.out, "call [unknown] (//anon+0x0) (0x401010) from _start+0x0\n"),
		  "%.2000s", r.out);
	run_free(&r);
	sh("mkdir '%s/perf-maps' && printf '401010 10 jit_f\\n401020 10 jit_g\\n' > "
	   "'%s/perf-maps/perf-%d.map'", dir, dir, PID);
	calls(dir, true, NULL, &r);
	cr_expect(strstr(r.out, "call jit_f+0x0 (0x401010) from _start+0x0\n"), "%.2000s", r.out);
	cr_expect(!strstr(r.out, "[unknown]"), "%.2000s", r.out);
	run_free(&r);
	/* The timeline names the JIT function too. */
	snprintf(tl, sizeof(tl), "%s/t.json", dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	cr_assert_eq(run_ptcollect(NULL, &r, "decode", dir, "--sysroot", root, "--timeline", tl,
				   NULL), 0);
	run_free(&r);
	sh("grep -q '\"name\": *\"jit_f\"' '%s'", tl);
	/* --sysroot DIR's own DIR/tmp/perf-PID.map comes first. */
	sh("mkdir '%s/root/tmp' && printf '401010 10 root_f\\n' > '%s/root/tmp/perf-%d.map'",
	   dir, dir, PID);
	calls(dir, true, NULL, &r);
	cr_expect(strstr(r.out, "call root_f+0x0 (0x401010) from _start+0x0\n"), "%.2000s",
		  r.out);
	run_free(&r);
	/* Without --sysroot too: the bundle's maps are the bundle's. */
	sh("mkdir -p '%s/sysroot' && mv '%s/root/gone' '%s/sysroot/'", dir, dir, dir);
	calls(dir, false, NULL, &r);
	cr_expect(strstr(r.out, "call jit_f+0x0 (0x401010) from _start+0x0\n"), "%.2000s", r.out);
	run_free(&r);
	cleanup(dir);
}

/* A perf map of garbage lines, overlapping entries, huge sizes: notes and [unknown]. */
Test(symsource, a_perf_map_of_garbage_gives_a_note_and_unknown)
{
	char *dir = jit_bundle(0x1010, true);
	struct run_result r;

	sh("mkdir '%s/perf-maps' && { printf '401010 zz bad\\n40101g 10 nothex\\n"
	   "401010 ffffffffffffffff huge\\n0 401020 covers\\n'; head -c 9000 /dev/zero | tr '\\0' a;"
	   " printf '\\n401010 10 old\\n401018 10 new\\n'; } > '%s/perf-maps/perf-%d.map'",
	   dir, dir, PID);
	calls(dir, true, NULL, &r);
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.out, "call [unknown] (//anon+0x0) (0x401010) from _start+0x0\n"),
		  "%.2000s", r.out);
	cr_expect(!strstr(r.out, "old") && !strstr(r.out, "new") && !strstr(r.out, "huge") &&
		  !strstr(r.out, "covers"), "%.2000s", r.out);
	cr_expect(strstr(r.err, "perf-4242.map: 4 line(s) skipped") &&
		  strstr(r.err, "(line 1: START and SIZE are not hex"), "%s", r.err);
	cr_expect(strstr(r.err, "perf-4242.map: 3 entries overlap"), "%s", r.err);
	run_free(&r);
	cleanup(dir);
}

/* A perf map planted as a link (to a map that would name the code) is not read. */
Test(symsource, a_perf_map_that_is_a_link_is_not_followed)
{
	char *dir = jit_bundle(0x1010, true);
	struct run_result r;

	sh("mkdir '%s/perf-maps' && printf '401010 10 planted\\n' > '%s/elsewhere.map' && "
	   "ln -s '%s/elsewhere.map' '%s/perf-maps/perf-%d.map'", dir, dir, dir, dir, PID);
	calls(dir, true, NULL, &r);
	cr_expect(strstr(r.out, "call [unknown] (//anon+0x0) (0x401010)"), "%.2000s", r.out);
	cr_expect(!strstr(r.out, "planted"), "%.2000s", r.out);
	cr_expect(strstr(r.err, "perf map not used: ") && strstr(r.err, "a symbolic link"), "%s",
		  r.err);
	run_free(&r);
	cleanup(dir);
}

/* The program under the sysroot stripped, its symbols in prog.elf.debug beside it (linked). */
static char *stripped_bundle(void)
{
	char *dir = jit_bundle(0x2000, false);

	sh("cd '%s/root/gone' && objcopy --only-keep-debug prog.elf prog.elf.debug && "
	   "objcopy --strip-all --add-gnu-debuglink=prog.elf.debug prog.elf stripped && "
	   "mv stripped prog.elf", dir);
	return dir;
}

Test(symsource, a_stripped_binary_without_a_debug_file_is_unknown)
{
	char *dir = stripped_bundle();
	struct run_result r;

	sh("rm '%s/root/gone/prog.elf.debug'", dir);
	calls(dir, true, NULL, &r);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "call [unknown] (prog.elf+0x1010) (0x401010) from [unknown] "
			 "(prog.elf+0x1000)\n"), "%.2000s", r.out);
	run_free(&r);
	cleanup(dir);
}

Test(symsource, the_debuglink_file_under_the_sysroots_debug_tree_names_a_stripped_binary)
{
	char *dir = stripped_bundle();
	struct run_result r;

	sh("mkdir -p '%s/root/usr/lib/debug/gone' && mv '%s/root/gone/prog.elf.debug' "
	   "'%s/root/usr/lib/debug/gone/'", dir, dir, dir);
	calls(dir, true, NULL, &r);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "call f+0x0 (0x401010) from _start+0x0\n"), "%.2000s", r.out);
	cr_expect(!strstr(r.err, "warning"), "%s", r.err);
	run_free(&r);
	/* The same file changed (another build's): its CRC differs, it is refused. */
	sh("printf x >> '%s/root/usr/lib/debug/gone/prog.elf.debug'", dir);
	calls(dir, true, NULL, &r);
	cr_expect(strstr(r.out, "call [unknown] (prog.elf+0x1010) (0x401010) from [unknown] "
			 "(prog.elf+0x1000)\n"), "%.2000s", r.out);
	cr_expect(strstr(r.err, "usr/lib/debug/gone/prog.elf.debug: not used as the debug file") &&
		  strstr(r.err, "CRC mismatch"), "%s", r.err);
	run_free(&r);
	cleanup(dir);
}

/* A GNU build-id note of 20 bytes, the last @last, into @path. */
static void add_build_id(const char *path, int last)
{
	char note[4300];

	snprintf(note, sizeof(note), "%s.note", path);
	sh("printf '\\004\\000\\000\\000\\024\\000\\000\\000\\003\\000\\000\\000GNU\\000"
	   "\\001\\002\\003\\004\\005\\006\\007\\010\\011\\012\\013\\014\\015\\016\\017\\020"
	   "\\021\\022\\023\\%03o' > '%s' && objcopy --add-section .note.gnu.build-id='%s' '%s' && "
	   "rm '%s'", last, note, note, path, note);
}

Test(symsource, the_build_id_debug_file_is_used_and_another_builds_refused)
{
	char *dir = jit_bundle(0x2000, false), dbg[4200];
	struct run_result r;

	sh("cd '%s/root/gone' && objcopy --only-keep-debug prog.elf prog.debug && "
	   "objcopy --strip-all prog.elf stripped && mv stripped prog.elf", dir);
	snprintf(dbg, sizeof(dbg), "%s/root/gone/prog.elf", dir);
	add_build_id(dbg, 024);
	snprintf(dbg, sizeof(dbg), "%s/root/gone/prog.debug", dir);
	add_build_id(dbg, 024);
	sh("mkdir -p '%s/root/usr/lib/debug/.build-id/01' && mv '%s' "
	   "'%s/root/usr/lib/debug/.build-id/01/02030405060708090a0b0c0d0e0f1011121314.debug'",
	   dir, dbg, dir);
	calls(dir, true, NULL, &r);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "call g+0x0 (0x401020) from f+0x0\n"), "%.2000s", r.out);
	run_free(&r);
	/* A debug file at that path whose own build-id is another build's. */
	sh("cd '%s/root/gone' && cp '%s/root/usr/lib/debug/.build-id/01/"
	   "02030405060708090a0b0c0d0e0f1011121314.debug' good.debug", dir, dir);
	snprintf(dbg, sizeof(dbg), "%s/root/gone/good.debug", dir);
	sh("objcopy --remove-section .note.gnu.build-id '%s'", dbg);
	add_build_id(dbg, 025);
	sh("mv '%s' '%s/root/usr/lib/debug/.build-id/01/02030405060708090a0b0c0d0e0f1011121314."
	   "debug'", dbg, dir);
	calls(dir, true, NULL, &r);
	cr_expect(strstr(r.out, "call [unknown] (prog.elf+0x1020) (0x401020) from [unknown] "
			 "(prog.elf+0x1010)\n"), "%.2000s", r.out);
	cr_expect(strstr(r.err, "build-id mismatch: it belongs to another build"), "%s", r.err);
	run_free(&r);
	cleanup(dir);
}

/*
 * record's copy of the perf maps, on a real process: jitprog's JIT code is in its
 * /proc maps (as the sideband synthesized from /proc shows it); its map is copied into
 * perf-maps/ (0700, the file 0600, the same bytes) and listed in the manifest. A map
 * planted as a symbolic link is not followed: a warning, nothing copied.
 */
struct live_case {
	const char *how;	/* jitprog's map, link or none */
	bool hardlink;		/* a second name made for the map */
	const char *tamper;	/* a shell command on the map (%s) once it is written, or NULL */
	uid_t owner;		/* perfmaps_copy()'s */
	bool as_other;		/* jitprog runs as uid and gid OTHER_UID (setpriv) */
};

#define OTHER_UID 54321

static void copy_live(const struct live_case *lc, struct manifest *m, struct warnings *w,
		      char **dir, int *pid)
{
	char *prog = run_testprog("jitprog"), path[4200];
	char *argv[] = { prog, (char *)lc->how, "stdin", NULL };
	char *other[] = { "setpriv", "--reuid=54321", "--regid=54321", "--clear-groups", prog,
			  (char *)lc->how, "stdin", NULL };
	struct error e = { 0 };
	struct run_child c;
	int dfd, fd;

	*dir = strdup("/tmp/ptc-symsrc-rec-XXXXXX");
	cr_assert(mkdtemp(*dir));
	cr_assert_eq(run_start(lc->as_other ? other : argv, &c), 0);
	cr_assert_eq(run_wait_line(&c, "ready", 30), 0);
	*pid = c.pid;
	if (lc->hardlink) {
		char map[64];

		snprintf(map, sizeof(map), "/tmp/perf-%d.map", c.pid);
		snprintf(path, sizeof(path), "%s/second-name", *dir);
		cr_assert_eq(link(map, path), 0);
	}
	if (lc->tamper) {
		char map[64];

		snprintf(map, sizeof(map), "/tmp/perf-%d.map", c.pid);
		sh(lc->tamper, map, map, map);
	}
	snprintf(path, sizeof(path), "%s/proc.pevent", *dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_gt(sideband_synthesize_proc(c.pid, fd, &e), 0, "%s", e.why);
	close(fd);
	manifest_init(m);
	cr_assert_eq(manifest_set(&m->proc_sideband, "proc.pevent"), 0);
	dfd = open(*dir, O_RDONLY | O_DIRECTORY);
	memset(w, 0, sizeof(*w));
	perfmaps_copy(dfd, "/tmp", lc->owner, m, w);
	close(dfd);
	cr_expect_eq(run_end(&c, 10), 0, "jitprog %s: its exit status", lc->how);
	free(prog);
}

static void copy_from_live(const char *how, bool hardlink, struct manifest *m,
			   struct warnings *w, char **dir, int *pid)
{
	struct live_case lc = { .how = how, .hardlink = hardlink,
				.owner = PERFMAPS_OWNER_OF_PROCESS };

	copy_live(&lc, m, w, dir, pid);
}

Test(symsource, record_copies_the_perf_map_of_a_process_with_jit_code)
{
	char *dir, path[4200], map[64], cmd[8600];
	struct manifest m;
	struct warnings w;
	struct stat st;
	int pid;

	copy_from_live("map", false, &m, &w, &dir, &pid);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", pid);
	cr_expect_eq(w.nr, 0, "%s", w.msg[0]);
	cr_assert_eq(m.nr_perf_maps, 1);
	cr_expect_eq(m.perf_maps[0].pid, pid);
	snprintf(path, sizeof(path), "perf-maps/perf-%d.map", pid);
	cr_expect_str_eq(m.perf_maps[0].file, path);
	cr_expect(!m.perf_maps[0].cut);
	snprintf(path, sizeof(path), "%s/perf-maps/perf-%d.map", dir, pid);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0600);
	cr_expect_eq((uint64_t)st.st_size, m.perf_maps[0].bytes);
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s' && grep -q ' 6 jit_answer$' '%s'", map,
		 path, path);
	cr_expect_eq(system(cmd), 0, "%s", cmd);
	snprintf(path, sizeof(path), "%s/perf-maps", dir);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 07777, 0700);
	unlink(map);
	manifest_free(&m);
	cleanup(dir);
}

Test(symsource, record_does_not_follow_a_perf_map_planted_as_a_link)
{
	char *dir, path[4200], map[64];
	struct manifest m;
	struct warnings w;
	struct stat st;
	int pid;

	copy_from_live("link", false, &m, &w, &dir, &pid);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", pid);
	cr_expect_eq(m.nr_perf_maps, 0);
	cr_expect_eq(w.nr, 1);
	cr_expect(strstr(w.msg[0], map) && strstr(w.msg[0], "not copied: a symbolic link"), "%s",
		  w.msg[0]);
	cr_expect_eq(m.nr_perf_maps_refused, 1);
	cr_expect(m.nr_perf_maps_refused == 1 && m.perf_maps_refused[0].pid == pid &&
		  strstr(m.perf_maps_refused[0].why, "a symbolic link"), "the manifest lists it");
	snprintf(path, sizeof(path), "%s/perf-maps", dir);
	cr_expect_neq(stat(path, &st), 0, "an empty perf-maps/ is not left");
	unlink(map);
	manifest_free(&m);
	cleanup(dir);
}

/* A process with JIT code that wrote no map: nothing copied, nothing said. */
Test(symsource, record_copies_nothing_for_a_process_without_a_perf_map)
{
	struct manifest m;
	struct warnings w;
	char *dir;
	int pid;

	copy_from_live("none", false, &m, &w, &dir, &pid);
	cr_expect_eq(m.nr_perf_maps, 0);
	cr_expect_eq(w.nr, 0, "%s", w.msg[0]);
	manifest_free(&m);
	cleanup(dir);
}

/* A map with a second name (a hard link to it, made by someone else) is not copied. */
Test(symsource, record_does_not_copy_a_perf_map_with_a_second_name)
{
	struct manifest m;
	struct warnings w;
	char *dir, map[64];
	int pid;

	copy_from_live("map", true, &m, &w, &dir, &pid);
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", pid);
	cr_expect_eq(m.nr_perf_maps, 0);
	cr_expect_eq(w.nr, 1);
	cr_expect(strstr(w.msg[0], map) && strstr(w.msg[0], "has 2 names (a hard link)"), "%s",
		  w.msg[0]);
	cr_expect(m.nr_perf_maps_refused == 1 && m.perf_maps_refused[0].pid == pid &&
		  strstr(m.perf_maps_refused[0].why, "a hard link"), "the manifest lists it");
	unlink(map);
	manifest_free(&m);
	cleanup(dir);
}

/*
 * A map record may not trust is not copied: another user's (neither the process's nor
 * root's), one group or others may write, one that is not a regular file (a FIFO, never
 * opened). Each is a warning naming the file and why, and an entry of the manifest's
 * perf_maps_refused; nothing is copied.
 */
static const struct {
	const char *tamper, *says;
	uid_t owner;
} refused[] = {
	{ "chown 54321 '%s'", "owned by uid 54321, neither the process's (uid 0) nor root",
	  PERFMAPS_OWNER_OF_PROCESS },
	{ "chown 54321 '%s'", "owned by uid 54321, neither the process's (uid 4242) nor root",
	  4242 },
	{ "chmod 0620 '%s'", "group or others may write it (mode 0620)",
	  PERFMAPS_OWNER_OF_PROCESS },
	{ "chmod 0602 '%s'", "group or others may write it (mode 0602)",
	  PERFMAPS_OWNER_OF_PROCESS },
	{ "rm '%s' && mkfifo -m 0600 '%s'", "not a regular file", PERFMAPS_OWNER_OF_PROCESS },
	{ "rm '%s' && mkdir -m 0700 '%s'", "not a regular file", PERFMAPS_OWNER_OF_PROCESS },
};

Test(symsource, record_refuses_a_perf_map_of_another_user_writable_by_others_or_not_a_file)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct live_case lc = { .how = "map", .tamper = refused[i].tamper,
					.owner = refused[i].owner };
		char *dir, map[64], path[4200];
		struct manifest m;
		struct warnings w;
		struct stat st;
		int pid;

		copy_live(&lc, &m, &w, &dir, &pid);
		snprintf(map, sizeof(map), "/tmp/perf-%d.map", pid);
		cr_expect_eq(m.nr_perf_maps, 0, "%s", lc.tamper);
		cr_expect_eq(w.nr, 1, "%s: %d warnings", lc.tamper, w.nr);
		cr_expect(strstr(w.msg[0], map) && strstr(w.msg[0], "not copied: ") &&
			  strstr(w.msg[0], refused[i].says), "%s: %s", lc.tamper, w.msg[0]);
		cr_assert_eq(m.nr_perf_maps_refused, 1, "%s", lc.tamper);
		cr_expect_eq(m.perf_maps_refused[0].pid, pid);
		cr_expect(strstr(m.perf_maps_refused[0].why, refused[i].says), "%s: %s", lc.tamper,
			  m.perf_maps_refused[0].why);
		snprintf(path, sizeof(path), "%s/perf-maps", dir);
		cr_expect_neq(stat(path, &st), 0, "%s: an empty perf-maps/ is not left", lc.tamper);
		sh("rm -rf '%s'", map);
		manifest_free(&m);
		cleanup(dir);
	}
}

/* The process's own user's map is copied, and root's: the owners perf reads too. */
Test(symsource, record_copies_a_perf_map_of_the_processs_user_or_of_root)
{
	static const struct live_case cases[] = {
		/* jitprog runs as another user and writes its map as that user */
		{ .how = "map", .as_other = true, .owner = PERFMAPS_OWNER_OF_PROCESS },
		/* the workload's uid given: its map is that user's */
		{ .how = "map", .tamper = "chown 54321 '%s'", .owner = OTHER_UID },
		/* root's, for a process of another user */
		{ .how = "map", .as_other = true, .tamper = "chown 0 '%s'",
		  .owner = PERFMAPS_OWNER_OF_PROCESS },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *dir, map[64];
		struct manifest m;
		struct warnings w;
		int pid;

		copy_live(&cases[i], &m, &w, &dir, &pid);
		snprintf(map, sizeof(map), "/tmp/perf-%d.map", pid);
		cr_expect_eq(w.nr, 0, "case %zu: %s", i, w.msg[0]);
		cr_expect_eq(m.nr_perf_maps, 1, "case %zu", i);
		cr_expect_eq(m.nr_perf_maps_refused, 0, "case %zu", i);
		unlink(map);
		manifest_free(&m);
		cleanup(dir);
	}
}

/*
 * info lists the perf maps a recording copied, each with its bytes (text and --json), and
 * those it refused with why; a copy changed since (its bytes not the manifest's) is a problem.
 */
Test(symsource, info_lists_the_perf_maps_copied_with_their_bytes_and_those_refused)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *dir = testbundle_dir(), path[4200];
	struct mperfmap_refused *pr;
	struct run_result r;
	struct mperfmap *pm;
	struct manifest m;
	json_error_t je;
	json_t *j, *e;

	testbundle_describe(&m, &pc);
	pm = manifest_add_perf_map(&m);
	cr_assert(pm);
	pm->pid = 4242;
	pm->file = strdup("perf-maps/perf-4242.map");
	pm->bytes = 17;
	pr = manifest_add_perf_map_refused(&m);
	cr_assert(pr);
	pr->pid = 4343;
	pr->why = strdup("group or others may write it (mode 0602)");
	testbundle_write_manifest(dir, &m, true);
	sh("mkdir -m 0700 '%s/perf-maps' && printf '401000 10 jit_fn\\n' > "
	   "'%s/perf-maps/perf-4242.map'", dir, dir);

	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "perf_maps:") && strstr(r.out, "file: perf-maps/perf-4242.map") &&
		  strstr(r.out, "bytes: 17"), "%s", r.out);
	cr_expect(strstr(r.out, "perf_maps_refused:") && strstr(r.out, "pid: 4343"), "%s", r.out);
	cr_expect(strstr(r.err, "the perf map of pid 4343 was not copied: group or others may "
			 "write it (mode 0602)"), "%s", r.err);
	cr_expect(!strstr(r.err, "perf-4242.map"), "%s", r.err);
	run_free(&r);

	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", dir, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	j = json_loads(r.out, 0, &je);
	cr_assert(j, "%s: %s", je.text, r.out);
	e = json_array_get(json_object_get(j, "perf_maps"), 0);
	cr_expect_eq(json_integer_value(json_object_get(e, "pid")), 4242);
	cr_expect_str_eq(json_string_value(json_object_get(e, "file")), "perf-maps/perf-4242.map");
	cr_expect_str_eq(json_string_value(json_object_get(e, "bytes")), "17");
	e = json_array_get(json_object_get(j, "perf_maps_refused"), 0);
	cr_expect_eq(json_integer_value(json_object_get(e, "pid")), 4343);
	cr_expect_str_eq(json_string_value(json_object_get(e, "why")),
			 "group or others may write it (mode 0602)");
	json_decref(j);
	run_free(&r);

	/* Changed since: said, with both sizes. */
	snprintf(path, sizeof(path), "%s/perf-maps/perf-4242.map", dir);
	cr_assert_eq(truncate(path, 5), 0);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect(strstr(r.err, "perf-maps/perf-4242.map has 5 bytes, the manifest says 17"), "%s",
		  r.err);
	run_free(&r);
	testbundle_remove(dir);
	free(dir);
}
