// SPDX-License-Identifier: MIT
/* The mapped-file inventory: one entry per file as the records name it, and paths archive may use. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "images.h"
#include "manifest.h"
#include "sideband.h"

Test(images, paths_archive_may_place_below_the_sysroot)
{
	cr_expect(images_path_ok("/usr/lib/libc.so.6"));
	cr_expect(images_path_ok("/a b/c'd\nx"));
	cr_expect(images_path_ok("/.hidden/..x/x.."));
	cr_expect(!images_path_ok("relative/x"));
	cr_expect(!images_path_ok("/"));
	cr_expect(!images_path_ok("/a//b"));
	cr_expect(!images_path_ok("/a/./b"));
	cr_expect(!images_path_ok("/a/../../etc/passwd"));
	cr_expect(!images_path_ok("/a/.."));
	cr_expect(!images_path_ok("/a/"));
	cr_expect(!images_path_ok("/tmp/x (deleted)"));
}

/* An MMAP2 record of @file: with a build-id of @id_byte repeated, else @ino on device 8:1. */
static size_t mmap2(uint8_t *out, const char *file, uint16_t misc, uint8_t id_byte, uint64_t ino)
{
	size_t slen = strlen(file) + 1, pad = (slen + 7) & ~(size_t)7, n = 8;
	struct perf_event_header h = { .type = PERF_RECORD_MMAP2, .misc = misc };
	struct sb_trailer tr = { .pid = 1, .tid = 1 };
	uint8_t body[64] = { 0 };
	uint32_t dev[2] = { 8, 1 };

	if (id_byte) {
		h.misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		body[32] = 20;
		memset(body + 36, id_byte, 20);
	} else {
		memcpy(body + 32, dev, 8);
		memcpy(body + 40, &ino, 8);
	}
	memcpy(out + n, body, 64);
	n += 64;
	memset(out + n, 0, pad);
	memcpy(out + n, file, slen);
	n += pad;
	memcpy(out + n, &tr, sizeof(tr));
	n += sizeof(tr);
	h.size = (uint16_t)n;
	memcpy(out, &h, 8);
	return n;
}

Test(images, one_entry_per_file_the_records_name)
{
	char dir[] = "/tmp/ptc-images-XXXXXX", path[64];
	uint8_t buf[4096];
	struct error e = { 0 };
	struct image_paths ip;
	struct manifest m;
	size_t n = 0;
	int fd, dirfd;
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	n += mmap2(buf + n, "/a/prog", PERF_RECORD_MISC_USER, 0xaa, 0);
	n += mmap2(buf + n, "/a/prog", PERF_RECORD_MISC_USER, 0, 5);	/* no id then: the same */
	n += mmap2(buf + n, "/a/prog", PERF_RECORD_MISC_USER, 0xbb, 0);	/* replaced */
	n += mmap2(buf + n, "/lib/x", PERF_RECORD_MISC_USER, 0, 7);
	n += mmap2(buf + n, "/lib/x", PERF_RECORD_MISC_USER, 0, 7);
	n += mmap2(buf + n, "/lib/x", PERF_RECORD_MISC_USER, 0, 9);	/* another inode */
	n += mmap2(buf + n, "[vdso]", PERF_RECORD_MISC_USER, 0, 0);
	n += mmap2(buf + n, "//anon", PERF_RECORD_MISC_USER, 0, 0);
	n += mmap2(buf + n, "/gone (deleted)", PERF_RECORD_MISC_USER, 0, 3);
	n += mmap2(buf + n, "/lib/modules/k.ko", PERF_RECORD_MISC_KERNEL, 0, 4);
	snprintf(path, sizeof(path), "%s/cpu0.pevent", dir);
	f = fopen(path, "w");
	cr_assert_eq(fwrite(buf, 1, n, f), n);
	fclose(f);
	manifest_init(&m);
	cr_assert_not_null(manifest_add_stream(&m));
	cr_assert_eq(manifest_set(&m.streams[0].sideband, "cpu0.pevent"), 0);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_eq(images_collect(dirfd, &m, &e), 0, "%s", e.why);
	cr_assert_eq(m.nr_images, 4, "%d images", m.nr_images);
	cr_expect_str_eq(m.images[0].path, "/a/prog");
	cr_expect_str_eq(m.images[0].build_id, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	cr_expect_str_eq(m.images[1].path, "/a/prog");
	cr_expect_str_eq(m.images[1].build_id, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
	cr_assert_eq(images_paths(&m, &ip), 0);
	cr_expect_eq(ip.next[0], 1, "replaced while traced");
	cr_expect_eq(ip.count[0], 2);
	cr_expect_eq(ip.first[1], 0);
	cr_expect_eq(ip.next[1], -1);
	cr_expect_str_eq(m.images[2].path, "/lib/x");
	cr_expect(!m.images[2].build_id && m.images[2].has_inode && m.images[2].maj == 8 &&
		  m.images[2].min == 1 && m.images[2].ino == 7);
	cr_expect_eq(m.images[3].ino, 9);
	cr_expect_eq(ip.next[2], 3);
	cr_expect_eq(ip.first[3], 2);
	images_paths_free(&ip);
	/* Collected again (archive does), the list is the same, not doubled. */
	cr_assert_eq(images_collect(dirfd, &m, &e), 0, "%s", e.why);
	cr_expect_eq(m.nr_images, 4);
	/* A file that is there now but of another inode is named as changed. */
	{
		struct mimage img = { .path = path, .has_inode = true, .maj = 8, .min = 1, .ino = 7 };
		char why[256];

		fd = open(path, O_RDONLY);
		cr_expect_eq(images_verify_fd(&img, fd, why, sizeof(why)), IMAGE_CHANGED);
		cr_expect(strstr(why, "not the file that was mapped"), "%s", why);
		img.has_inode = false;
		cr_expect_eq(images_verify_fd(&img, fd, why, sizeof(why)), IMAGE_UNCHECKED);
		img.build_id = "aa";
		cr_expect_eq(images_verify_fd(&img, fd, why, sizeof(why)), IMAGE_CHANGED);
		cr_expect(strstr(why, "no build-id now, it was mapped with aa"), "%s", why);
		close(fd);
	}
	close(dirfd);
	manifest_free(&m);
	unlink(path);
	rmdir(dir);
}
