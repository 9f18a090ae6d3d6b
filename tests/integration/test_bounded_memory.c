// SPDX-License-Identifier: MIT
/*
 * Memory that does not grow with the input (issue 22, item 5): a 256 MiB
 * sideband file, sparse (a record header every 64 KiB, holes between), is
 * read by decode, dump and archive in bounded memory. The peak resident set
 * of each run is the child's ru_maxrss from wait4(); reading the file whole
 * (or keeping its mapping's pages) takes 256 MiB and more.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "testbundle.h"

#define BIG (256u << 20)
#define BOUND_KB (64u << 10)	/* the man page's "does not grow": 64 MB, ASan included */

/* Run ptcollect with @args (NULL-terminated), output to /dev/null; its peak RSS in KiB. */
static long peak_rss_kb(const char *const *args, int *status)
{
	char *argv[16];
	struct rusage ru;
	int n = 0, st;
	pid_t pid;

	argv[n++] = (char *)run_bin();
	for (int i = 0; args[i]; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return ru.ru_maxrss;
}

/* @path becomes @size bytes of records of an unknown type, each 65528 bytes long, sparse. */
static void sparse_sideband(const char *path, size_t size)
{
	struct perf_event_header h = { .type = 80, .size = 65528 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t off;

	cr_assert_geq(fd, 0, "%s", path);
	for (off = 0; off + h.size <= size; off += h.size)
		cr_assert_eq(pwrite(fd, &h, sizeof(h), (off_t)off), (ssize_t)sizeof(h));
	cr_assert_eq(ftruncate(fd, (off_t)off), 0);
	close(fd);
}

Test(bounded_memory, a_256_MiB_sideband_is_read_in_bounded_memory, .timeout = 120)
{
	struct perf_event_mmap_page pc = { .cap_user_time_zero = 1 };
	char *dir = testbundle_dir(), pevent[256];
	const char *decode[] = { "decode", dir, NULL };
	const char *dump[] = { "dump", pevent, NULL };
	const char *archive[] = { "archive", dir, NULL };
	const char *const *runs[] = { decode, dump, archive };
	int status;

	testbundle_write(dir, &pc, true);
	snprintf(pevent, sizeof(pevent), "%s/cpu0.pevent", dir);
	sparse_sideband(pevent, BIG);
	for (int i = 0; i < 3; i++) {
		long kb = peak_rss_kb(runs[i], &status);

		cr_expect_lt(status, 128, "%s: killed (%d)", runs[i][0], status);
		cr_expect_lt(kb, BOUND_KB, "%s of a %u MiB sideband: %ld KiB resident at its peak "
			     "(bound %u KiB)", runs[i][0], BIG >> 20, kb, BOUND_KB);
	}
	testbundle_remove(dir);
	free(dir);
}

/* @pt (a mkstemp template): BIG bytes without a PSB (a sparse file: PAD), then PSB, PSBEND. */
static void pad_then_psb(char *pt)
{
	static const uint8_t psb_psbend[] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					      0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
					      0x02, 0x23 };
	int fd = mkstemp(pt);

	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, psb_psbend, sizeof(psb_psbend), BIG), (ssize_t)sizeof(psb_psbend));
	close(fd);
}

/*
 * A trace of 256 MiB without a PSB (a sparse file: PAD bytes), then one PSB at its
 * end: dump searches the stretch in bounded steps, dropping them, and libipt's search
 * starts just before the PSB; it kept all 256 MiB resident before.
 */
Test(bounded_memory, dump_skips_a_256_MiB_stretch_without_a_psb_in_bounded_memory)
{
	char pt[] = "/tmp/ptc-bigpad-XXXXXX";
	const char *dump[] = { "dump", "--format", "pt", pt, NULL };
	struct run_result r;
	int status;
	long kb;

	pad_then_psb(pt);
	kb = peak_rss_kb(dump, &status);
	cr_expect_eq(status, 0);
	cr_expect_lt(kb, BOUND_KB, "dump of a %u MiB stretch without a PSB: %ld KiB resident at "
		     "its peak (bound %u KiB)", BIG >> 20, kb, BOUND_KB);
	/* The same PSB found as libipt's search alone finds it. */
	cr_assert_eq(run_ptcollect(NULL, &r, "dump", "--format", "pt", pt, NULL), 0);
	cr_expect_str_eq(r.out, "0000000010000000  psb\n0000000010000010  psbend\n", "%s", r.err);
	run_free(&r);
	unlink(pt);
}

/*
 * decode of a trace whose 256 MiB before its one PSB hold no PSB (PAD bytes, a sparse
 * file): the search for the first PSB goes in bounded steps, dropped behind, and the
 * decoder is synchronized at the PSB it finds; libipt's own search kept all 256 MiB.
 */
Test(bounded_memory, decode_skips_a_256_MiB_stretch_without_a_psb_in_bounded_memory)
{
	char pt[] = "/tmp/ptc-bigpad-XXXXXX";
	const char *decode[] = { "decode", "--pt", pt, "--stats", NULL };
	struct run_result r;
	int status;
	long kb;

	pad_then_psb(pt);
	kb = peak_rss_kb(decode, &status);
	cr_expect_eq(status, 0);
	cr_expect_lt(kb, BOUND_KB, "decode of a %u MiB stretch without a PSB: %ld KiB resident "
		     "at its peak (bound %u KiB)", BIG >> 20, kb, BOUND_KB);
	/* It synchronized at the PSB past the stretch: one PSB, no error. */
	cr_assert_eq(run_ptcollect(NULL, &r, "decode", "--pt", pt, "--stats", NULL), 0);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect_str_empty(r.err);
	run_free(&r);
	unlink(pt);
}
