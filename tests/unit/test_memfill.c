// SPDX-License-Identifier: MIT
/*
 * A decoder's memory as it is used from two CPUs: tables filled before they are read
 * (memfill), and code read from the image's own mapping of a file, which must be the
 * bytes (and the errors) libipt's section cache reads.
 */
#include <criterion/criterion.h>
#include <intel-pt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "error.h"
#include "iptfill.h"
#include "memfill.h"
#include "memimage.h"

/* Pages of [p, p + size) that are resident. */
static size_t resident(void *p, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (size + page - 1) / page, r = 0;
	unsigned char *v = malloc(n);

	cr_assert(v);
	cr_assert_eq(mincore(p, size, v), 0);
	for (size_t i = 0; i < n; i++)
		r += v[i] & 1;
	free(v);
	return r;
}

Test(memfill, a_fresh_table_is_resident_and_zero_after)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 256 * page;
	uint8_t *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			  0);

	cr_assert(m != MAP_FAILED);
	cr_assert_eq(resident(m, size), 0, "a fresh mapping has no pages yet");
	/* Not page-aligned at either end: the partial pages are written as well. */
	memfill(m + 100, size - 200);
	cr_assert_eq(resident(m, size), 256);
	for (size_t i = 0; i < size; i++)
		cr_assert_eq(m[i], 0, "byte %zu", i);
	munmap(m, size);
}

/*
 * memresident(): every page the range touches is resident after, and no byte changed (a
 * page written before keeps its bytes: another thread may be writing there).
 */
Test(memfill, resident_pages_keep_their_bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = 8 * page;
	uint8_t *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			  0);

#ifdef __SANITIZE_ADDRESS__
	cr_skip_test("memresident() does nothing under ASan");
#endif
	cr_assert(m != MAP_FAILED);
	memset(m + 2 * page + 10, 0x5a, 100);
	cr_assert_eq(resident(m, size), 1);
	/* From inside page 1 to inside page 4: pages 1 to 4. */
	memresident(m + page + 100, 3 * page);
	cr_assert_eq(resident(m, size), 4);
	cr_assert_eq(resident(m + page, 4 * page), 4);
	for (size_t i = 0; i < size; i++)
		cr_assert_eq(m[i], i >= 2 * page + 10 && i < 2 * page + 110 ? 0x5a : 0, "byte %zu", i);
	munmap(m, size);
}

/* A file of @n bytes, byte i = i * 7 + 3, its path in @path. */
static void code_file(char *path, size_t n)
{
	FILE *f;
	int fd;

	strcpy(path, "/tmp/ptc-memfill-XXXXXX");
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	cr_assert(f);
	for (size_t i = 0; i < n; i++)
		fputc((int)((i * 7 + 3) & 0xff), f);
	cr_assert_eq(fclose(f), 0);
}

Test(memimage, base_code_reads_what_libipt_reads)
{
	/* Inside, across the section's end, at its last byte, before, after, at the file's. */
	static const struct { uint64_t ip; size_t n; } reads[] = {
		{ 0x1000, 15 }, { 0x1000 + 77, 256 }, { 0x1000 + 4990, 15 }, { 0x1000 + 4999, 1 },
		{ 0x1000 + 4999, 40 }, { 0x1000 + 5000, 15 }, { 0xfff, 15 }, { 0x1000, 5000 },
		{ 0x1000, 70000 }, { 0x9000 + 1990, 64 }, { 0x9000 + 2900, 15 },
	};
	struct pt_image_section_cache *ref = pt_iscache_alloc(NULL);
	struct image_store *s;
	struct error e;
	char path[64];
	uint8_t *a = malloc(70000), *b = malloc(70000);
	int isid[2], risid[2];

	cr_assert(ref && a && b);
	code_file(path, 10000);
	cr_assert_eq(image_store_new(&s, NULL, &e), 0);
	/* A range of the file, and its tail (past the file's end for libipt's extent). */
	cr_assert_eq(image_add_raw(s, NULL, path, 100, 5000, 0x1000, &e), 0);
	cr_assert_eq(image_add_raw(s, NULL, path, 8000, 0, 0x9000, &e), 0);
	risid[0] = pt_iscache_add_file(ref, path, 100, 5000, 0x1000);
	risid[1] = pt_iscache_add_file(ref, path, 8000, 2000, 0x9000);
	cr_assert(risid[0] > 0 && risid[1] > 0);
	{
		uint64_t end;

		isid[0] = image_base_find(s, 0x1000, &end);
		isid[1] = image_base_find(s, 0x9000, &end);
		cr_assert(isid[0] > 0 && isid[1] > 0);
	}
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
			size_t n = reads[i].n > UINT16_MAX ? UINT16_MAX : reads[i].n;
			int got, want;

			memset(a, 0xaa, 70000);
			memset(b, 0xaa, 70000);
			got = image_read(s, isid[k], reads[i].ip, a, reads[i].n);
			want = pt_iscache_read(ref, b, (uint16_t)n, risid[k], reads[i].ip);
			cr_assert_eq(got, want, "section %d, read %zu", k, i);
			cr_assert_eq(memcmp(a, b, 70000), 0, "section %d, read %zu", k, i);
		}
	cr_assert_lt(image_read(s, 0, 0x1000, a, 15), 0);
	image_store_free(s);
	pt_iscache_free(ref);
	unlink(path);
	free(a);
	free(b);
}

