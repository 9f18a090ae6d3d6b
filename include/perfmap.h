/* SPDX-License-Identifier: MIT */
/*
 * JIT symbols from a perf map: the /tmp/perf-PID.map text file that the JVM
 * (perf-map-agent), V8 (--perf-basic-prof), .NET (DOTNET_PerfMapEnabled),
 * LuaJIT and others write, and that perf and magic-trace read. One line per
 * piece of generated code: "START SIZE NAME", START and SIZE in hex (an
 * optional 0x is accepted), NAME the rest of the line.
 *
 * A map is the JIT's word, written while the program ran, so the reader
 * trusts no line: an overlong line, a START or SIZE that is not hex, a SIZE
 * of 0 or over PERFMAP_MAX_SIZE, a range that wraps past 2^64 are skipped and
 * counted. Entries whose ranges overlap (the JIT reused the memory: which
 * one ran when the trace was taken is unknown) are kept but never name an
 * address: a lookup there misses, as an address no entry covers does.
 * Identical lines count once.
 */
#ifndef PTC_PERFMAP_H
#define PTC_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define PERFMAP_MAX_LINE	4096		/* bytes of one line, its newline included */
#define PERFMAP_MAX_SIZE	(1ull << 30)	/* no JIT emits one function this big */
#define PERFMAP_MAX_FILE	(256ull << 20)	/* bytes of a map that are read */

struct perfmap_sym {
	uint64_t start, size;
	char *name;
	bool overlaps;		/* shares addresses with another entry: names none */
};

struct perfmap {
	struct perfmap_sym *syms;	/* by start */
	size_t nr;
	size_t bad_lines;		/* skipped: not "START SIZE NAME" within the bounds */
	size_t first_bad;		/* the line number of the first of them (1-based) */
	char first_why[96];		/* what was wrong with it */
	size_t overlapping;		/* entries that share addresses with another */
	bool truncated;			/* more than PERFMAP_MAX_FILE bytes: the rest unread */
};

/* Parse @len bytes of map text. 0, or -ENOMEM. Bad lines are counted in @m, not errors. */
int perfmap_parse(struct perfmap *m, const char *buf, size_t len);

/*
 * Read and parse the map @path (relative to @dirfd): a regular file, opened
 * without following a link, at most PERFMAP_MAX_FILE bytes. 0, or a negative
 * errno with @e (-ENOENT when there is none).
 */
int perfmap_load_at(struct perfmap *m, int dirfd, const char *path, struct error *e);

/* The entry naming @addr, or NULL (none covers it, or entries overlap there). */
const struct perfmap_sym *perfmap_find(const struct perfmap *m, uint64_t addr);

void perfmap_free(struct perfmap *m);

#endif
