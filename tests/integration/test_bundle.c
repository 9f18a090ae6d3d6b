// SPDX-License-Identifier: MIT
/*
 * The decoder-ready bundle: sideband as the kernel writes it (a real dummy
 * event here), records synthesized from /proc, the manifest the recorder
 * writes read back by `info`, and `dump` of sideband and of libipt-encoded
 * trace.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auxring.h"
#include "bundle.h"
#include "decoders.h"
#include "manifest.h"
#include "oracle.h"
#include "run.h"
#include "sbrun.h"
#include "sideband.h"
#include "stream.h"
#include "symbols.h"
#include "testbundle.h"
#include "vdso.h"

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *b;
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(fstat(fd, &st), 0);
	b = malloc((size_t)st.st_size + 1);
	cr_assert_eq(read(fd, b, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

/* Every record of @buf parses by libipt's rules; counts per type. */
static void parse_all(const uint8_t *buf, size_t len, unsigned int counts[32])
{
	struct error e = { 0 };
	size_t off = 0;

	memset(counts, 0, 32 * sizeof(counts[0]));
	while (off < len) {
		struct sb_record r;
		int n = sideband_parse(buf, len, off, SIDEBAND_SAMPLE_TYPE, &r, &e);

		cr_assert_gt(n, 0, "%s", e.why);
		if (r.type < 32)
			counts[r.type]++;
		off += (size_t)n;
	}
}

Test(sideband, real_kernel_records_parse_by_libipts_rules)
{
	char *prog = run_testprog("filtertarget"), *argv[] = { prog, "1000", NULL };
	int out = memfd_create("sb", 0), ret;
	unsigned int counts[32];
	bool found = false;
	uint8_t *buf;
	size_t len, off = 0;
	pid_t pid;

	/* With attr.build_id (as record sets it): the MMAP2 records keep libipt's layout. */
	ret = sbrun(argv, true, out, &pid);
	if (ret)
		cr_skip_test("perf_event_open of a dummy event: %s (perf_event_paranoid?)",
			     strerror(-ret));
	len = (size_t)lseek(out, 0, SEEK_END);
	buf = malloc(len + 1);
	cr_assert_eq(pread(out, buf, len, 0), (ssize_t)len);
	parse_all(buf, len, counts);
	cr_expect_geq(counts[PERF_RECORD_MMAP2], 2, "the program and its loader");
	cr_expect_geq(counts[PERF_RECORD_COMM], 1, "the exec's COMM");
	cr_expect_geq(counts[PERF_RECORD_EXIT], 1);
	while (off < len) {
		struct sb_record rec;
		struct error e = { 0 };
		int n = sideband_parse(buf, len, off, SIDEBAND_SAMPLE_TYPE, &rec, &e);
		const char *f = sideband_mmap_file(&rec);
		char id[41], want[41];

		if (rec.type == PERF_RECORD_MMAP2 && f && !strcmp(f, prog)) {
			found = true;
			cr_expect_eq(rec.sid.pid, (uint32_t)pid);
			cr_assert_eq(symbols_build_id(prog, want, sizeof(want)), 0);
			cr_expect_eq(sideband_mmap_build_id(&rec, id, sizeof(id)), 20);
			cr_expect_str_eq(id, want, "the build-id the kernel read at the mmap");
		}
		off += (size_t)n;
	}
	cr_expect(found, "no MMAP2 of %s", prog);
	close(out);
	free(buf);
	free(prog);
}

