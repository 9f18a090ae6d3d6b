// SPDX-License-Identifier: MIT
/*
 * What `archive` reads before it copies anything: the image inventory from a
 * bundle's sideband (images_collect() over a stream's .pevent and
 * proc.pevent, the input cut in two), the paths it would place below the
 * sysroot (images_path_ok()), and the manifest that lists them, written and
 * read back. The input's first byte says where the rest is cut in two. It never crashes or leaks; a path it accepts stays below the
 * sysroot; the manifest with the images reads back. The copying itself reads
 * the host's files by the paths the input names, so it is tested on real
 * bundles (tests/integration/test_archive.c, rig case 62) and not here.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images.h"
#include "manifest.h"

static char dir[64];
static int dirfd = -1;

static void cleanup(void)
{
	unlinkat(dirfd, "cpu0.pevent", 0);
	unlinkat(dirfd, "proc.pevent", 0);
	close(dirfd);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/ptc-fuzz-archive-%d", (int)getpid());
	if (mkdir(dir, 0700) && access(dir, W_OK))
		abort();
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dirfd < 0)
		abort();
	atexit(cleanup);
	return 0;
}

static void put(const char *name, const uint8_t *data, size_t size)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd))
		abort();
}

/* A path archive would place: absolute, and no component that leaves the sysroot. */
static void check_path(const char *p)
{
	if (p[0] != '/' || strstr(p, "/../") || strstr(p, "/./") || strstr(p, "//"))
		abort();
	if (strlen(p) >= 3 && !strcmp(p + strlen(p) - 3, "/.."))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *self[] = { "ptcollect" };
	/* The first byte says where the rest is cut between proc.pevent and cpu0.pevent. */
	size_t cut = size ? data[0] * (size - 1) / 256 : 0;
	struct error e = { 0 };
	struct manifest m, back;
	struct image_paths ip;
	struct mstream *s;
	json_t *j;
	char *text;

	data += size ? 1 : 0;
	size -= size ? 1 : 0;
	put("proc.pevent", data, cut);
	put("cpu0.pevent", data + cut, size - cut);
	manifest_init(&m);
	m.target.kind = TARGET_PID;
	s = manifest_add_stream(&m);
	if (!s || manifest_set(&s->file, "cpu0.pt") || manifest_set(&s->sideband, "cpu0.pevent") ||
	    manifest_set(&m.proc_sideband, "proc.pevent") || manifest_set(&m.pmu_name, "intel_pt") ||
	    manifest_set(&m.cpu.vendor, "GenuineIntel") ||
	    manifest_set_argv(&m.command, &m.command_argc, self, 1))
		abort();
	if (images_collect(dirfd, &m, &e) && !e.why[0])
		abort();
	if (images_paths(&m, &ip))
		abort();
	for (int i = 0; i < m.nr_images; i++) {
		if (images_path_ok(m.images[i].path))
			check_path(m.images[i].path);
		if (ip.first[i] > i || strcmp(m.images[ip.first[i]].path, m.images[i].path))
			abort();
	}
	images_paths_free(&ip);
	j = manifest_to_json(&m);
	text = j ? json_dumps(j, 0) : NULL;
	if (!text || manifest_parse(text, strlen(text), &back, &e))
		abort();	/* the manifest archive writes must read back */
	if (back.nr_images != m.nr_images)
		abort();
	free(text);
	json_decref(j);
	manifest_free(&back);
	manifest_free(&m);
	return 0;
}
