/* SPDX-License-Identifier: MIT */
/*
 * What a decode is asked to do and what it reports: the configuration a
 * command line or a bundle fills (streams, their sideband, the memory image,
 * libipt's settings, the output), the counts per stream and the diagnostics.
 * Strings in it are owned by it (decode_config_free()).
 */
#ifndef PTC_DECODE_CONFIG_H
#define PTC_DECODE_CONFIG_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode_sb.h"
#include "dsink.h"

enum decode_mode {
	DECODE_NONE,		/* no instruction stream: --stats or --timeline alone */
	DECODE_INSN,		/* address, bytes, disassembly (capstone) */
	DECODE_BRANCHES,	/* from => to, as perf script --itrace=b -F ip,addr */
	DECODE_CALLS,		/* an indented call/return tree with symbol+offset names */
	DECODE_REPORT,		/* per-function calls, instructions, time (render_report.h) */
};

struct report_config;

/* A file given by hand: --elf FILE[:BASE], --raw FILE[:FROM[-TO]]:ADDR, --pevent:kcore. */
struct decode_file {
	bool raw;
	char *path;
	uint64_t base;		/* ELF: where its lowest segment goes, when has_base */
	bool has_base;
	uint64_t from, size;	/* raw: byte range (size 0: to the end) */
	uint64_t addr;		/* raw: where it is loaded */
};

/* One trace stream and the sideband that goes with it. */
struct decode_stream {
	char *name;		/* for messages: the .pt path, or the bundle's stream */
	char *pt;
	uint64_t from, to;	/* byte range of the .pt (to 0: the end) */
	struct dsb_file *sb;
	size_t nr_sb;
};

struct decode_config {
	struct pt_cpu cpu;	/* vendor pcv_unknown: none (decode by the spec) */
	uint8_t mtc_freq, nom_freq;
	uint32_t cpuid_0x15_eax, cpuid_0x15_ebx;
	struct decode_file *files;	/* --elf/--raw, in the order given */
	size_t nr_files;
	struct decode_file *kcore;	/* --pevent:kcore (ELF), or a bundle's raw kernel text */
	size_t nr_kcore;
	struct decode_stream *streams;
	size_t nr_streams;
	/* perf time <-> TSC for timestamps; have_conv: given (else nominal frequency or ticks) */
	struct dsb_pevent conv;
	bool have_conv;
	/* Where symbols come from beyond the mapped files (memimage.h's symcache_set_paths) */
	char *sysroot;		/* --sysroot DIR: mapped files, debug files, perf maps under it */
	char *perfmap_dir;	/* a bundle's perf-maps/ */

	enum decode_mode mode;
	bool json;		/* JSON lines instead of text */
	bool att;		/* AT&T syntax */
	bool show_time;		/* --insn: the TSC in front of each line (ptxed --time) */
	bool show_offset;	/* --insn: the trace offset in front (ptxed --offset) */
	/* ptxed's --event:* options: what event lines show, which events libipt reports. */
	bool event_ip;		/* their IPs */
	bool event_time;	/* their TSC in front, where they have one */
	bool event_tick;	/* timing updates as "tick" events */
	bool event_iflags;	/* Event Tracing's interrupt-flag changes (libipt >= 2.1) */
	bool keep_tcal_on_ovf;	/* timing calibration kept over an overflow (libipt >= 2.1) */
	bool resync_on_error;	/* resume after an error where libipt can (libipt >= 2.2) */
	struct pt_conf_addr_filter addr_filter;	/* --filter:addrN_*: IA32_RTIT_CTL's */
	unsigned jobs;		/* threads; 0: decode_default_jobs() */
	uint64_t chunk_size;	/* bytes per parallel chunk; 0: picked from the size and jobs */
	uint64_t stall_limit;	/* instructions without reading trace: an error (0: 4M) */
	const struct report_config *report;	/* DECODE_REPORT's settings (not owned) */
	/* Every mode through libipt's instruction decoder, as before the block decoder (tests). */
	bool insn_path;
	/* No fast flow path (fastflow.h): every segment through libipt (tests). */
	bool no_fast;
};

/*
 * The decoder's caches, each a decoder thread's own and bounded whatever the trace (the
 * peak memory does not grow with its length): what decode --stats prints of them.
 */
enum decode_cache_id {
	DECODE_CACHE_BLOCKS,	/* the fast path's blocks (fastflow.h) */
	DECODE_CACHE_NAMES,	/* the names of call and return addresses (--calls) */
	DECODE_CACHE_SHAPES,	/* the block path's instructions (size, bytes, class) */
	DECODE_CACHE_TEXT,	/* --insn's instruction text (disasm.h) */
	DECODE_CACHE_LINES,	/* --insn's lines of the fast path's blocks (insnblk.h) */
	DECODE_CACHES
};