static void *idle_thread(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

Test(sideband, proc_synthesis_has_every_thread_and_code_mapping)
{
	int ctl[2], out = memfd_create("proc", 0);
	unsigned int counts[32];
	struct error e = { 0 };
	char maps[128], line[512];
	size_t len, off = 0;
	int mmaps = 0, nr = 0;
	uint8_t *buf;
	FILE *f;
	pid_t pid;

	cr_assert_eq(pipe(ctl), 0);
	pid = fork();
	if (pid == 0) {
		pthread_t t[3];

		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, idle_thread, NULL);
		if (write(ctl[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert_eq(read(ctl[0], line, 1), 1);
	nr = sideband_synthesize_proc(pid, out, &e);
	cr_assert_gt(nr, 0, "%s", e.why);
	len = (size_t)lseek(out, 0, SEEK_END);
	buf = malloc(len + 1);
	cr_assert_eq(pread(out, buf, len, 0), (ssize_t)len);
	parse_all(buf, len, counts);
	cr_expect_eq(counts[PERF_RECORD_COMM], 4, "main thread and three more");
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char perms[8];

		if (sscanf(line, "%*x-%*x %7s", perms) == 1 && perms[2] == 'x')
			mmaps++;
	}
	if (f)
		fclose(f);
	cr_expect_eq(counts[PERF_RECORD_MMAP2], (unsigned int)mmaps);
	while (off < len) {
		struct sb_record r;
		int n = sideband_parse(buf, len, off, SIDEBAND_SAMPLE_TYPE, &r, &e);

		cr_assert_gt(n, 0, "%s", e.why);
		cr_expect_eq(r.sid.time, 0, "stamped to apply first");
		cr_expect_eq(r.sid.pid, (uint32_t)pid);
		off += (size_t)n;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* Gone: a runtime error (nothing the user typed was wrong) that says so. */
	cr_expect_eq(sideband_synthesize_proc(pid, out, &e), -ESRCH);
	cr_expect(!e.usage && strstr(e.why, "exited before its state could be read"), "%s", e.why);
	free(buf);
	close(out);
}

Test(sideband, saved_vdso_equals_a_processs_vdso)
{
	char path[] = "/tmp/ptc-vdso-XXXXXX", line[512], mem[64];
	unsigned long long lo = 0, hi = 0;
	struct error e = { 0 };
	int fd = mkstemp(path), mfd;
	size_t len;
	uint8_t *saved, *theirs;
	FILE *f;
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	cr_assert_eq(vdso_save(fd, &e), 0, "%s", e.why);
	close(fd);
	saved = slurp(path, &len);
	snprintf(mem, sizeof(mem), "/proc/%d/maps", pid);
	f = fopen(mem, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%llx-%llx", &lo, &hi);
	if (f)
		fclose(f);
	cr_assert_eq(hi - lo, len);
	theirs = malloc(len);
	snprintf(mem, sizeof(mem), "/proc/%d/mem", pid);
	mfd = open(mem, O_RDONLY);
	cr_assert_eq(pread(mfd, theirs, len, (off_t)lo), (ssize_t)len);
	cr_expect_eq(memcmp(saved, theirs, len), 0);
	close(mfd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(path);
	free(saved);
	free(theirs);
}

/*
 * A bundle recorded with the event term (Event Trace): a problem when the linked libipt does
 * not decode it (2.0.5: make LIBIPT=system), none when it does.
 */
Test(bundle, info_names_event_trace_the_linked_libipt_cannot_decode)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	struct pt_version v = pt_library_version();
	unsigned have = (unsigned)v.major << 8 | v.minor;
	char *dir = testbundle_dir(), want[256];
	struct manifest m;
	struct run_result r;

	if (have > (LIBIPT_VERSION_MAJOR << 8 | LIBIPT_VERSION_MINOR))
		have = LIBIPT_VERSION_MAJOR << 8 | LIBIPT_VERSION_MINOR;
	testbundle_describe(&m, &pc);
	m.attr.config |= 1ull << 31;
	testbundle_write_manifest(dir, &m, true);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	snprintf(want, sizeof(want), "the trace holds Event Trace packets (CFE, EVD: the event "
		 "term, config bit 31) and this libipt %u.%u.%u does not decode Event Trace "
		 "packets; ptcollect built with libipt \u2265 2.1 does", v.major, v.minor, v.patch);
	if (have < 0x201)
		cr_expect(strstr(r.out, want), "%s in %s", want, r.out);
	else
		cr_expect(!strstr(r.out, "Event Trace"), "%s", r.out);
	run_free(&r);
	testbundle_remove(dir);
	free(dir);
}

Test(bundle, info_reads_back_what_the_recorder_wrote)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1, .time_zero = 123456789,
					   .time_mult = 1000, .time_shift = 10 };
	char *dir = testbundle_dir(), want[512];
	struct run_result r;
	uint8_t *m;
	size_t len;

	testbundle_write(dir, &pc, true);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", dir, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"complete\": true"), "%s", r.out);
	cr_expect(strstr(r.out, "\"total_bytes\": \"8192\""), "u64s are strings: %s", r.out);
	cr_expect(strstr(r.out, "\"truncated\": \"2\""), "%s", r.out);
	/* libipt's order: config, sideband setup, this stream's primary, the others, the trace. */
	snprintf(want, sizeof(want), "--pevent:time-zero 123456789 --pevent:time-shift 10 "
		 "--pevent:time-mult 1000 --pevent:primary %s/cpu0.pevent --pevent:secondary "
		 "%s/cpu1.pevent --pt %s/cpu0.pt", dir, dir, dir);
	cr_expect(strstr(r.out, want), "no '%s' in:\n%s", want, r.out);
	cr_expect(strstr(r.out, "\"ptxed\": \"ptxed --cpu "), "%s", r.out);
	cr_expect(strstr(r.out, "--mtc-freq 3 --nom-freq 24"), "skylake fixture: %s", r.out);
	cr_expect(strstr(r.out, "TRUNCATED record(s)"), "losses are problems to report: %s", r.out);
	cr_expect(strstr(r.out, "the sideband ring filled 1 time(s)"),
		  "a stop that may have gone unrecorded is a problem too: %s", r.out);
	run_free(&r);
	snprintf(want, sizeof(want), "%s/manifest.json", dir);
	m = slurp(want, &len);
	m[len] = 0;
	cr_expect(strstr((char *)m, "\"sideband_full\": \"1\""), "%s", m);
	cr_expect(strstr((char *)m, "\"restarts\": \"3\""), "%s", m);
	free(m);
	testbundle_remove(dir);
	free(dir);
}

/* A stream's records the kernel dropped: its count less what the LOST records said, or not known. */
Test(bundle, the_unreported_drops_are_the_kernels_count_less_the_lost_records)
{
	struct stream st;
	struct mstream ms = { 0 };

	stream_init(&st, 0, -1);
	st.ring.stats.lost = 2;
	st.ring.stats.lost_events = 5;
	st.lost_counted = true;
	st.lost_kernel = 12;
	cr_assert_eq(bundle_describe_stream(&st, &ms), 0);
	cr_expect(ms.lost.counted);
	cr_expect_eq(ms.lost.unreported, 7);
	cr_expect_eq(ms.lost.lost_records, 5);
	st.lost_kernel = 5;	/* every drop reported */
	cr_assert_eq(bundle_describe_stream(&st, &ms), 0);
	cr_expect(ms.lost.counted && ms.lost.unreported == 0);
	st.lost_counted = false;	/* a kernel before 6.0 */
	st.lost_kernel = 0;
	cr_assert_eq(bundle_describe_stream(&st, &ms), 0);
	cr_expect(!ms.lost.counted && ms.lost.unreported == 0);
	free(ms.file);
	free(ms.sideband);
}

/* info names the drops no LOST record reports, and --json gives the count, null where unknown. */
Test(bundle, info_names_drops_no_lost_record_reports)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *dir = testbundle_dir(), path[512], *text, *at;
	const char *null = "\"unreported\": null";
	struct run_result r;
	size_t len;
	FILE *f;

	testbundle_write(dir, &pc, true);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	text = (char *)slurp(path, &len);
	text[len] = 0;
	at = strstr(text, null);
	cr_assert(at, "the test bundle's streams are not counted: %s", text);
	f = fopen(path, "w");
	cr_assert(f);
	fprintf(f, "%.*s\"unreported\": \"7\"%s", (int)(at - text), text, at + strlen(null));
	fclose(f);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "cpu0.pt: the kernel dropped 7 sideband record(s) that no LOST "
			 "record reports"), "%s", r.out);
	cr_expect(!strstr(r.out, "cpu1.pt: the kernel dropped"), "%s", r.out);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", dir, NULL), 0);
	cr_expect(strstr(r.out, "\"unreported\": \"7\"") && strstr(r.out, null), "%s", r.out);
	run_free(&r);
	free(text);
	testbundle_remove(dir);
	free(dir);
}

