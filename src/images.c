// SPDX-License-Identifier: MIT
/* The image inventory: mapped files from the sideband, with their build-ids. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "images.h"
#include "sideband.h"
#include "symbols.h"

static int add_image(struct manifest *m, const char *path)
{
	struct mimage *img;
	char id[128];

	if (path[0] != '/' || !strncmp(path, "//", 2))
		return 0;	/* [vdso], [stack], //anon: not files */
	for (int i = 0; i < m->nr_images; i++)
		if (!strcmp(m->images[i].path, path))
			return 0;
	img = manifest_add_image(m);
	if (!img || manifest_set(&img->path, path))
		return -ENOMEM;
	if (!symbols_build_id(path, id, sizeof(id)) && manifest_set(&img->build_id, id))
		return -ENOMEM;
	return 0;
}

static int scan(int dirfd, const char *file, struct manifest *m, struct error *e)
{
	int fd = file_open_input(dirfd, file, e), ret = 0;
	struct stat st;
	uint8_t *buf;
	size_t off = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !st.st_size) {
		close(fd);
		return 0;
	}
	buf = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (buf == MAP_FAILED)
		return err_runtime(e, -errno, "%s: %s", file, strerror(errno));
	while (!ret && off < (size_t)st.st_size) {
		struct sb_record r;
		int n = sideband_parse(buf, (size_t)st.st_size, off, SIDEBAND_SAMPLE_TYPE, &r, NULL);
		const char *f;

		if (n < 0)
			break;	/* a file cut short: what came before is listed */
		f = sideband_mmap_file(&r);
		if (f)
			ret = add_image(m, f);
		off += (size_t)n;
	}
	munmap(buf, (size_t)st.st_size);
	return ret ? err_runtime(e, ret, "out of memory") : 0;
}

int images_collect(int dirfd, struct manifest *m, struct error *e)
{
	int ret = 0;

	if (m->proc_sideband)
		ret = scan(dirfd, m->proc_sideband, m, e);
	for (int i = 0; !ret && i < m->nr_streams; i++)
		ret = scan(dirfd, m->streams[i].sideband, m, e);
	return ret;
}
