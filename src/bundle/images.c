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

/*
 * The images collected so far, by path: a chained hash table over
 * m->images, so that each record is held against the images of its own
 * path only (a scan of every image made `archive` quadratic in them).
 */
struct path_table {
	int *head;		/* bucket -> an image index, -1 */
	int *chain;		/* image index -> the next one in its bucket, -1 */
	size_t mask;		/* buckets - 1 */
	int cap;		/* room in chain */
};

static size_t path_hash(const char *s)
{
	size_t h = 14695981039346656037ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static void table_link(struct path_table *t, const struct manifest *m, int i)
{
	size_t b = path_hash(m->images[i].path) & t->mask;

	t->chain[i] = t->head[b];
	t->head[b] = i;
}

/* Room for one more image (the table grows with the list, half full at most). */
static int table_grow(struct path_table *t, const struct manifest *m)
{
	size_t buckets;
	int *n;

	if (m->nr_images >= t->cap) {
		int cap = t->cap ? t->cap * 2 : 256;

		n = realloc(t->chain, (size_t)cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		t->chain = n;
		t->cap = cap;
	}
	if (t->head && ((size_t)m->nr_images + 1) * 2 <= t->mask + 1)
		return 0;
	buckets = t->head ? (t->mask + 1) * 2 : 512;
	n = realloc(t->head, buckets * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->head = n;
	t->mask = buckets - 1;
	memset(t->head, 0xff, buckets * sizeof(*n));
	for (int i = 0; i < m->nr_images; i++)
		table_link(t, m, i);
	return 0;
}

static void table_free(struct path_table *t)
{
	free(t->head);
	free(t->chain);
}

static int add(struct manifest *m, struct path_table *t, const struct mapping *mp)
{
	struct mimage *img;
	int first = -1;

	/* the first image in the list that is this file, as a scan of the list finds it */
	if (t->head)
		for (int i = t->head[path_hash(mp->path) & t->mask]; i >= 0; i = t->chain[i])
			if ((first < 0 || i < first) && same_file(&m->images[i], mp))
				first = i;
	if (first >= 0) {
		img = &m->images[first];
		if (!img->build_id && mp->build_id[0]) {
			img->has_inode = false;
			return manifest_set(&img->build_id, mp->build_id);
		}
		return 0;
	}
	if (table_grow(t, m))
		return -ENOMEM;
	img = manifest_add_image(m);
	if (!img || manifest_set(&img->path, mp->path) ||
	    (mp->build_id[0] && manifest_set(&img->build_id, mp->build_id)))
		return -ENOMEM;
	img->has_inode = !mp->build_id[0] && mp->has_inode;
	img->maj = mp->maj;
	img->min = mp->min;
	img->ino = mp->ino;
	table_link(t, m, m->nr_images - 1);
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

struct scan_ctx {
	struct manifest *m;
	struct path_table *t;
	int err;		/* add()'s: memory */
};

static int scan_record(const struct sb_record *r, void *ctx)
{
	struct scan_ctx *c = ctx;
	struct mapping mp;

	if (read_mapping(r, &mp))
		c->err = add(c->m, c->t, &mp);
	return c->err;
}

/* A file cut short: what came before is listed. */
static int scan(int dirfd, const char *file, struct manifest *m, struct path_table *t,
		struct error *e)
{
	struct scan_ctx c = { m, t, 0 };
	int ret = sideband_each(dirfd, file, scan_record, &c, e);

	return c.err ? err_runtime(e, c.err, "out of memory") : ret;
}

int images_collect(int dirfd, struct manifest *m, struct error *e)
{
	struct path_table t = { 0 };
	int ret = 0;

	for (int i = 0; i < m->nr_images; i++) {
		free(m->images[i].path);
		free(m->images[i].build_id);
	}
	m->nr_images = 0;
	if (m->proc_sideband)
		ret = scan(dirfd, m->proc_sideband, m, &t, e);
	for (int i = 0; !ret && i < m->nr_streams; i++)
		ret = scan(dirfd, m->streams[i].sideband, m, &t, e);
	table_free(&t);
	return ret;
}

static int cmp_path(const void *a, const void *b, void *arg)
{
	const struct manifest *m = arg;
	int i = *(const int *)a, j = *(const int *)b;
	int c = strcmp(m->images[i].path, m->images[j].path);

	return c ? c : (i > j) - (i < j);
}

int images_paths(const struct manifest *m, struct image_paths *ip)
{
	int n = m->nr_images, *order;

	memset(ip, 0, sizeof(*ip));
	order = malloc(((size_t)n + 1) * sizeof(*order));
	ip->first = malloc(((size_t)n + 1) * sizeof(*ip->first));
	ip->next = malloc(((size_t)n + 1) * sizeof(*ip->next));
	ip->count = malloc(((size_t)n + 1) * sizeof(*ip->count));
	if (!order || !ip->first || !ip->next || !ip->count) {
		free(order);
		images_paths_free(ip);
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, (size_t)n, sizeof(*order), cmp_path, (void *)m);
	for (int k = 0; k < n;) {
		int end = k + 1;

		while (end < n && !strcmp(m->images[order[end]].path, m->images[order[k]].path))
			end++;
		for (int l = k; l < end; l++) {
			ip->first[order[l]] = order[k];
			ip->next[order[l]] = l + 1 < end ? order[l + 1] : -1;
			ip->count[order[l]] = end - k;
		}
		k = end;
	}
	free(order);
	return 0;
}

void images_paths_free(struct image_paths *ip)
{
	free(ip->first);
	free(ip->next);
	free(ip->count);
	memset(ip, 0, sizeof(*ip));
}

void images_check(const struct manifest *m, struct warnings *w)
{
	struct image_paths ip;

	if (images_paths(m, &ip)) {
		warn_add(w, "out of memory: the mapped files were not checked");
		return;
	}
	for (int i = 0; i < m->nr_images; i++) {
		const struct mimage *img = &m->images[i];
		char why[256];
		int fd;

		if (ip.first[i] != i)
			continue;	/* said with the first */
		if (ip.count[i] > 1) {
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
	images_paths_free(&ip);
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