/* info's stdout and stderr for a bundle of @nr streams, as text or --json: their bytes. */
static size_t info_bytes(int nr, bool json)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *dir = testbundle_dir();
	struct run_result r;
	struct manifest m;
	size_t n;

	testbundle_describe(&m, &pc);
	testbundle_write_streams(dir, &m, true, nr);
	if (json)
		cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", dir, NULL), 0);
	else
		cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect_eq(r.status, 0, "%d streams: %s", nr, r.err);
	n = strlen(r.out) + strlen(r.err);
	run_free(&r);
	testbundle_remove(dir);
	free(dir);
	return n;
}

/*
 * info's output grows with the streams, not with their square: a stream's ptxed line named
 * every other stream's sideband (48 MB for the rig's 1,000 streams). 400 streams against
 * 100: at most 4.5 times the bytes (4 for the streams, the rest for the longer numbers).
 */
Test(bundle, info_output_grows_linearly_with_the_streams)
{
	for (int json = 0; json < 2; json++) {
		size_t small = info_bytes(100, json), big = info_bytes(400, json);

		cr_expect_leq(big * 2, small * 9, "%s: %zu bytes for 100 streams, %zu for 400",
			      json ? "--json" : "text", small, big);
	}
}

/*
 * Up to 64 streams each ptxed line names the others' sideband, as before; above, each names
 * its own and proc.pevent's, and ptxed_secondary says every stream's once.
 */
