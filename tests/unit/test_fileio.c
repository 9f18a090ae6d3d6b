// SPDX-License-Identifier: MIT
/*
 * An input file mapped whole (file_map_input), the one way dump, decode, the image store
 * and the bundle's sideband scans map what they read: regular files only, never a wait on
 * a FIFO, the descriptor kept only when asked and only with a mapping; and a sideband
 * file's records one by one (sideband_each).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "fileio.h"
#include "sideband.h"

static char dir[] = "/tmp/ptc-fileio-XXXXXX";

static void setup(void)
{
	cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
}

static char *in_dir(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void put(const char *name, const void *p, size_t len)
{
	int fd = open(in_dir(name), O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, p, len), (ssize_t)len);
	close(fd);
}

TestSuite(fileio, .init = setup, .fini = teardown);

Test(fileio, maps_a_file_whole_and_keeps_its_descriptor_when_asked)
{
	struct file_map m;
	struct error e = { 0 };

	put("f", "0123456789", 10);
	cr_assert_eq(file_map_input(AT_FDCWD, in_dir("f"), true, &m, &e), 0, "%s", e.why);
	cr_assert_eq(m.len, 10);
	cr_assert_eq(memcmp(m.p, "0123456789", 10), 0);
	cr_assert(m.fd >= 0);
	cr_assert_eq(fcntl(m.fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	file_unmap(&m);
	cr_assert_null(m.p);
	cr_assert_eq(m.fd, -1);

	cr_assert_eq(file_map_input(AT_FDCWD, in_dir("f"), false, &m, &e), 0, "%s", e.why);
	cr_assert_eq(m.fd, -1);
	file_unmap(&m);
}

Test(fileio, an_empty_file_maps_to_nothing_and_keeps_no_descriptor)
{
	struct file_map m;
	struct error e = { 0 };

	put("empty", "", 0);
	cr_assert_eq(file_map_input(AT_FDCWD, in_dir("empty"), true, &m, &e), 0, "%s", e.why);
	cr_assert_null(m.p);
	cr_assert_eq(m.len, 0);
	cr_assert_eq(m.fd, -1);
	file_unmap(&m);
}

/* A FIFO with no writer: refused at once (a hang here would be the test's timeout). */
Test(fileio, a_fifo_a_directory_and_a_missing_file_are_refused_by_name, .timeout = 30)
{
	const char *names[] = { "fifo", "sub", "missing" };
	const char *why[] = { "a FIFO", "a directory", "No such file" };
	struct file_map m;

	cr_assert_eq(mkfifo(in_dir("fifo"), 0600), 0);
	cr_assert_eq(mkdir(in_dir("sub"), 0700), 0);
	for (int i = 0; i < 3; i++) {
		struct error e = { 0 };
		char *path = strdup(in_dir(names[i]));

		cr_assert_lt(file_map_input(AT_FDCWD, path, true, &m, &e), 0, "%s", names[i]);
		cr_expect(strstr(e.why, path) && strstr(e.why, why[i]), "%s: %s", names[i], e.why);
		cr_expect_null(m.p);
		cr_expect_eq(m.fd, -1);
		file_unmap(&m);
		free(path);
	}
}

/* A zeroed map (never mapped) owns no descriptor: unmapping it must not close fd 0. */
Test(fileio, unmapping_a_zeroed_map_closes_nothing)
{
	struct file_map m = { 0 };
	int fd = dup(0);

	cr_assert(fd >= 0);
	file_unmap(&m);
	cr_expect_neq(fcntl(0, F_GETFD), -1, "fd 0 was closed");
	close(fd);
}

struct seen {
	int n;
	uint32_t types[8];
	int stop_at;
};

static int see(const struct sb_record *r, void *ctx)
{
	struct seen *s = ctx;

	s->types[s->n++] = r->type;
	return s->n == s->stop_at ? -ECANCELED : 0;
}

/* A record of @type, its @body bytes and SIDEBAND_SAMPLE_TYPE's trailer, at @p. */
static size_t record(uint8_t *p, uint32_t type, uint16_t body)
{
	struct perf_event_header h = { .type = type, .size = 8 + body + SIDEBAND_TRAILER_LEN(
					       SIDEBAND_SAMPLE_TYPE) };

	memset(p, 0, h.size);
	memcpy(p, &h, sizeof(h));
	return h.size;
}

Test(fileio, sideband_each_reads_records_in_order_and_stops_where_told_or_cut)
{
	uint8_t buf[512];
	size_t len = 0;
	struct seen s = { 0 };
	struct error e = { 0 };

	len += record(buf + len, PERF_RECORD_ITRACE_START, 8);
	len += record(buf + len, PERF_RECORD_EXIT, 24);
	len += record(buf + len, PERF_RECORD_FORK, 24);
	put("sb", buf, len);
	cr_assert_eq(sideband_each(AT_FDCWD, in_dir("sb"), see, &s, &e), 0, "%s", e.why);
	cr_assert_eq(s.n, 3);
	cr_expect_eq(s.types[0], PERF_RECORD_ITRACE_START);
	cr_expect_eq(s.types[1], PERF_RECORD_EXIT);
	cr_expect_eq(s.types[2], PERF_RECORD_FORK);

	/* the callback's value ends the walk and is returned */
	memset(&s, 0, sizeof(s));
	s.stop_at = 2;
	cr_assert_eq(sideband_each(AT_FDCWD, in_dir("sb"), see, &s, &e), -ECANCELED);
	cr_expect_eq(s.n, 2);

	/* cut inside the third record: the two before it are seen, no error */
	memset(&s, 0, sizeof(s));
	put("cut", buf, len - 3);
	cr_assert_eq(sideband_each(AT_FDCWD, in_dir("cut"), see, &s, &e), 0, "%s", e.why);
	cr_expect_eq(s.n, 2);

	/* not a file: the error names it */
	memset(&e, 0, sizeof(e));
	cr_expect_lt(sideband_each(AT_FDCWD, dir, see, &s, &e), 0);
	cr_expect(strstr(e.why, dir), "%s", e.why);
}
