// SPDX-License-Identifier: MIT
/*
 * perf.data to bundle on files made here (tests/lib/perfgen.c): trace bytes
 * in buffer order per stream, sideband converted to the bundle's sample_id
 * and split by CPU or thread, the manifest's values, and refusals of
 * damaged input that name the file and the offset and leave nothing behind.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"
#include "manifest.h"
#include "perfgen.h"
#include "sideband.h"
#include "tempfile.h"

static char *base;

static void make_base(void)
{
	base = temp_dir("ptc-import");
}

/* Remove the bundles under base and base itself. */
static void remove_base(void)
{
	temp_dir_remove(base);
}

TestSuite(import, .init = make_base, .fini = remove_base);

/* An input descriptor holding @p: a memfd, or a pipe already written and closed. */
static int input(const uint8_t *p, size_t n, bool pipe_fd)
{
	int fds[2], fd;

	if (pipe_fd) {
		cr_assert_lt(n, 60000, "the test writes the pipe before reading it");
		cr_assert_eq(pipe(fds), 0);
		cr_assert_eq(write(fds[1], p, n), (ssize_t)n);
		close(fds[1]);
		return fds[0];
	}
	fd = memfd_create("perf.data", MFD_CLOEXEC);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, p, n), (ssize_t)n);
	cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

static char *dir_of(const char *name)
{
	char *d;

	cr_assert(asprintf(&d, "%s/%s", base, name) > 0);
	return d;
}

static int import(const uint8_t *p, size_t n, const char *dir, bool pipe_fd,
		  struct import_stats *st, struct error *e)
{
	static char *const argv[] = { "ptcollect", "import", "test.data", "DIR" };
	struct import_opts o = { .input = "test.data", .dir = dir, .argv = argv, .argc = 4 };
	struct import_stats dummy;
	struct warnings w = { 0 };
	int ret;

	o.fd = input(p, n, pipe_fd);
	memset(e, 0, sizeof(*e));
	ret = import_perfdata(&o, st ? st : &dummy, &w, e);
	close(o.fd);
	return ret;
}

