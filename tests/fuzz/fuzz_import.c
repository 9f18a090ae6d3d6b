// SPDX-License-Identifier: MIT
/*
 * import on mutated perf.data: the reader (header, attrs, features, records
 * in file and pipe mode) and the converter, writing a real bundle. It never
 * crashes, hangs or leaks; a refusal says why and leaves no bundle; an
 * accepted input leaves a bundle whose manifest reads back.
 */
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

static char base[] = "/tmp/ptc-fuzz-import-XXXXXX";
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
