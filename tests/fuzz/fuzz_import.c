// SPDX-License-Identifier: MIT
/*
 * import on mutated perf.data: the reader (header, attrs, features, records
 * in file and pipe mode) and the converter, writing a real bundle. It never
 * crashes, hangs or leaks; a refusal says why and leaves no bundle; an
 * accepted input leaves a bundle whose manifest reads back.
 *
 * With PTC_FUZZ_SWEEP=DIR (tests/fuzz/run sets it to the seeds), every file in DIR is first
 * run with each of its bytes set to 0x00, 0xff and 0x80 in turn: the exhaustive single-byte
 * damage search, of which tests/unit/test_import.c runs a fixed sample.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"
#include "manifest.h"

/* The bundles go to a tmpfs when there is one: import fsyncs each, and a disk's fsync would
 * make the sweep (below) take minutes. */
static char base[64];
static char dir[sizeof(base) + 8];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_base(void)
{
	nftw(base, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void check_bundle(void)
{
	struct error e = { 0 };
	struct manifest m;
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0 || manifest_read(fd, dir, &m, &e))
		abort();	/* what import wrote, the reader must read */
	manifest_free(&m);
	close(fd);
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *const argv[] = { "ptcollect", "import", "fuzz.data", "b" };
	struct import_opts o = { .input = "fuzz.data", .dir = dir, .argv = argv, .argc = 4 };
	struct import_stats st;
	struct warnings w = { 0 };
	struct error e = { 0 };
	struct stat sb;

	if (!dir[0]) {
		snprintf(base, sizeof(base), "%s/ptc-fuzz-import-XXXXXX",
			 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
		if (!mkdtemp(base))
			abort();
		atexit(remove_base);
		snprintf(dir, sizeof(dir), "%s/b", base);
	}
	o.fd = memfd_create("fuzz.data", MFD_CLOEXEC);
	if (o.fd < 0 || write(o.fd, data, size) != (ssize_t)size || lseek(o.fd, 0, SEEK_SET))
		abort();
	if (import_perfdata(&o, &st, &w, &e)) {
		if (!e.why[0] || !stat(dir, &sb))
			abort();	/* a refusal says why, and leaves nothing */
	} else {
		check_bundle();
	}
	close(o.fd);
	return 0;
}

static void sweep_file(const char *path, size_t *inputs)
{
	static const uint8_t values[] = { 0x00, 0xff, 0x80 };
	uint8_t *p;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		abort();
	p = malloc((size_t)n + 1);
	if (!p || fread(p, 1, (size_t)n, f) != (size_t)n)
		abort();
	fclose(f);
	for (long at = 0; at < n; at++) {
		uint8_t old = p[at];

		for (size_t v = 0; v < sizeof(values); v++) {
			p[at] = values[v];
			LLVMFuzzerTestOneInput(p, (size_t)n);
			(*inputs)++;
		}
		p[at] = old;
	}
	free(p);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *d = getenv("PTC_FUZZ_SWEEP");
	size_t files = 0, inputs = 0;
	struct dirent *de;
	DIR *dir_p;

	(void)argc;
	(void)argv;
	if (!d || !*d)
		return 0;
	dir_p = opendir(d);
	if (!dir_p) {
		fprintf(stderr, "PTC_FUZZ_SWEEP=%s: cannot open it\n", d);
		abort();
	}
	while ((de = readdir(dir_p))) {
		char path[4096];
		struct stat sb;

		snprintf(path, sizeof(path), "%s/%s", d, de->d_name);
		if (stat(path, &sb) || !S_ISREG(sb.st_mode))
			continue;
		sweep_file(path, &inputs);
		files++;
	}
	closedir(dir_p);
	fprintf(stderr, "sweep: %zu files of %s, %zu inputs with one byte damaged: no fault\n",
		files, d, inputs);
	return 0;
}