Test(bundle, info_says_the_secondary_sideband_once_above_64_streams)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };

	for (int nr = 64; nr <= 65; nr++) {
		char *dir = testbundle_dir(), other[512], *line;
		struct run_result r;
		struct manifest m;
		json_t *j, *sec;

		testbundle_describe(&m, &pc);
		testbundle_write_streams(dir, &m, true, nr);
		cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", dir, NULL), 0);
		cr_assert_eq(r.status, 0, "%s", r.err);
		j = json_loads(r.out, 0, NULL);
		cr_assert(j, "%s", r.out);
		line = strdup(json_string_value(json_object_get(json_array_get(
			json_object_get(j, "streams"), 0), "ptxed")));
		sec = json_object_get(j, "ptxed_secondary");
		snprintf(other, sizeof(other), "--pevent:secondary %s/cpu%d.pevent --pt", dir,
			 nr - 1);
		if (nr == 64) {
			cr_expect(!sec, "%d streams: %s", nr, r.out);
			cr_expect(strstr(line, other), "%d streams: %s", nr, line);
		} else {
			snprintf(other, sizeof(other), "--pevent:primary %s/cpu0.pevent --pt %s/cpu0.pt",
				 dir, dir);
			cr_expect(strstr(line, other), "%d streams: %s", nr, line);
			snprintf(other, sizeof(other), "--pevent:secondary %s/cpu0.pevent "
				 "--pevent:secondary %s/cpu1.pevent", dir, dir);
			cr_expect(json_is_string(sec) && !strncmp(json_string_value(sec), other,
								  strlen(other)),
				  "%d streams: %s", nr, json_string_value(sec));
		}
		free(line);
		json_decref(j);
		run_free(&r);
		testbundle_remove(dir);
		free(dir);
	}
}

