// SPDX-License-Identifier: MIT
/* The image inventory: mapped files from the sideband, with the build-ids they were mapped with. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fileio.h"
#include "images.h"
#include "sideband.h"
#include "symbols.h"

#define DELETED " (deleted)"

bool images_path_ok(const char *path)
{
	size_t len = strlen(path), dl = strlen(DELETED);

	if (path[0] != '/' || len >= PATH_MAX || (len > dl && !strcmp(path + len - dl, DELETED)))
		return false;
	/* Every component a name: no "", ".", "..", so it stays below the sysroot. */
	for (const char *p = path + 1;; p += strcspn(p, "/") + 1) {
		size_t n = strcspn(p, "/");

		if (!n || (n == 1 && p[0] == '.') || (n == 2 && !strncmp(p, "..", 2)))
			return false;
		if (!p[n])
			return true;
	}
}

/* What one MMAP/MMAP2 record says of its file. */
struct mapping {
	const char *path;
	char build_id[2 * SIDEBAND_BUILD_ID_MAX + 1];	/* "" when none */
	bool has_inode;
	unsigned int maj, min;
	uint64_t ino;
};

static bool same_file(const struct mimage *img, const struct mapping *mp)
{
	if (strcmp(img->path, mp->path))
		return false;
	if (img->build_id && mp->build_id[0])
		return !strcmp(img->build_id, mp->build_id);
	if (img->has_inode && mp->has_inode && !img->build_id && !mp->build_id[0])
		return img->maj == mp->maj && img->min == mp->min && img->ino == mp->ino;
	/* One names a build-id and the other none (the kernel could not read it then): the
	 * build-id is kept, and nothing contradicts it. */
	return true;
}

static int add(struct manifest *m, const struct mapping *mp)
{
	struct mimage *img;

	for (int i = 0; i < m->nr_images; i++) {
		img = &m->images[i];
		if (!same_file(img, mp))
			continue;
		if (!img->build_id && mp->build_id[0]) {
			img->has_inode = false;
			return manifest_set(&img->build_id, mp->build_id);
		}
		return 0;
	}
	img = manifest_add_image(m);
	if (!img || manifest_set(&img->path, mp->path) ||
	    (mp->build_id[0] && manifest_set(&img->build_id, mp->build_id)))
		return -ENOMEM;
	img->has_inode = !mp->build_id[0] && mp->has_inode;
	img->maj = mp->maj;
	img->min = mp->min;
	img->ino = mp->ino;
	return 0;
}

/* A user-space mapping of a file; false for everything else (libipt ignores kernel ones). */
static bool read_mapping(const struct sb_record *r, struct mapping *mp)
{
	uint32_t v32[2];

	memset(mp, 0, sizeof(*mp));
	mp->path = sideband_mmap_file(r);
	if (!mp->path || !images_path_ok(mp->path) ||
	    (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
		return false;
	if (sideband_mmap_build_id(r, mp->build_id, sizeof(mp->build_id)) ||
	    r->type != PERF_RECORD_MMAP2)
		return true;
	memcpy(v32, r->body + 32, 8);
	memcpy(&mp->ino, r->body + 40, 8);
	mp->maj = v32[0];
	mp->min = v32[1];
	mp->has_inode = mp->ino != 0;
	return true;
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
		struct mapping mp;
		int n = sideband_parse(buf, (size_t)st.st_size, off, SIDEBAND_SAMPLE_TYPE, &r, NULL);

		if (n < 0)
			break;	/* a file cut short: what came before is listed */
		if (read_mapping(&r, &mp))
			ret = add(m, &mp);
		off += (size_t)n;
	}
	munmap(buf, (size_t)st.st_size);
	return ret ? err_runtime(e, ret, "out of memory") : 0;
}

int images_collect(int dirfd, struct manifest *m, struct error *e)
{
	int ret = 0;

	for (int i = 0; i < m->nr_images; i++) {
		free(m->images[i].path);
		free(m->images[i].build_id);
	}
	m->nr_images = 0;
	if (m->proc_sideband)
		ret = scan(dirfd, m->proc_sideband, m, e);
	for (int i = 0; !ret && i < m->nr_streams; i++)
		ret = scan(dirfd, m->streams[i].sideband, m, e);
	return ret;
}

int images_same_path(const struct manifest *m, int i, int from)
{
	for (int j = from + 1; j < m->nr_images; j++)
		if (j != i && !strcmp(m->images[j].path, m->images[i].path))
			return j;
	return -1;
}

void images_check(const struct manifest *m, struct warnings *w)
{
	for (int i = 0; i < m->nr_images; i++) {
		const struct mimage *img = &m->images[i];
		char why[256];
		int fd, j = images_same_path(m, i, -1);

		if (j >= 0 && j < i)
			continue;	/* said with the first */
		if (j >= 0) {
			warn_add(w, "%s was replaced while it was traced: it was mapped as two "
				 "different files; a sysroot can hold only one of them", img->path);
			continue;
		}
		fd = file_open_input(AT_FDCWD, img->path, NULL);
		if (fd < 0)
			continue;	/* gone: archive says so */
		if (images_verify_fd(img, fd, why, sizeof(why)) == IMAGE_CHANGED)
			warn_add(w, "%s changed since it was mapped: %s; archive cannot copy the "
				 "file that was traced", img->path, why);
		close(fd);
	}
}

enum image_verdict images_verify_fd(const struct mimage *img, int fd, char *why, size_t len)
{
	char id[2 * SIDEBAND_BUILD_ID_MAX + 1];
	struct stat st;

	why[0] = '\0';
	if (img->build_id) {
		if (symbols_build_id_fd(fd, id, sizeof(id)))
			snprintf(why, len, "it has no build-id now, it was mapped with %s",
				 img->build_id);
		else if (strcmp(id, img->build_id))
			snprintf(why, len, "its build-id is %s now, it was mapped with %s", id,
				 img->build_id);
		return why[0] ? IMAGE_CHANGED : IMAGE_SAME;
	}
	if (!img->has_inode)
		return IMAGE_UNCHECKED;
	if (fstat(fd, &st))
		return IMAGE_UNCHECKED;
	if (major(st.st_dev) == img->maj && minor(st.st_dev) == img->min && st.st_ino == img->ino)
		return IMAGE_SAME;
	snprintf(why, len, "no build-id was recorded for it, and it is not the file that was "
		 "mapped (device and inode %x:%x %llu, now %x:%x %llu)", img->maj, img->min,
		 (unsigned long long)img->ino, major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino);
	return IMAGE_CHANGED;
}
