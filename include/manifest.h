/* SPDX-License-Identifier: MIT */
/*
 * manifest.json, the bundle's description: one struct, written and read by
 * this module alone (jansson underneath). The schema exists once, as the
 * field tables of manifest_schema.c that the writer and the reader walk.
 * man/ptcollect-bundle.5 documents it. The type rule, everywhere:
 *	- a 64-bit count or time (bytes, records, TSC, time_zero) is a decimal
 *	  string, since JSON readers lose integers past 2^53;
 *	- addresses, configs and sample_type are "0x..." hex strings;
 *	- values that fit in 32 bits (cpu, tid, pid, family, ...) are numbers;
 *	- paths are relative to the bundle directory.
 */
#ifndef PTC_MANIFEST_H
#define PTC_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <jansson.h>

#include "error.h"

#define MANIFEST_FILE		"manifest.json"
#define MANIFEST_FORMAT		"ptcollect-bundle"
#define MANIFEST_VERSION	2
/*
 * What a reader accepts, so that reading takes bounded memory (jansson keeps
 * every value as a node): the largest manifest ptcollect writes (MANIFEST_MAX_FIRES
 * fires at their widest, ~22 MiB) fits. man/ptcollect-bundle.5 says so.
 */
#define MANIFEST_MAX_BYTES	(32u << 20)
#define MANIFEST_MAX_OBJECTS	250000	/* objects and arrays */
#define MANIFEST_MAX_VALUES	2500000	/* every value: objects, arrays, strings, numbers, ... */

enum target_kind {
	TARGET_NONE,
	TARGET_COMMAND,		/* -- COMMAND: fork, enable on exec */
	TARGET_PID,		/* -p: every thread of these processes */
	TARGET_TID,		/* -t: these threads only */
	TARGET_CPU,		/* -a / -C: whole CPUs */
};

const char *target_kind_name(enum target_kind k);

/* The losses a stream's records reported. */
struct mlosses {
	uint64_t truncated;	/* PERF_RECORD_AUX with TRUNCATED: the AUX buffer was full */
	uint64_t lost;		/* PERF_RECORD_LOST records */
	uint64_t lost_records;	/* sideband records they say were dropped */
	uint64_t partial;	/* AUX records flagged PARTIAL */
	uint64_t collision;	/* AUX records flagged COLLISION */
	uint64_t sideband_full;	/* times the data ring had no room for an AUX record */
	/*
	 * Sideband records the kernel dropped (its count, PERF_FORMAT_LOST) that
	 * no LOST record reported: one is written only at the next record that
	 * fits. Valid when counted; not counted (null): a kernel before 6.0, or a
	 * bundle older than the field, where lost_records is all that is known.
	 */
	uint64_t unreported;
	bool counted;
};

struct mstream {
	char *file;		/* trace file, e.g. "cpu0.pt"; NULL in snapshot mode */
	char *sideband;		/* its sideband, e.g. "cpu0.pevent" */
	int cpu;		/* -1 in per-thread mode */
	int tid;		/* -1 in per-CPU mode */
	uint64_t bytes;		/* trace bytes the file holds */
	uint64_t sideband_bytes;
	struct mlosses lost;
	uint64_t restarts;	/* restarts of the hardware after a stop */
	uint64_t itrace_start;	/* ITRACE_START records */
};

/* One stream's window in a snapshot. */
struct mwindow {
	char *file;		/* "snap-N/cpuM.pt" */
	int cpu;		/* -1 in per-thread mode */
	int tid;		/* -1 in per-CPU mode */
	uint64_t bytes;
	uint64_t aux_head;	/* the kernel's aux_head at the stop (an offset in the buffer) */
	bool wrapped;		/* the window does not continue the previous one */
};

/* A snapshot: every stream's window, frozen together. */
struct msnapshot {
	unsigned int number;	/* 1, 2, ...: the directory snap-NUMBER */
	char *dir;
	char *cause;		/* "signal", "control", "trigger" or "final" */
	int trigger;		/* the trigger that fired it, -1 */
	uint64_t time_ns;	/* CLOCK_MONOTONIC when the streams were stopped */
	uint64_t perf_time;	/* the same on perf's sample clock; 0: not known */
	struct mwindow *windows;
	int nr_windows;
};

/* A --trigger as armed, and what it did. */
struct mtrigger {
	char *spec;		/* as written */
	char *kind;		/* "uprobe" or "breakpoint" */
	char *action;		/* "snapshot", "start", "stop" or "mark" */
	char *path;		/* the file, resolved */
	uint64_t offset;	/* the probe's file offset */
	uint64_t limit;		/* fires at most (--trigger-count), 0: none */
	uint64_t fires, dropped, throttled;
	bool dropped_counted;	/* dropped counted by the kernel; false: the LOST records' */
	bool late_counted;	/* false: @late not known (a bundle older than it) */
	/* Of the fires, those that came after younger ones: out of order, maybe the wrong kept. */
	uint64_t late;
	/*
	 * Breakpoints: "tracee" (the process is ptcollect's tracee, stray debug
	 * traps kept from it), or "uprobe" (armed as a uprobe: @fallback says
	 * why); NULL for a uprobe. stray_traps: those kept, for every guarded one;
	 * passed_traps: the SIGTRAPs passed on to it (its own); stray_trap and
	 * passed_trap: the last of each as the guard saw it (si_code, IP, TF,
	 * DR6, ...; shorter than MANIFEST_TRAP_TEXT), NULL when none.
	 */
	char *guard, *fallback;
	uint64_t stray_traps, passed_traps;
	char *stray_trap, *passed_trap;
};