/* Workers' stores on one section cache: a section once for all, the cache theirs to outlive. */
Test(memimage, stores_share_a_section_cache)
{
	struct pt_image_section_cache *c = image_iscache_new();
	struct image_store *a, *b;
	uint8_t x[16], y[16];
	struct error e;
	char path[64];
	uint64_t end;
	int ia, ib;

	cr_assert(c);
	code_file(path, 4096);
	cr_assert_eq(image_store_new_in(&a, NULL, c, &e), 0);
	cr_assert_eq(image_store_new_in(&b, NULL, c, &e), 0);
	cr_assert_eq(image_add_raw(a, NULL, path, 0, 0, 0x401000, &e), 0);
	cr_assert_eq(image_add_raw(b, NULL, path, 0, 0, 0x401000, &e), 0);
	ia = image_base_find(a, 0x401010, &end);
	ib = image_base_find(b, 0x401010, &end);
	cr_assert(ia > 0);
	cr_assert_eq(ia, ib, "one section: libipt's block cache of it is the workers' both");
	image_store_free(a);
	/* The cache and the section are still there for the other. */
	cr_assert_eq(pt_iscache_read(c, x, sizeof(x), ib, 0x401010), (int)sizeof(x));
	cr_assert_eq(image_read(b, ib, 0x401010, y, sizeof(y)), (int)sizeof(y));
	cr_assert_eq(memcmp(x, y, sizeof(x)), 0);
	for (size_t i = 0; i < sizeof(x); i++)
		cr_assert_eq(x[i], (uint8_t)((0x10 + i) * 7 + 3));
	image_store_free(b);
	image_iscache_free(c);
	unlink(path);
}

/*
 * A trace from a PSB+ at @ip (tracing on), a conditional branch not taken, then disabled at
 * the next indirect branch (a branch first: a pending disable is reached by libipt's slow
 * path, which uses no block cache).
 */
static size_t from_psb(uint8_t *buf, size_t cap, uint64_t ip)
{
	struct pt_config c;
	struct pt_encoder *enc;
	struct pt_packet p[6];
	uint64_t off = 0;

	memset(p, 0, sizeof(p));
	p[0].type = ppt_psb;
	p[1].type = ppt_mode;
	p[1].payload.mode.leaf = pt_mol_exec;
	p[1].payload.mode.bits.exec.csl = 1;
	p[2].type = ppt_fup;
	p[2].payload.ip.ipc = pt_ipc_sext_48;
	p[2].payload.ip.ip = ip;
	p[3].type = ppt_psbend;
	p[4].type = ppt_tnt_8;
	p[4].payload.tnt.bit_size = 1;
	p[4].payload.tnt.payload = 0;
	p[5].type = ppt_tip_pgd;
	p[5].payload.ip.ipc = pt_ipc_suppressed;
	pt_config_init(&c);
	c.begin = buf;
	c.end = buf + cap;
	enc = pt_alloc_encoder(&c);
	cr_assert(enc);
	for (int i = 0; i < 6; i++)
		cr_assert_geq(pt_enc_next(enc, &p[i]), 0, "packet %d", i);
	cr_assert_geq(pt_enc_get_offset(enc, &off), 0);
	pt_free_encoder(enc);
	return (size_t)off;
}

/*
 * libipt's block cache of a section (4 bytes a byte of code), made by libipt's calloc() as
 * its block decoder first runs there, is filled once the hook is in; a calloc() of the
 * program's own is not libipt's and is left alone.
 */
Test(iptfill, libipts_block_cache_is_filled_and_no_other_allocation)
{
	size_t code = 64u << 10;
	uint8_t trace[256];
	struct pt_image_section_cache *ic = image_iscache_new();
	struct pt_block_decoder *bd;
	struct pt_config c;
	struct pt_block blk;
	struct pt_event ev;
	uint64_t filled, calls;
	char path[64];
	FILE *f;
	struct image_store *s;
	struct error e;
	int fd, status;
	void *mine;

	cr_assert(ic);
	strcpy(path, "/tmp/ptc-iptfill-XXXXXX");
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	cr_assert(f);
	for (size_t i = 0; i + 3 < code; i++)
		fputc(0x90, f);		/* nop ... */
	fputc(0x74, f);			/* ... jz .+2 */
	fputc(0x00, f);
	fputc(0xc3, f);			/* ret */
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(image_store_new_in(&s, NULL, ic, &e), 0);
	cr_assert_eq(image_add_raw(s, NULL, path, 0, 0, 0x401000, &e), 0);

	cr_assert(iptfill_hook(), "libipt is a library here: its calloc entry can be hooked");
	filled = iptfill_filled();
	calls = iptfill_calls();
	mine = calloc(1, 1u << 20);
	cr_assert(mine);
	cr_assert_eq(iptfill_calls(), calls, "the program's own calloc() is not libipt's");
	free(mine);

	pt_config_init(&c);
	c.begin = trace;
	c.end = trace + from_psb(trace, sizeof(trace), 0x401000);
	bd = pt_blk_alloc_decoder(&c);
	cr_assert(bd);
	cr_assert_geq(pt_blk_set_image(bd, image_base(s)), 0);
	status = pt_blk_sync_forward(bd);
	cr_assert_geq(status, 0, "%s", pt_errstr(pt_errcode(status)));
	for (int i = 0; i < 4 && status >= 0; i++) {
		while (status >= 0 && (status & pts_event_pending))
			status = pt_blk_event(bd, &ev, sizeof(ev));
		if (status >= 0)
			status = pt_blk_next(bd, &blk, sizeof(blk));
	}
	cr_assert_gt(iptfill_calls(), calls, "libipt's block decoder made its block cache");
	cr_assert_geq(iptfill_filled() - filled, 4 * code, "the block cache was filled, %" PRIu64
		      " bytes", iptfill_filled() - filled);
	pt_blk_free_decoder(bd);
	image_store_free(s);
	image_iscache_free(ic);
	unlink(path);
}
