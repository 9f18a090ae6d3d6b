// SPDX-License-Identifier: MIT
/*
 * The decoder on mutated streams: packets, the instruction flow over a small
 * image, sideband records and every output (instructions, branches, calls,
 * JSON, the timeline and its merge filters), a stream's last chunk or an
 * earlier one that trims its end. No crash, no hang, no leak.
 *
 * Input: flags (1 byte), the sideband's length (2 bytes), the sideband, the trace.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode_chunk.h"
#include "decode_config.h"
#include "render.h"
#include "render_report.h"
#include "memimage.h"

/* A page of code at 0x401000: direct and indirect branches, returns, far transfers. */
static const uint8_t code[] = {
	0xe8, 0x10, 0x00, 0x00, 0x00,		/* call +0x10 */
	0x48, 0x85, 0xc0,			/* test rax, rax */
	0x74, 0x04,				/* je +4 */
	0xff, 0xe0,				/* jmp rax */
	0xff, 0xd0,				/* call rax */
	0x0f, 0x05,				/* syscall */
	0xeb, 0xee,				/* jmp back */
	0x90, 0x90, 0x90,
	0x83, 0xc1, 0x01,			/* add ecx, 1 */
	0x75, 0xfb,				/* jne -5 */
	0xc3,					/* ret */
	0xe2, 0xf0,				/* loop */
	0xcb,					/* retf */
	0xcf,					/* iret */
	0x0f, 0x07,				/* sysret */
	0xcd, 0x80,				/* int 0x80 */
	0xea, 0x00, 0x10, 0x40, 0x00, 0x10, 0x00,	/* jmp far (32-bit) */
	0xf3, 0x0f, 0xae, 0xe0,			/* ptwrite eax */
	0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00,	/* nop */
	0x0f, 0x01, 0xd6,			/* xtest */
	0xc2, 0x08, 0x00,			/* ret 8 */
	0xeb, 0xfe,				/* jmp . */
};

static char image_path[64];

static void *run_chunk(void *c)
{
	decode_chunk(c);
	return NULL;
}

/*
 * On a stack as ptcollect's decoder threads have (libipt 2.2 recurses once per lap of a
 * loop that needs no trace), four times as large for ASan's frames: the main thread's
 * 8 MiB overflowed in libipt on a jump to itself, which ptcollect itself decodes.
 */
static void decode_on_its_stack(struct decode_chunk *c)
{
	pthread_attr_t attr;
	pthread_t t;

	if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 4 * (size_t)DECODE_CHUNK_STACK) ||
	    pthread_create(&t, &attr, run_chunk, c) || pthread_join(t, NULL))
		abort();
	pthread_attr_destroy(&attr);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd;

	(void)argc;
	(void)argv;
	snprintf(image_path, sizeof(image_path), "/tmp/fuzz_decode.%d.bin", (int)getpid());
	fd = open(image_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, code, sizeof(code)) != (ssize_t)sizeof(code))
		abort();
	close(fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum decode_mode modes[] = { DECODE_INSN, DECODE_BRANCHES, DECODE_CALLS,
						  DECODE_NONE };
	struct decode_file file = { .raw = true, .path = image_path, .addr = 0x401000 };
	struct dsb_file sb = { .path = "fuzz.pevent", .primary = true };
	struct decode_stream st = { .name = "fuzz", .pt = "fuzz.pt", .sb = &sb, .nr_sb = 1 };
	struct decode_config cfg;
	const struct renderer *ord;
	struct decode_chunk c;
	struct dout out, tl;
	uint8_t flags;
	size_t sblen;
	int devnull;

	if (size < 3)
		return 0;
	flags = data[0];
	sblen = (size_t)(data[1] | data[2] << 8);
	data += 3;
	size -= 3;
	if (sblen > size)
		sblen = size;
	sb.buf = (uint8_t *)data;
	sb.len = sblen;
	sb.pev.sample_type = 0x10086;
	sb.pev.time_mult = 1;
	sb.pev.kernel_start = 0xffff800000000000ull;

	decode_config_init(&cfg);
	cfg.mode = modes[flags & 3];
	cfg.json = flags & 4;
	cfg.att = flags & 8;
	/* --stats with the AT&T bit (which it does not use): the report instead, table or folded. */
	if ((flags & 3) == 3 && (flags & 8)) {
		static struct report_config rc = { .outliers = 3, .per_thread = true };

		rc.view = flags & 4 ? REPORT_FOLDED : REPORT_FUNCTIONS;
		rc.json = flags & 4 ? false : true;
		cfg.mode = DECODE_REPORT;
		cfg.report = &rc;
	}
	cfg.files = &file;
	cfg.nr_files = 1;
	cfg.streams = &st;
	cfg.nr_streams = 1;
	cfg.stall_limit = 1 << 14;
	if (flags & 0x40) {
		cfg.cpu.vendor = pcv_intel;
		cfg.cpu.family = 6;
		cfg.cpu.model = 0x55;
	}

	devnull = open("/dev/null", O_WRONLY);
	ord = render_find(&cfg, RENDER_OUT);
	if (devnull < 0 || !ord || render_open(&out, devnull, ord, &cfg) ||
	    render_open(&tl, devnull, &render_timeline, &cfg))
		abort();
	memset(&c, 0, sizeof(c));
	c.cfg = &cfg;
	c.pt = data + sblen;
	c.begin = 0;
	c.end = size - sblen;
	c.first = true;
	/* An earlier chunk: it decodes past its end and trims at the next one's IP. */
	c.last = !(flags & 0x10);
	c.have_next_ip = flags & 0x20;
	c.next_ip = 0x401000;
	c.tsc_hi = UINT64_MAX;
	c.syms = symcache_new();
	dsink_init(&c.out, &out);
	dsink_init(&c.tl, flags & 0x80 ? &tl : NULL);
	dsink_promote(&c.out);
	dsink_promote(&c.tl);
	decode_on_its_stack(&c);
	render_close(&out, ord, true);
	render_close(&tl, &render_timeline, true);
	dsink_destroy(&c.out);
	dsink_destroy(&c.tl);
	free(c.diags);
	symcache_free(c.syms);
	close(devnull);
	return 0;
}