#define MANIFEST_TRAP_TEXT 256

/* One fire of a trigger. */
struct mfire {
	int trigger;		/* index into triggers */
	uint64_t time_ns;	/* CLOCK_MONOTONIC, taken in the kernel at the probe */
	uint64_t perf_time;	/* perf's sample clock; 0: not known */
	int pid, tid, cpu;
	unsigned int snapshot;	/* the snapshot it took, 0: none */
};

/* A mark: a note with a time, from the control channel. */
struct mmark {
	uint64_t time_ns, perf_time;
	char *text;
};

#define MANIFEST_MAX_FIRES 100000	/* fires listed; the triggers count all of them */

struct mimage {
	char *path;		/* absolute, as the sideband maps it */
	char *build_id;		/* lowercase hex from the records, or NULL when none carries one */
	bool has_inode;		/* without a build-id: the device and inode the records name */
	unsigned int maj, min;
	uint64_t ino;
};

/* A JIT's perf map (/tmp/perf-PID.map) of a traced process, copied at the end of record. */
#define MANIFEST_MAX_PERF_MAPS 64	/* copied at most: the manifest's room counts them */

struct mperfmap {
	int pid;
	char *file;		/* in the bundle: perf-maps/perf-PID.map */
	uint64_t bytes;
	bool cut;		/* longer than the copy's bound: its first bytes, whole lines */
};

/* A perf map record did not copy, and why (its owner, its mode, a link...). */
#define MANIFEST_MAX_PERF_MAP_WHY 160	/* the reason's bytes at most: the manifest's room counts them */

struct mperfmap_refused {
	int pid;
	char *why;		/* "owned by uid 1234, not by the process's (uid 1000) nor root" */
};

/* Where a bundle that ptcollect did not record came from (import): all NULL or -1 when unknown. */
struct msource {
	char *tool;		/* "perf"; NULL: ptcollect recorded the bundle itself */
	char *version;		/* the recording tool's version */
	char *file;		/* the file imported, as it was given ("-": standard input) */
	char *format;		/* "file" or "pipe" (perf.data's two layouts) */
	char *hostname, *os_release, *arch;
	char *cpuid;		/* the tool's CPU string, "GenuineIntel,6,94,3" */
	char *cpudesc;		/* "Intel(R) Core(TM) i5-6500 CPU @ 3.20GHz" */
	int nr_cpus_online, nr_cpus_avail;
	char **command;		/* the recording's command line */
	int command_argc;
	char *filter;		/* the recording tool's address filter string */
	bool snapshot;		/* the AUX buffers were snapshots (perf record -S) */
};

struct manifest {
	int version;
	char *tool_version;
	char **command;		/* ptcollect's own command line */
	int command_argc;
	struct msource source;
	struct {
		enum target_kind kind;
		pid_t *pids;	/* -p or -t ids */
		int nr_pids;
		char **command;	/* the workload, or NULL */
		int command_argc;
		bool exited;	/* exit_status is known */
		int exit_status;	/* exit code, or 128+signal */
	} target;
	bool per_thread;	/* "mode": "per-thread", else "per-cpu" */
	bool no_trace;		/* "mode": "none": --no-trace, triggers and marks only */
	char *event;		/* -e as given */
	char *pmu_name;
	int pmu_type;
	struct {
		uint64_t config, config1, config2;
		bool exclude_user, exclude_kernel, exclude_hv;
		uint64_t sample_type;
	} attr;
	char *filter;		/* the kernel's filter string, or NULL */
	struct {
		char *vendor;
		unsigned int family, model, stepping;
	} cpu;
	struct {
		bool cap_user_time_zero;	/* the other fields mean something */
		uint64_t time_zero;
		uint32_t time_mult;
		uint16_t time_shift;
	} time_conv;
	int nom_freq;		/* max_nonturbo_ratio, -1 when unknown */
	bool has_cpuid_0x15;
	uint32_t cpuid_0x15_eax, cpuid_0x15_ebx;
	unsigned int mtc_freq;
	struct {
		uint64_t start;		/* where the kernel starts; 0: not traced */
		char *kallsyms;		/* copy of /proc/kallsyms, or NULL */
		char *kcore;		/* the kernel's text, raw, or NULL */
		uint64_t kcore_base;	/* its address */
	} kernel;
	char *proc_sideband;	/* COMM/MMAP2 synthesized from /proc, or NULL */
	char *vdso;		/* the vdso saved as a file, or NULL */
	char *sysroot;		/* the mapped files at their paths (archive), or NULL */
	struct mstream *streams;
	int nr_streams;
	struct mimage *images;
	int nr_images;
	struct mperfmap *perf_maps;
	int nr_perf_maps;
	struct mperfmap_refused *perf_maps_refused;	/* MANIFEST_MAX_PERF_MAPS at most */
	int nr_perf_maps_refused;
	bool snapshot_mode;	/* -S: the streams' bytes are in snapshots[] */
	uint64_t snapshot_size;	/* the window per stream at most */
	struct {
		bool known;
		int64_t perf_minus_monotonic;	/* ns: perf's sample clock - CLOCK_MONOTONIC */
		uint64_t error_ns;		/* how far off that may be */
	} clock;
	struct msnapshot *snapshots;
	int nr_snapshots;
	struct mtrigger *triggers;
	int nr_triggers;
	struct mfire *fires;
	int nr_fires;
	struct mmark *marks;
	int nr_marks;
	struct timespec start_time, end_time;	/* 0: not known */
	char *stop_reason;
	bool complete;		/* the recording closed cleanly */
};