/* `info --script` for @nr streams into @script (outside the bundle @dir): its size. */
static size_t script_of(const char *dir, int nr, const char *script)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	struct run_result r;
	struct manifest m;
	size_t n;
	FILE *f;

	testbundle_describe(&m, &pc);
	testbundle_write_streams(dir, &m, true, nr);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--script", dir, NULL), 0);
	cr_assert_eq(r.status, 0, "%d streams: %s", nr, r.err);
	n = strlen(r.out);
	f = fopen(script, "w");
	cr_assert(f && fputs(r.out, f) >= 0 && !fclose(f));
	run_free(&r);
	return n;
}

/*
 * The script's ptxed lines run with every stream's sideband above 64 streams too (a
 * function names the others' once), and the script grows with the streams, not their
 * square: a decoder that prints its arguments gets decoder_argv()'s, stream by stream.
 */
Test(bundle, info_script_runs_every_sideband_and_grows_linearly_with_the_streams)
{
	char top[] = "/tmp/ptc-script-XXXXXX", script[64], fake[64], out[64], path[600];
	const int nrs[] = { 64, 65, 100, 400 };
	size_t bytes[4];

	cr_assert(mkdtemp(top));
	snprintf(script, sizeof(script), "%s/decode.sh", top);
	snprintf(fake, sizeof(fake), "%s/args", top);
	snprintf(out, sizeof(out), "%s/out", top);
	{
		FILE *f = fopen(fake, "w");

		cr_assert(f && fputs("#!/bin/sh\nfor a; do printf '%s\\n' \"$a\"; done\n", f) >= 0 &&
			  !fclose(f) && !chmod(fake, 0700));
	}
	for (int t = 0; t < 4; t++) {
		char *dir = testbundle_dir(), *env[3] = { NULL };
		char *argv[] = { "sh", script, dir, out, NULL };
		struct run_result r;
		struct manifest m;
		struct error e;
		int fd;

		bytes[t] = script_of(dir, nrs[t], script);
		if (nrs[t] > 65) {
			testbundle_remove(dir);
			free(dir);
			continue;
		}
		cr_assert_eq(mkdir(out, 0700), 0);
		cr_assert_gt(asprintf(&env[0], "PTXED=%s", fake), 0);
		cr_assert_gt(asprintf(&env[1], "PTDUMP=%s", fake), 0);
		cr_assert_eq(run_argv(argv, env, &r), 0);
		cr_expect_eq(r.status, 0, "%d streams: %s%s", nrs[t], r.out, r.err);
		fd = open(dir, O_RDONLY | O_DIRECTORY);
		cr_assert_eq(manifest_read(fd, dir, &m, &e), 0, "%s", e.why);
		close(fd);
		for (int i = 0; i < nrs[t]; i += nrs[t] - 1) {
			char **want = decoder_argv(&m, dir, i, DECODER_PTXED), *got, *p;
			size_t len;

			snprintf(path, sizeof(path), "%s/cpu%d.ptxed", out, i);
			got = (char *)slurp(path, &len);
			got[len] = '\0';
			cr_assert(want);
			p = got;
			for (char **w = want + 1; *w; w++) {
				size_t n = strlen(*w);

				cr_assert(!strncmp(p, *w, n) && p[n] == '\n', "%d streams, stream %d: "
					  "argument %td differs:\nwant %s\ngot  %.300s", nrs[t], i,
					  w - want, *w, p);
				p += n + 1;
			}
			cr_expect_str_empty(p, "%d streams: more arguments: %.300s", nrs[t], p);
			decoder_argv_free(want);
			free(got);
		}
		manifest_free(&m);
		run_free(&r);
		free(env[0]);
		free(env[1]);
		snprintf(path, sizeof(path), "rm -rf '%s'", out);
		cr_assert_eq(system(path), 0);
		testbundle_remove(dir);
		free(dir);
	}
	cr_expect_leq(bytes[3] * 2, bytes[2] * 9, "%zu bytes for 100 streams, %zu for 400",
		      bytes[2], bytes[3]);
	unlink(script);
	unlink(fake);
	rmdir(top);
}

