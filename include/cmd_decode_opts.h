/* SPDX-License-Identifier: MIT */
/*
 * The options of decode and report (cmd_decode_opts.c): those that name a
 * trace and its memory image (a bundle DIR, or ptxed's options by hand) and
 * their parser. A command that decodes gives its own option table (its
 * options, then DECODE_INPUT_OPTIONS), a handler for its own options, and
 * what it sets in the configuration.
 */
#ifndef PTC_CMD_DECODE_OPTS_H
#define PTC_CMD_DECODE_OPTS_H

#include <stdbool.h>

#include "cmd.h"
#include "decode_config.h"

enum {
	O_PT = 256, O_ELF, O_RAW, O_CPU, O_MTC, O_NOM, O_EAX, O_EBX, O_PRIMARY, O_SECONDARY,
	O_SAMPLE_TYPE, O_TIME_ZERO, O_TIME_SHIFT, O_TIME_MULT, O_TSC_OFFSET, O_KERNEL_START,
	O_SYSROOT, O_KCORE, O_VDSO64, O_VDSO32, O_VDSOIA32, O_INSN, O_BRANCHES, O_CALLS,
	O_STATS, O_TIMELINE, O_ATT, O_TIME, O_OFFSET, O_CHUNK, O_SYMFS, O_EV_IP, O_EV_TIME,
	O_EV_TICK, O_EV_IFLAGS, O_RESYNC, O_KEEP_TCAL,
	/* --filter:addrN_cfg, _a, _b: O_FILTER + 3 * N + 0, 1, 2 */
	O_FILTER,
};

/* The options of the input, the configuration and the run, in a command's table. */
#define DECODE_INPUT_OPTIONS \
	CMD_OPT_TEXT("\nThe trace and its memory image:"), \
	CMD_OPT(0, "pt", REQUIRED, "FILE[:FROM[-TO]]", O_PT, "the trace (instead of a bundle " \
		"DIR)"), \
	CMD_OPT(0, "elf", REQUIRED, "FILE[:BASE]", O_ELF, "an ELF's PT_LOAD segments (the " \
		"lowest moved\nto BASE)"), \
	CMD_OPT(0, "raw", REQUIRED, "FILE[:FROM[-TO]]:ADDR", O_RAW, "raw bytes of FILE at ADDR"), \
	CMD_OPT(0, "sysroot", REQUIRED, "DIR", O_SYMFS, "mapped files, debug files and perf " \
		"maps under DIR\nfirst (perf's --symfs; any bundle)"), \
	CMD_OPT_TEXT("\nConfiguration (libipt's):"), \
	CMD_OPT(0, "cpu", REQUIRED, "F/M[/S]|none", O_CPU, "the CPU the trace came from " \
		"(errata)"), \
	CMD_OPT(0, "mtc-freq", REQUIRED, "N", O_MTC, "IA32_RTIT_CTL.MTCFreq"), \
	CMD_OPT(0, "nom-freq", REQUIRED, "N", O_NOM, "the nominal frequency ratio"), \
	CMD_OPT(0, "cpuid-0x15.eax", REQUIRED, "N", O_EAX, "CPUID leaf 0x15's eax"), \
	CMD_OPT(0, "cpuid-0x15.ebx", REQUIRED, "N", O_EBX, "CPUID leaf 0x15's ebx"), \
	CMD_OPT_TEXT("\nSideband (applied in order: settings come before the files they apply " \
		     "to):"), \
	CMD_OPT(0, "pevent:primary", REQUIRED, "FILE[:FROM[-TO]]", O_PRIMARY, "this stream's " \
		".pevent"), \
	CMD_OPT(0, "pevent:secondary", REQUIRED, "FILE[:FROM[-TO]]", O_SECONDARY, "other " \
		"CPUs' .pevent, proc.pevent"), \
	CMD_OPT(0, "pevent:sample-type", REQUIRED, "N", O_SAMPLE_TYPE, "the records' " \
		"sample_type"), \
	CMD_OPT(0, "pevent:time-zero", REQUIRED, "N", O_TIME_ZERO, "perf's time conversion"), \
	CMD_OPT(0, "pevent:time-shift", REQUIRED, "N", O_TIME_SHIFT, "perf's time conversion"), \
	CMD_OPT(0, "pevent:time-mult", REQUIRED, "N", O_TIME_MULT, "perf's time conversion"), \
	CMD_OPT(0, "pevent:tsc-offset", REQUIRED, "N", O_TSC_OFFSET, "apply records N ticks " \
		"early"), \
	CMD_OPT(0, "pevent:kernel-start", REQUIRED, "ADDR", O_KERNEL_START, "where the kernel's " \
		"addresses start"), \
	CMD_OPT(0, "pevent:sysroot", REQUIRED, "DIR", O_SYSROOT, "prepended to the files the " \
		"records map"), \
	CMD_OPT(0, "pevent:kcore", REQUIRED, "FILE[:BASE]", O_KCORE, "the kernel's code"), \
	CMD_OPT(0, "pevent:vdso-x64", REQUIRED, "FILE", O_VDSO64, "the vdso of 64-bit " \
		"processes"), \
	CMD_OPT(0, "pevent:vdso-x32", REQUIRED, "FILE", O_VDSO32, "the vdso of x32 processes"), \
	CMD_OPT(0, "pevent:vdso-ia32", REQUIRED, "FILE", O_VDSOIA32, "the vdso of 32-bit " \
		"processes"), \
	CMD_OPT_TEXT("\nOther:"), \
	CMD_OPT('J', "jobs", REQUIRED, "N", 'J', "N threads (streams and PSB chunks), the same " \
		"output\n(default: the CPUs it may use; 1 if none is free)"), \
	CMD_OPT(0, "chunk-size", REQUIRED, "SIZE", O_CHUNK, "bytes of trace per parallel chunk\n" \
		"(default: sized as it goes)"), \
	CMD_OPT('q', "quiet", NONE, NULL, 'q', "no sideband warnings, no progress")

struct decode_variant {
	const struct cmd_spec *spec;
	/* The command's own option @c: 0 or an exit status; 1: not its own. */
	int (*option)(void *ctx, int c, char *arg);
	/* After parsing: the mode and settings (0, or an exit status). */
	int (*configure)(void *ctx, struct decode_config *cfg);
	void *ctx;
};

/* What the command line asked for. */
struct decode_opts {
	struct decode_config cfg;
	char *sysroot;			/* --sysroot DIR */
	struct dsb_pevent pev;		/* the --pevent:* settings so far */
	bool have_pt;
	bool want_stats;
	const char *timeline;
	int modes;			/* --insn, --branches, --calls given */
	bool conv_given;
	const char *config_opt;		/* the first a bundle's manifest gives instead */
	const struct decode_variant *v;	/* NULL: decode itself */
};

/* The command at work: "decode" or "report". */
extern const char *decode_cmd_name;

/*
 * Parse @argc/@argv into @o (set up by the caller: its configuration initialised, o->v
 * the variant or NULL): 0, -1 after --help, or an exit status.
 */
int decode_opts_parse(struct decode_opts *o, int argc, char **argv);

#endif