struct decode_stats {
	uint64_t insns;		/* instructions decoded */
	uint64_t branches;	/* taken branches: jumps, calls, returns, far transfers */
	uint64_t cond;		/* conditional branches (taken or not) */
	uint64_t calls, returns;
	uint64_t far;		/* syscall, sysret, interrupts as instructions, far jumps */
	uint64_t events;	/* enabled, disabled, overflow, mode, ... (not status updates) */
	uint64_t enables, disables, overflows;
	uint64_t errors;	/* decode errors; each ends in a resync at the next PSB */
	uint64_t gaps;		/* errors, overflows and losses: where trace is missing */
	uint64_t lost;		/* sideband-reported losses: TRUNCATED AUX, LOST */
	uint64_t bytes;		/* trace bytes */
	uint64_t fast;		/* PSB segments the fast flow path decoded (fastflow.h) */
	/* Each cache's use (enum decode_cache_id): entries filled, the most in any chunk. */
	uint64_t cache_used[DECODE_CACHES];
};

struct decode_cache {
	const char *key;	/* its JSON key: "blocks", "names", "shapes", "insn_text" */
	const char *label;	/* its name in the text */
	uint64_t entries;	/* it holds at most */
	uint64_t bytes;		/* its memory at most */
};

/* The bound of cache @id. */
void decode_cache_bound(enum decode_cache_id id, struct decode_cache *c);

enum decode_diag_kind {
	DECODE_DIAG_ERROR,	/* a decode error (the stream resyncs) */
	DECODE_DIAG_SB_ERROR,	/* sideband error: decoding goes on */
	DECODE_DIAG_WARNING,	/* sideband warning, loss */
	DECODE_DIAG_MORE,	/* more diagnostics were dropped: count in offset */
	DECODE_DIAG_NOTE,	/* about the run, not a place in a stream: symbols' notes */
};

struct decode_diag {
	enum decode_diag_kind kind;
	const char *where;	/* the stream's name, or the sideband file's path */
	uint64_t offset;
	uint64_t ip;
	bool has_ip;
	char msg[640];
};

/*
 * One chunk of a decode run: what it is to decode and what came out of it. decode_run
 * (decode.h) fills the first half, decode_chunk() (decode_chunk.h) the second; the files
 * of a chunk's decoding (src/decode/dec.h) need this struct and not decode_chunk.h.
 */
struct error;
struct symcache;
struct fastflow_table;
struct insnblk_shared;

#define CHUNK_DIAG_MAX 256

struct decode_chunk {
	/* What to decode. */
	const struct decode_config *cfg;
	size_t stream;
	const uint8_t *pt;		/* the stream's bytes */
	bool mapped;			/* pt maps a file privately: pages may be dropped */
	int fd;				/* with mapped: that file, for its holes, or -1 */
	/*
	 * With fd: the file holds data (no hole) from data_lo up to data_hi, file offsets, as
	 * the run found it once for all its chunks (data_hi 0: not known, asked as needed).
	 */
	uint64_t data_lo, data_hi;
	uint64_t begin, end;		/* this chunk's range of them (begin: a PSB, or 0) */
	uint64_t len;			/* the stream's bytes in all (0: not known; end) */
	bool first, last;		/* of its stream */
	bool have_next_ip;		/* the next chunk starts at next_ip (its PSB+'s FUP) */
	uint64_t next_ip;
	/* Sideband problems this chunk reports: records after tsc_lo, up to tsc_hi. */
	uint64_t tsc_lo, tsc_hi;
	struct symcache *syms;
	struct fastflow_table *blocks;	/* the fast path's blocks, shared (NULL: its own) */
	struct insnblk_shared *lines;	/* --insn: their lines, shared (NULL: its own) */
	struct pt_image_section_cache *iscache;	/* libipt's sections, shared (NULL: its own) */
	uint64_t *progress;		/* bytes decoded, all chunks (atomic) */

	/* What came out. */
	struct dsink out;		/* the instruction stream */
	struct dsink tl;		/* timeline records */
	struct decode_stats stats;
	struct decode_diag *diags;
	size_t nr_diags;
	uint64_t more_diags;		/* dropped beyond CHUNK_DIAG_MAX */
	int ret;			/* a failure that stopped it: negative errno, with error */
	struct error *error;		/* what it was (allocated; NULL: no memory to say) */
};

void decode_config_init(struct decode_config *c);
void decode_config_free(struct decode_config *c);
/* The stream's sideband list grows by one file (settings copied, strings duplicated). */
int decode_stream_add_sb(struct decode_stream *s, const char *path, uint64_t from, uint64_t to,
			 bool primary, const struct dsb_pevent *pev);
int decode_pevent_copy(struct dsb_pevent *dst, const struct dsb_pevent *src);
/*
 * --sysroot @dir (perf's --symfs): every sideband file of @c reads the files
 * its records map under @dir first, then where it did before (a bundle's
 * sysroot, the recorded path); debug files and perf maps are looked for
 * under it too. Call after the streams are known. 0 or -ENOMEM.
 */
int decode_config_set_sysroot(struct decode_config *c, const char *dir);
void decode_pevent_free(struct dsb_pevent *p);

#endif