Test(bundle, without_cap_user_time_zero_info_warns_and_ptxed_gets_no_time)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 0, .time_zero = 5 };
	char *dir = testbundle_dir(), path[512];
	struct run_result r;
	uint8_t *m;
	size_t len;

	testbundle_write(dir, &pc, true);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	m = slurp(path, &len);
	m[len] = 0;
	cr_expect(strstr((char *)m, "\"cap_user_time_zero\": false"), "%s", m);
	cr_expect(!strstr((char *)m, "--pevent:time-zero"), "%s", m);
	free(m);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect_eq(r.status, 0);
	cr_expect(strstr(r.err, "timestamps cannot be converted to TSC"), "%s", r.err);
	run_free(&r);
	testbundle_remove(dir);
	free(dir);
}

Test(bundle, info_reports_a_recording_that_was_cut_short)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *dir = testbundle_dir(), path[512];
	struct run_result r;

	testbundle_write(dir, &pc, false);	/* as if the collector was killed */
	snprintf(path, sizeof(path), "%s/cpu1.pt", dir);
	cr_assert_eq(truncate(path, 100), 0);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", dir, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"complete\": false"), "%s", r.out);
	cr_expect(strstr(r.err, "did not finish cleanly"), "%s", r.err);
	cr_expect(strstr(r.err, "cpu1.pt has 100 bytes, the manifest says 4096: the file was cut "
			 "short"), "%s", r.err);
	run_free(&r);
	testbundle_remove(dir);
	free(dir);
}

/*
 * More problems than info lists (64 perf maps missing, 64 refused, the streams' losses):
 * the first are listed and the rest counted, in the text and in the JSON alike.
 */
Test(bundle, info_counts_the_problems_it_does_not_list)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *dir = testbundle_dir(), want[128];
	struct manifest m;
	struct run_result r;
	int listed = 0;

	testbundle_describe(&m, &pc);
	for (int i = 0; i < MANIFEST_MAX_PERF_MAPS; i++) {
		struct mperfmap *pm = manifest_add_perf_map(&m);
		struct mperfmap_refused *no = manifest_add_perf_map_refused(&m);

		cr_assert(pm && no);
		pm->pid = 1000 + i;
		cr_assert(asprintf(&pm->file, "perf-maps/perf-%d.map", pm->pid) > 0);
		pm->bytes = 10;
		no->pid = 2000 + i;
		no->why = strdup("a link");
	}
	testbundle_write_manifest(dir, &m, true);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	for (const char *q = r.err; (q = strstr(q, "info: ")); q++)
		listed++;
	/* 128 perf map problems and the two streams' losses (4): 64 listed, 68 counted. */
	snprintf(want, sizeof(want), "info: 68 more problem(s) not listed: the first 64 are above");
	cr_expect(strstr(r.err, want), "no '%s' in:\n%s", want, r.err);
	cr_expect_eq(listed, 65, "64 problems and the count: %d in\n%s", listed, r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", "--json", dir, NULL), 0);
	cr_expect(strstr(r.out, "68 more problem(s) not listed"), "%s", r.out);
	run_free(&r);
	testbundle_remove(dir);
	free(dir);
}

Test(bundle, bad_bundles_exit_two_with_the_reason)
{
	char *dir = testbundle_dir(), path[512];
	struct run_result r;
	FILE *f;

	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "no such directory"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(mkdir(dir, 0755), 0);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "manifest.json: No such file") && strstr(r.err, "not a ptcollect"),
		  "%s", r.err);
	run_free(&r);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	f = fopen(path, "w");
	fputs("{\"format\": \"ptcollect-bundle\", \"version\": 2,,}", f);
	fclose(f);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "manifest.json: not valid JSON: line 1, column 45"), "%s", r.err);
	run_free(&r);
	f = fopen(path, "w");
	fputs("{\"format\": \"other\", \"version\": 1}", f);
	fclose(f);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "not a ptcollect manifest"), "%s", r.err);
	run_free(&r);
	testbundle_remove(dir);
	free(dir);
}

