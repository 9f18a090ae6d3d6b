// SPDX-License-Identifier: MIT
/* How large a manifest can grow: the room a recording keeps for its last one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

#define FINAL_SLACK	4096	/* stop_reason, end_time, exit_status, sysroot, ... */
#define U64_WIDTH	20	/* digits of UINT64_MAX */
#define STREAM_U64S	10	/* bytes, sideband_bytes, 6 losses, restarts, itrace_start */
#define TRIGGER_U64S	6	/* fires, dropped, throttled, late, stray_traps, passed_traps */
#define TRIGGER_TEXTS	2	/* stray_trap, passed_trap: set at the end */
#define DEPTH_INDENT	4	/* an entry of a top-level array sits 4 spaces deeper */

/* @j dumped as a top-level array's element: its lines 4 spaces in, then ",\n". */
static size_t entry_size(json_t *j)
{
	char *t = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
	size_t n = 0, lines = 1;

	if (!t) {
		json_decref(j);
		return 0;
	}
	for (const char *p = t; *p; p++)
		lines += *p == '\n';
	n = strlen(t) + lines * DEPTH_INDENT + 2;
	free(t);
	json_decref(j);
	return n;
}

static size_t widest_fire(void)
{
	struct mfire f = { .trigger = INT32_MAX, .time_ns = UINT64_MAX, .perf_time = UINT64_MAX,
			   .pid = INT32_MIN, .tid = INT32_MIN, .cpu = INT32_MIN,
			   .snapshot = UINT32_MAX };

	return entry_size(manifest_fire_to_json(&f));
}

/* A snapshot with @windows windows, every value at its widest. */
static size_t widest_snapshot(int windows)
{
	char file[] = "snap-4294967295/cpu-2147483648.pt";
	struct mwindow w = { .file = file, .cpu = INT32_MIN, .tid = INT32_MIN,
			     .bytes = UINT64_MAX, .aux_head = UINT64_MAX, .wrapped = true };
	struct msnapshot s = { .number = UINT32_MAX, .dir = file, .cause = "control",
			       .trigger = INT32_MAX, .time_ns = UINT64_MAX,
			       .perf_time = UINT64_MAX, .windows = &w, .nr_windows = 1 };
	size_t one = entry_size(manifest_snapshot_to_json(&s)), none;

	s.nr_windows = 0;
	none = entry_size(manifest_snapshot_to_json(&s));
	if (!one || !none)
		return 0;
	/* Each window adds what the first added (it is the widest too), 4 spaces deeper. */
	return none + (size_t)windows * (one - none + 4 * 8);
}

/* A copied perf map's entry, every value at its widest. */
static size_t widest_perf_map(void)
{
	char file[] = "perf-maps/perf-2147483647.map";
	struct mperfmap p = { .pid = INT32_MAX, .file = file, .bytes = UINT64_MAX, .cut = false };

	return entry_size(manifest_perf_map_to_json(&p));
}

/* A refused perf map's entry: the widest pid and a reason of the most bytes kept. */
static size_t widest_perf_map_refused(void)
{
	char why[MANIFEST_MAX_PERF_MAP_WHY + 1];
	struct mperfmap_refused p = { .pid = INT32_MAX, .why = why };

	memset(why, 'x', MANIFEST_MAX_PERF_MAP_WHY);
	why[MANIFEST_MAX_PERF_MAP_WHY] = '\0';
	return entry_size(manifest_perf_map_refused_to_json(&p));
}

size_t manifest_size_bound(const struct manifest *m, uint64_t fires, uint64_t snapshots)
{
	json_t *j = manifest_to_json(m);
	char *t = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
	size_t n, fire = widest_fire(), snap = widest_snapshot(m->nr_streams);
	size_t pmap = widest_perf_map(), refused = widest_perf_map_refused();

	json_decref(j);
	if (!t || !fire || !snap || !pmap || !refused) {
		free(t);
		return 0;
	}
	n = strlen(t) + 1 + FINAL_SLACK;
	free(t);
	n += (size_t)m->nr_streams * STREAM_U64S * U64_WIDTH;
	n += (size_t)m->nr_triggers * TRIGGER_U64S * U64_WIDTH;
	n += (size_t)m->nr_triggers * TRIGGER_TEXTS * MANIFEST_TRAP_TEXT;
	if (fires > MANIFEST_MAX_FIRES)
		fires = MANIFEST_MAX_FIRES;
	n += (size_t)fires * fire;
	n += (size_t)snapshots * snap;
	n += (size_t)MANIFEST_MAX_PERF_MAPS * (pmap + refused);
	return n;
}