void manifest_init(struct manifest *m);
void manifest_free(struct manifest *m);

/* Replace *@dst with a copy of @src (NULL allowed). 0 or -ENOMEM. */
int manifest_set(char **dst, const char *src);
/* A copy of @argc strings. 0 or -ENOMEM. */
int manifest_set_argv(char ***dst, int *dst_argc, char *const *argv, int argc);
/* Append a stream / an image; returns it zeroed (names NULL), or NULL on ENOMEM. */
struct mstream *manifest_add_stream(struct manifest *m);
struct mimage *manifest_add_image(struct manifest *m);
struct mperfmap *manifest_add_perf_map(struct manifest *m);
struct mperfmap_refused *manifest_add_perf_map_refused(struct manifest *m);
struct msnapshot *manifest_add_snapshot(struct manifest *m);
struct mwindow *manifest_add_window(struct msnapshot *s);
struct mtrigger *manifest_add_trigger(struct manifest *m);
/* NULL also when MANIFEST_MAX_FIRES are listed already. */
struct mfire *manifest_add_fire(struct manifest *m);
struct mmark *manifest_add_mark(struct manifest *m);
/* @ns on perf's sample clock, or 0 when the offset is not known. */
uint64_t manifest_perf_time(const struct manifest *m, uint64_t monotonic_ns);

/* The manifest as JSON, in the type rule above. NULL on ENOMEM. */
json_t *manifest_to_json(const struct manifest *m);
json_t *manifest_stream_to_json(const struct mstream *s);
json_t *manifest_snapshot_to_json(const struct msnapshot *s);
json_t *manifest_trigger_to_json(const struct mtrigger *t);
json_t *manifest_fire_to_json(const struct mfire *f);
json_t *manifest_mark_to_json(const struct mmark *k);
json_t *manifest_perf_map_to_json(const struct mperfmap *p);
json_t *manifest_perf_map_refused_to_json(const struct mperfmap_refused *p);
/*
 * The most bytes manifest.json takes once @m has grown by what a recording
 * adds: every stream's and trigger's counts at their widest, @fires more
 * fires (MANIFEST_MAX_FIRES at most are listed), @snapshots more snapshots
 * of a window per stream, MANIFEST_MAX_PERF_MAPS copied perf maps, and
 * the closing fields. Not the mapped files'
 * list, which the end collects (a writer short of room drops it first), nor
 * marks. 0 on ENOMEM.
 */
size_t manifest_size_bound(const struct manifest *m, uint64_t fires, uint64_t snapshots);
/* A u64 in the type rule: a decimal string (it can pass 2^53). */
json_t *manifest_u64_json(uint64_t v);

/*
 * Write @m to @dirfd/manifest.json atomically (a temporary file of a new,
 * random name, created O_EXCL, fsync, rename): a reader sees the old or the
 * new manifest. The file is 0600. The writer holds manifest_lock().
 */
int manifest_write(const struct manifest *m, int dirfd, struct error *e);

/*
 * One writer at a time: lock the bundle @dirfd (named @dir), exclusively,
 * without waiting, until the returned descriptor is closed. A bundle that
 * another record, archive or import holds is refused (-EBUSY, runtime
 * error saying so). The descriptor, or a negative code.
 */
int manifest_lock(int dirfd, const char *dir, struct error *e);

/*
 * Read @dirfd/manifest.json (@dir names it in messages). Every field is
 * checked: type, range, file names that stay inside the bundle. Returns 0,
 * or a usage error (not a manifest, another version, a bad field: what and
 * where) or a runtime error.
 */
int manifest_read(int dirfd, const char *dir, struct manifest *m, struct error *e);
/* The same from text (the fuzz target's entry). */
int manifest_parse(const char *text, size_t len, struct manifest *m, struct error *e);
/*
 * Does @text stay within MANIFEST_MAX_BYTES, _OBJECTS and _VALUES? 0, or a
 * usage error naming the bound passed (manifest_parse checks it first).
 */
int manifest_check_bounds(const char *text, size_t len, struct error *e);

#endif
