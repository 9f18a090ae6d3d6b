// SPDX-License-Identifier: MIT
/*
 * decode's options with any values (ptxed's --cpu, the timing and --pevent:* numbers,
 * --filter:*, --jobs, --chunk-size, the ranges after --pt and --raw): parsing never crashes
 * or leaks, and a refusal is a usage error (exit 2) that said something on stderr. Each
 * input line is one option: its first byte picks it, the rest is its value; a file's value
 * is a real file's name with the rest after it (":FROM-TO", ":BASE").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd_decode_opts.h"
#include "msg.h"

static const char *const opts[] = {
	"--cpu", "--mtc-freq", "--nom-freq", "--cpuid-0x15.eax", "--cpuid-0x15.ebx",
	"--pevent:sample-type", "--pevent:time-zero", "--pevent:time-shift", "--pevent:time-mult",
	"--pevent:tsc-offset", "--pevent:kernel-start", "--jobs", "--chunk-size",
	"--filter:addr0_cfg", "--filter:addr0_a", "--filter:addr0_b", "--filter:addr3_cfg",
	"--pt", "--raw", "--elf",
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))
#define FIRST_FILE 17		/* --pt, --raw, --elf */
#define MAX_ARGS 16

static char file[64];
static int errfd = -1;

static void cleanup(void)
{
	unlink(file);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char bytes[64];
	FILE *f;

	(void)argc;
	(void)argv;
	snprintf(file, sizeof(file), "/tmp/ptc-fuzz-dopts-%d.pt", (int)getpid());
	f = fopen(file, "w");
	if (!f || fwrite(bytes, 1, sizeof(bytes), f) != sizeof(bytes) || fclose(f))
		abort();
	atexit(cleanup);
	errfd = memfd_create("fuzz-dopts-stderr", 0);
	if (errfd < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	char *argv[2 * MAX_ARGS + 4], *own[MAX_ARGS];
	int argc = 0, nown = 0, ret;
	struct decode_opts o;
	off_t said;

	argv[argc++] = "decode";
	while (p < end && nown < MAX_ARGS) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		unsigned k = len ? (unsigned char)p[0] % NOPTS : 0;
		char *v = NULL;

		if (len && asprintf(&v, "%s%.*s", k >= FIRST_FILE ? file : "", (int)(len - 1),
				    p + 1) < 0)
			abort();
		if (v && !memchr(p + 1, '\0', len - 1)) {
			argv[argc++] = (char *)opts[k];
			argv[argc++] = v;
		}
		if (v)
			own[nown++] = v;
		p = nl ? nl + 1 : end;
	}
	argv[argc++] = "--pt";
	argv[argc++] = file;
	argv[argc] = NULL;
	memset(&o, 0, sizeof(o));
	decode_config_init(&o.cfg);
	o.pev.time_mult = 1;
	/* stderr into memory, a refusal must have said why (each time: libFuzzer's
	 * -close_fd_mask points fd 2 elsewhere after LLVMFuzzerInitialize()) */
	fflush(stderr);
	if (dup2(errfd, 2) < 0)
		abort();
	said = lseek(errfd, 0, SEEK_END);
	ret = decode_opts_parse(&o, argc, argv);
	fflush(stderr);
	if (ret && (ret != EXIT_USAGE || lseek(errfd, 0, SEEK_END) == said))
		abort();
	/* (the messages of one input at a time) */
	if (ftruncate(errfd, 0) || lseek(errfd, 0, SEEK_SET))
		abort();
	decode_pevent_free(&o.pev);
	decode_config_free(&o.cfg);
	free(o.sysroot);
	for (int i = 0; i < nown; i++)
		free(own[i]);
	return 0;
}