static uint8_t *slurp(const char *dir, const char *name, size_t *len)
{
	char *path = NULL;
	uint8_t *buf;
	struct stat st;
	FILE *f;

	cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
	f = fopen(path, "rb");
	cr_assert(f, "%s is missing", path);
	cr_assert_eq(fstat(fileno(f), &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	cr_assert_eq(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	free(path);
	*len = (size_t)st.st_size;
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

/* The standard file's trace: the buffer at AUX offset o holds bytes o, o+1, ... */
static void expect_trace(const char *dir, const char *name, size_t want)
{
	size_t len;
	uint8_t *p = slurp(dir, name, &len);

	cr_expect_eq(len, want, "%s: %zu bytes, expected %zu", name, len, want);
	for (size_t i = 0; i < len && i < want; i++)
		cr_expect_eq(p[i], (uint8_t)i, "%s: byte %zu is %u: the buffers are out of order",
			     name, i, p[i]);
	free(p);
}

struct want_rec {
	uint32_t type;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t id;
};

/* Every record of @name, read by libipt's rules with the bundle's sample_type, as listed. */
static void expect_sideband(const char *dir, const char *name, const struct want_rec *want,
			    int nr)
{
	size_t len, off = 0;
	uint8_t *p = slurp(dir, name, &len);
	struct sb_record r;
	struct error e = { 0 };
	int i = 0;

	while (off < len) {
		int n = sideband_parse(p, len, off, SIDEBAND_SAMPLE_TYPE, &r, &e);

		cr_assert_gt(n, 0, "%s at %zu: %s", name, off, e.why);
		cr_assert_lt(i, nr, "%s: more records than the %d expected", name, nr);
		cr_expect_eq(r.type, want[i].type, "%s record %d: type %u, expected %u", name, i,
			     r.type, want[i].type);
		cr_expect(r.has_sample_id);
		cr_expect_eq(r.sid.pid, want[i].pid, "%s record %d: pid %u", name, i, r.sid.pid);
		cr_expect_eq(r.sid.tid, want[i].tid, "%s record %d: tid %u", name, i, r.sid.tid);
		cr_expect_eq(r.sid.time, want[i].time, "%s record %d: time %lu", name, i,
			     (unsigned long)r.sid.time);
		cr_expect_eq(r.sid.cpu, want[i].cpu, "%s record %d: cpu %u", name, i, r.sid.cpu);
		cr_expect_eq(r.sid.identifier, want[i].id, "%s record %d: id %lu", name, i,
			     (unsigned long)r.sid.identifier);
		off += (size_t)n;
		i++;
	}
	cr_expect_eq(i, nr, "%s: %d records, expected %d", name, i, nr);
	free(p);
}

static void read_manifest(const char *dir, struct manifest *m)
{
	struct error e = { 0 };
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	cr_assert_geq(fd, 0, "%s", dir);
	cr_assert_eq(manifest_read(fd, dir, m, &e), 0, "%s: %s", e.what, e.why);
	close(fd);
}

/* The standard recording (perfgen.h), imported into base/@name: the bundle's path. */
static char *import_standard(const char *name, bool per_thread, bool mixed, bool pipe_mode,
			     struct import_stats *st)
{
	char *dir = dir_of(name);
	struct error e;
	struct pgen g;
	uint8_t *p;
	size_t n;

	pgen_standard(&g, per_thread, mixed);
	p = pipe_mode ? pgen_pipe(&g, &n) : pgen_file(&g, &n);
	cr_assert_eq(import(p, n, dir, pipe_mode, st, &e), 0, "%s: %s", e.what, e.why);
	free(p);
	pgen_free(&g);
	return dir;
}

static void check_standard_per_cpu(const char *dir, bool mixed)
{
	/* The dummy event's trailer has no TID when mixed. */
	uint32_t dp = mixed ? 0 : 100;
	const struct want_rec cpu0[] = {
		{ PERF_RECORD_ITRACE_START, 100, 100, 1000, 0, 11 },
		{ PERF_RECORD_COMM, dp, dp, 1100, 0, 21 },
		{ PERF_RECORD_MMAP2, dp, dp, 1200, 0, 21 },
		{ PERF_RECORD_LOST, dp, dp, 1400, 0, 21 },
	}, cpu1[] = {
		{ PERF_RECORD_ITRACE_START, 100, 100, 1001, 1, 12 },
		{ PERF_RECORD_AUX, 100, 100, 1300, 1, 12 },
		{ PERF_RECORD_SWITCH_CPU_WIDE, dp, dp, 1500, 1, 22 },
	}, proc[] = {
		{ PERF_RECORD_COMM, 0, 0, 0, 0, 0 },
	};

	expect_trace(dir, "cpu0.pt", 24);
	expect_trace(dir, "cpu1.pt", 32);
	expect_sideband(dir, "cpu0.pevent", cpu0, 4);
	expect_sideband(dir, "cpu1.pevent", cpu1, 3);
	expect_sideband(dir, "proc.pevent", proc, 1);
}

Test(import, per_cpu_trace_in_buffer_order_and_sideband_by_cpu)
{
	struct import_stats st;
	char *dir = import_standard("b", false, false, false, &st);

	check_standard_per_cpu(dir, false);
	cr_expect_eq(st.streams, 2);
	cr_expect_eq(st.trace_bytes, 56);
	cr_expect_eq(st.auxtrace, 3);
	cr_expect_eq(st.samples, 1, "the SAMPLE is not sideband");
	cr_expect_eq(st.synthesized, 1);
	cr_expect_eq(st.reordered, 1, "cpu1's buffers came at offsets 16, then 0");
	cr_expect(!st.pipe);
	free(dir);
}

/* Buffers that follow each other, a gap, and one that fills the gap late: in offset order. */
Test(import, buffers_joined_then_put_in_offset_order)
{
	static const uint64_t extra[][2] = { { 24, 8 }, { 40, 8 }, { 32, 8 } };	/* offset, len */
	char *dir = dir_of("b");
	struct import_stats st;
	uint8_t *p, buf[8];
	struct error e;
	struct pgen g;
	size_t n;

	pgen_standard(&g, false, false);
	for (size_t i = 0; i < 3; i++) {
		for (size_t k = 0; k < extra[i][1]; k++)
			buf[k] = (uint8_t)(extra[i][0] + k);
		pgen_auxtrace(&g, 0, 0, (uint32_t)-1, extra[i][0], buf, extra[i][1]);
	}
	p = pgen_pipe(&g, &n);
	cr_assert_eq(import(p, n, dir, false, &st, &e), 0, "%s: %s", e.what, e.why);
	expect_trace(dir, "cpu0.pt", 48);
	expect_trace(dir, "cpu1.pt", 32);
	cr_expect_eq(st.reordered, 2);
	cr_expect_eq(st.auxtrace, 6);
	free(p);
	pgen_free(&g);
	free(dir);
}

Test(import, differing_trailers_are_told_apart_by_the_id)
{
	char *dir = import_standard("b", false, true, false, NULL);

	check_standard_per_cpu(dir, true);
	free(dir);
}

/* Pipe mode, from a real pipe and from a file, gives the file mode's bundle byte for byte. */
Test(import, pipe_mode_gives_the_same_bundle_as_file_mode)
{
	static const char *const files[] = {
		"cpu0.pt", "cpu1.pt", "cpu0.pevent", "cpu1.pevent", "proc.pevent",
	};
	char *fdir = dir_of("file"), *pdir = dir_of("pipe"), *sdir = dir_of("seekable");
	struct import_stats st;
	struct error e;
	struct pgen g;
	uint8_t *f, *p;
	size_t fn, pn;

	pgen_standard(&g, false, true);
	f = pgen_file(&g, &fn);
	p = pgen_pipe(&g, &pn);
	cr_assert_eq(import(f, fn, fdir, false, NULL, &e), 0, "%s: %s", e.what, e.why);
	cr_assert_eq(import(p, pn, pdir, true, &st, &e), 0, "%s: %s", e.what, e.why);
	cr_expect(st.pipe);
	cr_assert_eq(import(p, pn, sdir, false, NULL, &e), 0, "%s: %s", e.what, e.why);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t a, b, c;
		uint8_t *x = slurp(fdir, files[i], &a), *y = slurp(pdir, files[i], &b),
			*z = slurp(sdir, files[i], &c);

		cr_expect(a == b && !memcmp(x, y, a), "%s differs between file and pipe mode",
			  files[i]);
		cr_expect(a == c && !memcmp(x, z, a), "%s differs: pipe mode from a file",
			  files[i]);
		free(x);
		free(y);
		free(z);
	}
	free(f);
	free(p);
	pgen_free(&g);
	free(fdir);
	free(pdir);
	free(sdir);
}

Test(import, per_thread_streams_by_thread)
{
	const struct want_rec t100[] = {
		{ PERF_RECORD_ITRACE_START, 100, 100, 1000, 0, 11 },
		{ PERF_RECORD_COMM, 100, 100, 1100, 0, 21 },
		{ PERF_RECORD_MMAP2, 100, 100, 1200, 0, 21 },
		{ PERF_RECORD_LOST, 100, 100, 1400, 0, 21 },
	}, t101[] = {
		{ PERF_RECORD_ITRACE_START, 100, 101, 1001, 1, 12 },
		{ PERF_RECORD_AUX, 100, 101, 1300, 1, 12 },
		{ PERF_RECORD_SWITCH_CPU_WIDE, 100, 101, 1500, 1, 22 },
	};
	char *dir = import_standard("b", true, false, true, NULL);
	struct manifest m;

	expect_trace(dir, "tid100.pt", 24);
	expect_trace(dir, "tid101.pt", 32);
	expect_sideband(dir, "tid100.pevent", t100, 4);
	expect_sideband(dir, "tid101.pevent", t101, 3);
	read_manifest(dir, &m);
	cr_expect(m.per_thread);
	cr_assert_eq(m.nr_streams, 2);
	cr_expect_eq(m.streams[0].tid, 100);
	cr_expect_eq(m.streams[0].cpu, -1);
	cr_expect_str_eq(m.streams[1].file, "tid101.pt");
	cr_expect_str_eq(m.streams[1].sideband, "tid101.pevent");
	manifest_free(&m);
	free(dir);
}

/* The manifest holds what AUXTRACE_INFO, TIME_CONV, the attrs and the features say. */
Test(import, manifest_from_auxtrace_info_attrs_and_features)
{
	char *dir = import_standard("b", false, false, false, NULL);
	struct manifest m;

	read_manifest(dir, &m);
	cr_expect_str_eq(m.cpu.vendor, "GenuineIntel");
	cr_expect(m.cpu.family == 6 && m.cpu.model == 85 && m.cpu.stepping == 4);
	cr_expect_eq(m.time_conv.time_shift, 31);
	cr_expect_eq(m.time_conv.time_mult, 600000000);
	cr_expect_eq(m.time_conv.time_zero, 12345);
	cr_expect(m.time_conv.cap_user_time_zero);
	cr_expect_eq(m.nom_freq, 37);
	cr_expect(m.has_cpuid_0x15);
	cr_expect_eq(m.cpuid_0x15_eax, 2, "CPUID.15H:EAX is the TSC:CTC denominator");
	cr_expect_eq(m.cpuid_0x15_ebx, 300, "CPUID.15H:EBX is the numerator");
	cr_expect_eq(m.mtc_freq, 3, "config 0x300e601 has mtc_period=3 in bits 14-17");
	cr_expect_eq(m.attr.config, 0x300e601);
	cr_expect(m.attr.exclude_kernel && !m.attr.exclude_user);
	cr_expect_eq(m.attr.sample_type, 0x10086);
	cr_expect_eq(m.pmu_type, PGEN_PT_TYPE);
	cr_expect_str_eq(m.event, "intel_pt//u");
	cr_expect(!m.per_thread);
	cr_expect_str_eq(m.proc_sideband, "proc.pevent");
	cr_expect_eq(m.target.kind, TARGET_COMMAND);
	cr_assert_eq(m.target.command_argc, 2, "the workload after --");
	cr_expect_str_eq(m.target.command[0], "./prog");
	cr_assert_eq(m.target.nr_pids, 1);
	cr_expect_eq(m.target.pids[0], 100, "the process that exec'd");
	cr_expect_str_eq(m.source.tool, "perf");
	cr_expect_str_eq(m.source.version, "6.1.0");
	cr_expect_str_eq(m.source.format, "file");
	cr_expect_str_eq(m.source.hostname, "testhost");
	cr_expect_str_eq(m.source.cpudesc, "Test CPU @ 3.70GHz");
	cr_expect_eq(m.source.nr_cpus_online, 2);
	cr_expect_eq(m.source.command_argc, 7);
	cr_assert_eq(m.nr_streams, 2);
	cr_expect_eq(m.streams[0].cpu, 0);
	cr_expect_eq(m.streams[0].bytes, 24);
	cr_expect_eq(m.streams[0].lost.lost, 1);
	cr_expect_eq(m.streams[0].lost.lost_records, 5);
	cr_expect_eq(m.streams[0].itrace_start, 1);
	cr_expect_eq(m.streams[1].bytes, 32);
	cr_expect_eq(m.streams[1].lost.truncated, 1, "the AUX record's TRUNCATED flag");
	cr_expect(m.complete);
	manifest_free(&m);
	free(dir);
}

/* ---- refusals ----------------------------------------------------------- */

/* @p must be refused as bad input naming the file and @why; nothing is left. */
static void expect_refused(const uint8_t *p, size_t n, bool pipe_fd, const char *why)
{
	char *dir = dir_of("bad");
	struct error e;
	int ret = import(p, n, dir, pipe_fd, NULL, &e);

	cr_assert_neq(ret, 0, "accepted; expected a refusal saying '%s'", why);
	cr_expect(e.usage, "a runtime error, not bad input: %s: %s", e.what, e.why);
	cr_expect(strstr(e.what, "test.data"), "the message does not name the file: %s: %s",
		  e.what, e.why);
	cr_expect(strstr(e.why, why), "'%s: %s' does not say '%s'", e.what, e.why, why);
	cr_expect(!exists(dir), "%s was left behind", dir);
	free(dir);
}

/* The standard file with @len bytes at data offset @at (of the records) replaced by @b. */
static uint8_t *patched(bool pipe_mode, size_t at, const void *b, size_t len, size_t *n)
{
	struct pgen g;
	uint8_t *p;
	size_t records;

	pgen_standard(&g, false, false);
	p = pipe_mode ? pgen_pipe(&g, n) : pgen_file(&g, n);
	records = pipe_mode ? *n - g.len : (size_t)((uint64_t *)p)[5];
	cr_assert_leq(records + at + len, *n);
	memcpy(p + records + at, b, len);
	pgen_free(&g);
	return p;
}

Test(import, refuses_damaged_headers)
{
	static const uint64_t swapped = 0x50455246494c4532ull, v1 = 0x454c494646524550ull;
	struct pgen g;
	uint8_t *p;
	size_t n;

	expect_refused((const uint8_t *)"PERFILE2", 8, false, "too short");
	expect_refused((const uint8_t *)"", 0, true, "too short");
	pgen_standard(&g, false, false);
	p = pgen_file(&g, &n);
	memcpy(p, &swapped, 8);
	expect_refused(p, n, false, "big-endian");
	memcpy(p, &v1, 8);
	expect_refused(p, n, false, "version 1");
	memcpy(p, "ELF\177abcd", 8);
	expect_refused(p, n, false, "not a perf.data");
	free(p);
	p = pgen_file(&g, &n);
	((uint64_t *)p)[1] = 77;
	expect_refused(p, n, false, "header size 77");
	free(p);
	p = pgen_file(&g, &n);
	((uint64_t *)p)[6] = 1ull << 62;	/* data size */
	expect_refused(p, n, false, "runs past the end of the file");
	free(p);
	p = pgen_file(&g, &n);
	((uint64_t *)p)[4] = 1ull << 40;	/* attr section size */
	expect_refused(p, n, false, "attr section");
	free(p);
	p = pgen_file(&g, &n);
	((uint64_t *)p)[2] = 8;	/* attr_size */
	expect_refused(p, n, false, "attr_size 8");
	free(p);
	p = pgen_file(&g, &n);
	expect_refused(p, n, true, "cannot be read from a pipe");
	free(p);
	pgen_free(&g);
}

Test(import, refuses_damaged_records)
{
	uint8_t zero[8] = { 3, 0, 0, 0, 0, 0, 0, 0 }, huge[16];
	uint64_t big = 1ull << 60;
	uint8_t *p;
	size_t n, info, aux;
	struct pgen g;

	/* The first record is TIME_CONV (32 bytes), then AUXTRACE_INFO. */
	for (int pipe_mode = 0; pipe_mode < 2; pipe_mode++) {
		p = patched(pipe_mode, 0, zero, 8, &n);
		expect_refused(p, n, pipe_mode, "size 0, less than its 8-byte header");
		free(p);
		zero[0] = 0;
		zero[6] = 32;
		p = patched(pipe_mode, 0, zero, 8, &n);
		expect_refused(p, n, pipe_mode, "type 0");
		free(p);
		zero[0] = 3;
		zero[6] = 0;
	}
	pgen_standard(&g, false, false);
	info = 32;
	/* AUXTRACE_INFO's type (at +8) and then its PMU type (at +16). */
	p = patched(false, info + 8, (uint32_t[]){ 2 }, 4, &n);
	expect_refused(p, n, false, "Intel BTS");
	free(p);
	p = patched(false, info + 16, &big, 8, &n);
	expect_refused(p, n, false, "out of range");
	free(p);
	p = patched(false, info + 16, (uint64_t[]){ 99 }, 8, &n);
	expect_refused(p, n, false, "no event (attr) of that type");
	free(p);
	p = patched(false, info, (uint32_t[]){ 81 }, 4, &n);
	expect_refused(p, n, false, "-z");
	free(p);
	/*
	 * The first AUXTRACE: after AUXTRACE_INFO (152 bytes), the synthesized COMM (56), two
	 * ITRACE_START (48), COMM.EXEC (56) and MMAP2 (120).
	 */
	aux = info + 152 + 56 + 2 * 48 + 56 + 120;
	p = patched(false, aux + 8, &big, 8, &n);
	expect_refused(p, n, false, "past the end of the data section");
	free(p);
	p = patched(true, aux + 8, &big, 8, &n);
	expect_refused(p, n, true, "AUXTRACE payload ends after");
	free(p);
	p = patched(false, aux + 40, (uint32_t[]){ 70000 }, 4, &n);
	expect_refused(p, n, false, "AUXTRACE of cpu 70000");
	free(p);
	/* The synthesized COMM's id (its last 8 bytes) names no event. */
	p = patched(false, info + 152 + 48, (uint64_t[]){ 777 }, 8, &n);
	expect_refused(p, n, false, "event id 777");
	free(p);
	memset(huge, 0, sizeof(huge));
	memcpy(huge, (uint32_t[]){ 70, 0, 1 }, 12);
	huge[6] = 16;
	p = patched(false, 0, huge, 16, &n);	/* TIME_CONV becomes an AUXTRACE_INFO of 16 */
	expect_refused(p, n, false, "fewer than the 10");
	free(p);
	pgen_free(&g);
}

Test(import, refuses_a_perf_data_without_intel_pt)
{
	static const uint64_t ids[] = { 5 };
	struct pgen g;
	uint8_t *p, body[16] = { 1, 0, 0, 0, 1, 0, 0, 0, 'x' };
	size_t n;

	pgen_init(&g);
	pgen_attr(&g, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0x10087, ids, 1, "cpu-clock");
	pgen_kernel(&g, 0, PERF_RECORD_COMM, 0, body, 16, &(struct pgen_sid){ .id = 5 });
	p = pgen_file(&g, &n);
	expect_refused(p, n, false, "no Intel PT trace");
	free(p);
	pgen_free(&g);
	pgen_init(&g);
	pgen_attr(&g, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 0x10087, ids, 1, "cpu-clock");
	p = pgen_pipe(&g, &n);
	expect_refused(p, n, true, "no AUXTRACE_INFO");
	free(p);
	pgen_free(&g);
}

/* Every prefix of the file is refused, or (pipe mode, at a record's end) read as it is. */
Test(import, every_cut_is_refused_or_whole_records)
{
	for (int pipe_mode = 0; pipe_mode < 2; pipe_mode++) {
		struct pgen g;
		uint8_t *p;
		size_t n;

		pgen_standard(&g, false, true);
		p = pipe_mode ? pgen_pipe(&g, &n) : pgen_file(&g, &n);
		for (size_t cut = 0; cut < n; cut++) {
			char *dir = dir_of("cut");
			struct error e;
			int ret = import(p, cut, dir, false, NULL, &e);

			if (ret) {
				cr_expect(e.usage && strstr(e.what, "test.data") &&
					  (strstr(e.why, "offset") || strstr(e.why, "AUXTRACE_INFO")),
					  "cut at %zu: %s: %s", cut, e.what, e.why);
				cr_expect(!exists(dir), "cut at %zu: %s was left", cut, dir);
			} else {
				char cmd[300];

				cr_expect(pipe_mode, "file mode cut at %zu of %zu was accepted", cut,
					  n);
				snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
				cr_assert_eq(system(cmd), 0);
			}
			free(dir);
		}
		free(p);
		pgen_free(&g);
	}
}

/*
 * Bytes set to 0x00, 0xff and 0x80: an import or a reason, never a crash. A fixed sample: every
 * byte of the file header with each value, then every 31st byte with one value in turn. The
 * exhaustive search (every byte, each value, of each seed) is fuzz_import's sweep, which
 * tests/fuzz/run runs before fuzzing.
 */
Test(import, single_byte_damage_is_imported_or_explained)
{
	static const uint8_t values[] = { 0x00, 0xff, 0x80 };
	const size_t header = 104;	/* struct perf_file_header */
	struct pgen g;
	uint8_t *p;
	size_t n, tried = 0;

	pgen_standard(&g, false, true);
	p = pgen_file(&g, &n);
	cr_assert_gt(n, header);
	for (size_t at = 0; at < n; at += at < header ? 1 : 31) {
		for (size_t v = 0; v < sizeof(values); v++) {
			uint8_t old = p[at];
			char *dir, cmd[300];
			struct error e;

			if (at >= header && v != (at / 31) % sizeof(values))
				continue;
			dir = dir_of("flip");
			p[at] = values[v];
			tried++;
			if (import(p, n, dir, false, NULL, &e)) {
				cr_expect(e.why[0], "byte %zu = %u: refused without a reason", at,
					  values[v]);
				cr_expect(!exists(dir), "byte %zu: %s was left", at, dir);
			} else {
				snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
				cr_assert_eq(system(cmd), 0);
			}
			p[at] = old;
			free(dir);
		}
	}
	cr_expect_gt(tried, header * sizeof(values), "the sample covers the header and beyond");
	free(p);
	pgen_free(&g);
}