Test(dump, corrupt_sideband_stops_at_its_offset)
{
	char path[] = "/tmp/ptc-dump-XXXXXX.pevent";
	int fd = mkstemps(path, 7);
	struct run_result r;
	uint8_t rec[48] = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_ITRACE_START, .size = 48 };

	memcpy(rec, &h, 8);
	cr_assert_eq(write(fd, rec, 48), 48);	/* a good ITRACE_START: 8 + 8 + 32 */
	h.size = 40;
	memcpy(rec, &h, 8);
	cr_assert_eq(write(fd, rec, 40), 40);	/* one that is 8 bytes short */
	close(fd);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", path, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.out, "ITRACE_START"), "%s", r.out);
	cr_expect(strstr(r.err, "at offset 48: ITRACE_START record of 40 bytes"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "/nonexistent.pevent", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "No such file"), "%s", r.err);
	run_free(&r);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "/etc/hostname", NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--format"), "%s", r.err);
	run_free(&r);
	unlink(path);
}

Test(dump, a_libipt_encoded_stream_dumps_packet_for_packet)
{
	char path[] = "/tmp/ptc-dump-XXXXXX.pt";
	uint8_t buf[256];
	struct pt_config cfg;
	struct pt_encoder *e;
	struct pt_packet pk[] = {
		{ .type = ppt_psb }, { .type = ppt_pad }, { .type = ppt_psbend },
		{ .type = ppt_tnt_8, .payload.tnt = { .bit_size = 4, .payload = 0x5 } },
		{ .type = ppt_pad },
	};
	struct run_result r;
	int fd, n;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + sizeof(buf);
	e = pt_alloc_encoder(&cfg);
	cr_assert(e);
	for (size_t i = 0; i < sizeof(pk) / sizeof(pk[0]); i++)
		cr_assert_geq(pt_enc_next(e, &pk[i]), 0);
	{
		uint64_t off;

		pt_enc_get_offset(e, &off);
		n = (int)off;
	}
	pt_free_encoder(e);
	fd = mkstemps(path, 3);
	cr_assert_eq(write(fd, buf, (size_t)n), n);
	close(fd);
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--json", path, NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"count\": 5"), "%s", r.out);
	cr_expect(strstr(r.out, "\"type\": \"psb\"") && strstr(r.out, "\"type\": \"tnt.8\""),
		  "%s", r.out);
	run_free(&r);
	unlink(path);
}

/* Past the bounds of ptcollect-bundle(5): refused at once, exit 2, the file and the bound named. */
Test(bundle, a_manifest_past_the_size_bounds_is_refused_naming_the_bound)
{
	char *dir = testbundle_dir(), path[512];
	struct run_result r;
	FILE *f;

	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	f = fopen(path, "w");
	cr_assert(f);
	cr_assert_eq(fseek(f, MANIFEST_MAX_BYTES, SEEK_SET), 0);
	fputc(' ', f);
	fclose(f);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "manifest.json") && strstr(r.err, "larger than 33554432 bytes"),
		  "%s", r.err);
	run_free(&r);
	f = fopen(path, "w");
	cr_assert(f);
	fputs("{\"format\": \"ptcollect-bundle\", \"version\": 2, \"x\": [", f);
	for (int i = 0; i < MANIFEST_MAX_OBJECTS; i++)
		fputs("{},", f);
	fputs("{}]}", f);
	fclose(f);
	cr_assert_eq(run_ptcollect(NULL, &r, "info", dir, NULL), 0);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "manifest.json") && strstr(r.err, "more than 250000 objects"),
		  "%s", r.err);
	run_free(&r);
	testbundle_remove(dir);
	free(dir);
}
