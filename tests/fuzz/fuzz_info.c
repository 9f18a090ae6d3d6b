// SPDX-License-Identifier: MIT
/*
 * `ptcollect info` end to end on any manifest.json: the command itself (the
 * reader, the checks of the files, the decoder lines, the text and JSON
 * printers) on a bundle directory whose manifest is the input and whose
 * streams exist. It never crashes or leaks, and exits 0 or 2 (a refused
 * manifest), never 1. (tests/fuzz/run discards stdout and stderr.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "msg.h"
#include "out.h"

static char dir[64];
static const char *const files[] = { "manifest.json", "cpu0.pt", "cpu0.pevent", "cpu1.pt",
				     "kallsyms" };

static void put(const char *name, const void *data, size_t size)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
}

static void cleanup(void)
{
	char p[128];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint8_t psb[18] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					 2, 0x82, 2, 0x82, 2, 0x23 };

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/ptc-fuzz-info-%d", (int)getpid());
	if (mkdir(dir, 0700) && access(dir, W_OK))
		abort();
	atexit(cleanup);
	/* Files a manifest may name, with something in them. */
	put("cpu0.pt", psb, sizeof(psb));
	put("cpu0.pevent", psb, 8);
	put("cpu1.pt", psb, 4);
	put("kallsyms", "ffffffff81000000 T _stext\n", 26);
	return 0;
}

static void info(bool json)
{
	char *argv[] = { "info", json ? "--json" : dir, json ? dir : NULL, NULL };
	int ret;

	out_init(stdout, false);
	ret = do_info(json ? 3 : 2, argv);
	if (ret != EXIT_OK && ret != EXIT_USAGE)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	put("manifest.json", data, size);
	info(false);
	info(true);
	fflush(stdout);
	return 0;
}
