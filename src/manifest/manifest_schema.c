// SPDX-License-Identifier: MIT
/*
 * manifest.json's schema: every key, its type, where it lives, and how it is
 * null. The writer and the reader walk these tables; nothing else spells the
 * format. man/ptcollect-bundle.5 documents it.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "manifest_schema.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define SCHEMA(name, f, type, addfn) \
	const struct mschema name = { f, N(f), sizeof(type), addfn }

/* Field helpers: X(key, member) of the structure T being described. */
#define F(k, t, m, fl)		.key = k, .type = t, .off = offsetof(T, m), .flags = fl
#define STR(k, m, fl)		{ F(k, MT_STR, m, fl) }
#define RELPATH(k, m, fl)	{ F(k, MT_RELPATH, m, fl) }
#define INT(k, m, l, h, fl)	{ F(k, MT_INT, m, fl), .lo = l, .hi = h }
#define UINT(k, m, l, h, fl)	{ F(k, MT_UINT, m, fl), .lo = l, .hi = h }
#define U32(k, m, l, h)		{ F(k, MT_U32, m, 0), .lo = l, .hi = h }
#define U64(k, m, fl)		{ F(k, MT_U64, m, fl) }
#define HEX(k, m, fl)		{ F(k, MT_HEX, m, fl) }
#define BOOL(k, m)		{ F(k, MT_BOOL, m, 0) }
#define ARGV(k, m, n, fl)	{ F(k, MT_ARGV, m, fl), .count_off = offsetof(T, n) }
#define OBJECT(k, sch, fl)	{ .key = k, .type = MT_OBJECT, .flags = fl, .sub = &sch }
#define ARRAY(k, m, n, sch, fl)	{ F(k, MT_ARRAY, m, fl), .count_off = offsetof(T, n), .sub = &sch }

const char *const manifest_target_names[] = {
	[TARGET_NONE] = "none",
	[TARGET_COMMAND] = "command",
	[TARGET_PID] = "pid",
	[TARGET_TID] = "tid",
	[TARGET_CPU] = "cpu",
};

const char *target_kind_name(enum target_kind k)
{
	return k <= TARGET_CPU ? manifest_target_names[k] : "none";
}

/* ---- the streams, images and a session's lists ------------------------- */

#define T struct mstream
static const struct mfield lost_fields[] = {
	U64("truncated", lost.truncated, 0),
	U64("lost", lost.lost, 0),
	U64("lost_records", lost.lost_records, 0),
	U64("partial", lost.partial, 0),
	U64("collision", lost.collision, 0),
	U64("sideband_full", lost.sideband_full, 0),
	/* null: the kernel could not count them (before 6.0); absent in older bundles */
	{ F("unreported", MT_U64, lost.unreported, MF_OPTIONAL | MF_IF_BOOL),
	  .cond_off = offsetof(T, lost.counted) },
};
static SCHEMA(lost_schema, lost_fields, T, NULL);

static const struct mfield stream_fields[] = {
	RELPATH("file", file, MF_NULLABLE),
	RELPATH("sideband", sideband, 0),
	INT("cpu", cpu, -1, INT_MAX, 0),
	INT("tid", tid, -1, INT_MAX, 0),
	U64("bytes", bytes, 0),
	U64("sideband_bytes", sideband_bytes, 0),
	OBJECT("lost", lost_schema, 0),
	U64("restarts", restarts, 0),
	U64("itrace_start", itrace_start, 0),
};
static void *add_stream(void *m) { return manifest_add_stream(m); }
SCHEMA(mschema_stream, stream_fields, T, add_stream);
#undef T

#define T struct mimage
static const struct mfield image_fields[] = {
	{ F("path", MT_ABSPATH, path, 0) },
	{ F("build_id", MT_BUILD_ID, build_id, MF_NULLABLE) },
	/* Without a build-id: the device and inode the records name, both or neither. */
	{ F("device", MT_DEVICE, maj, MF_NULLABLE | MF_IF_BOOL), .count_off = offsetof(T, min),
	  .cond_off = offsetof(T, has_inode) },
	{ F("inode", MT_U64, ino, MF_NULLABLE | MF_IF_BOOL), .cond_off = offsetof(T, has_inode) },
};
static void *add_image(void *m) { return manifest_add_image(m); }
SCHEMA(mschema_image, image_fields, T, add_image);
#undef T

#define T struct mperfmap
static const struct mfield perf_map_fields[] = {
	INT("pid", pid, 0, INT_MAX, 0),
	RELPATH("file", file, 0),
	U64("bytes", bytes, 0),
	BOOL("cut", cut),
};
static void *add_perf_map(void *m) { return manifest_add_perf_map(m); }
SCHEMA(mschema_perf_map, perf_map_fields, T, add_perf_map);
#undef T

#define T struct mperfmap_refused
static const struct mfield perf_map_refused_fields[] = {
	INT("pid", pid, 0, INT_MAX, 0),
	STR("why", why, 0),
};
static void *add_perf_map_refused(void *m) { return manifest_add_perf_map_refused(m); }
SCHEMA(mschema_perf_map_refused, perf_map_refused_fields, T, add_perf_map_refused);
#undef T

#define T struct mwindow
static const struct mfield window_fields[] = {
	RELPATH("file", file, 0),
	INT("cpu", cpu, -1, INT_MAX, 0),
	INT("tid", tid, -1, INT_MAX, 0),
	U64("bytes", bytes, 0),
	U64("aux_head", aux_head, 0),
	BOOL("wrapped", wrapped),
};
static void *add_window(void *s) { return manifest_add_window(s); }
SCHEMA(mschema_window, window_fields, T, add_window);
#undef T

#define T struct msnapshot
static const struct mfield snapshot_fields[] = {
	UINT("number", number, 1, INT_MAX, 0),
	RELPATH("dir", dir, 0),
	STR("cause", cause, 0),
	INT("trigger", trigger, 0, INT_MAX, MF_NULL_NEG),
	U64("time_ns", time_ns, 0),
	U64("perf_time", perf_time, MF_NULL_ZERO),
	ARRAY("windows", windows, nr_windows, mschema_window, 0),
};
static void *add_snapshot(void *m) { return manifest_add_snapshot(m); }
SCHEMA(mschema_snapshot, snapshot_fields, T, add_snapshot);
#undef T

#define T struct mtrigger
static const struct mfield trigger_fields[] = {
	STR("spec", spec, 0),
	STR("kind", kind, 0),
	STR("action", action, 0),
	STR("path", path, 0),
	HEX("offset", offset, 0),
	U64("limit", limit, MF_NULL_ZERO),
	U64("fires", fires, 0),
	U64("dropped", dropped, 0),
	U64("throttled", throttled, 0),
	/* false: a floor, the LOST records' sum (before 6.0); absent in older bundles */
	{ F("dropped_counted", MT_BOOL, dropped_counted, MF_OPTIONAL) },
	/* null: not counted (absent in older bundles) */
	{ F("late", MT_U64, late, MF_OPTIONAL | MF_IF_BOOL),
	  .cond_off = offsetof(T, late_counted) },
	STR("guard", guard, MF_OPTIONAL),
	STR("fallback", fallback, MF_OPTIONAL),
	U64("stray_traps", stray_traps, MF_OPTIONAL),
	U64("passed_traps", passed_traps, MF_OPTIONAL),
	STR("stray_trap", stray_trap, MF_OPTIONAL),
	STR("passed_trap", passed_trap, MF_OPTIONAL),
};
static void *add_trigger(void *m) { return manifest_add_trigger(m); }
SCHEMA(mschema_trigger, trigger_fields, T, add_trigger);
#undef T

#define T struct mfire
static const struct mfield fire_fields[] = {
	INT("trigger", trigger, 0, 0, MF_TRIGGER_IDX),
	U64("time_ns", time_ns, 0),
	U64("perf_time", perf_time, MF_NULL_ZERO),
	INT("pid", pid, -1, INT_MAX, 0),
	INT("tid", tid, -1, INT_MAX, 0),
	INT("cpu", cpu, -1, INT_MAX, 0),
	UINT("snapshot", snapshot, 1, INT_MAX, MF_NULL_ZERO),
};
static void *add_fire(void *m) { return manifest_add_fire(m); }
SCHEMA(mschema_fire, fire_fields, T, add_fire);
#undef T

#define T struct mmark
static const struct mfield mark_fields[] = {
	U64("time_ns", time_ns, 0),
	U64("perf_time", perf_time, MF_NULL_ZERO),
	STR("text", text, 0),
};
static void *add_mark(void *m) { return manifest_add_mark(m); }
SCHEMA(mschema_mark, mark_fields, T, add_mark);
#undef T

/* ---- the manifest ------------------------------------------------------ */

#define T struct manifest
static const struct mfield tool_fields[] = {
	{ .key = "name", .type = MT_CONST, .cval = "ptcollect" },
	STR("version", tool_version, MF_NULLABLE),
};
static SCHEMA(tool_schema, tool_fields, T, NULL);

static const struct mfield source_fields[] = {
	STR("tool", source.tool, 0),
	STR("version", source.version, MF_NULLABLE),
	STR("file", source.file, MF_NULLABLE),
	STR("format", source.format, MF_NULLABLE),
	STR("hostname", source.hostname, MF_NULLABLE),
	STR("os_release", source.os_release, MF_NULLABLE),
	STR("arch", source.arch, MF_NULLABLE),
	STR("cpuid", source.cpuid, MF_NULLABLE),
	STR("cpudesc", source.cpudesc, MF_NULLABLE),
	INT("nr_cpus_online", source.nr_cpus_online, 0, 65536, MF_NULL_NEG),
	INT("nr_cpus_avail", source.nr_cpus_avail, 0, 65536, MF_NULL_NEG),
	ARGV("command", source.command, source.command_argc, MF_NULLABLE),
	STR("filter", source.filter, MF_NULLABLE),
	BOOL("snapshot", source.snapshot),
};
static SCHEMA(source_schema, source_fields, T, NULL);

static const struct mfield target_fields[] = {
	{ F("kind", MT_ENUM, target.kind, 0) },
	{ F("pids", MT_PIDS, target.pids, 0), .count_off = offsetof(T, target.nr_pids) },
	ARGV("command", target.command, target.command_argc, MF_NULLABLE),
	{ F("exit_status", MT_INT, target.exit_status, MF_NULLABLE | MF_IF_BOOL), .lo = 0,
	  .hi = 255 + 128, .cond_off = offsetof(T, target.exited) },
};
static SCHEMA(target_schema, target_fields, T, NULL);

static const struct mfield pmu_fields[] = {
	STR("name", pmu_name, MF_NULLABLE),
	INT("type", pmu_type, 0, INT_MAX, 0),
};
static SCHEMA(pmu_schema, pmu_fields, T, NULL);

static const struct mfield attr_fields[] = {
	HEX("config", attr.config, 0),
	HEX("config1", attr.config1, 0),
	HEX("config2", attr.config2, 0),
	BOOL("exclude_user", attr.exclude_user),
	BOOL("exclude_kernel", attr.exclude_kernel),
	BOOL("exclude_hv", attr.exclude_hv),
	HEX("sample_type", attr.sample_type, 0),
};
static SCHEMA(attr_schema, attr_fields, T, NULL);

static const struct mfield cpu_fields[] = {
	STR("vendor", cpu.vendor, 0),
	UINT("family", cpu.family, 0, 0xffff, 0),
	UINT("model", cpu.model, 0, 0xffff, 0),
	UINT("stepping", cpu.stepping, 0, 0xff, 0),
};
static SCHEMA(cpu_schema, cpu_fields, T, NULL);

static const struct mfield time_conv_fields[] = {
	BOOL("cap_user_time_zero", time_conv.cap_user_time_zero),
	U64("time_zero", time_conv.time_zero, 0),
	U32("time_mult", time_conv.time_mult, 0, UINT32_MAX),
	{ F("time_shift", MT_U16, time_conv.time_shift, 0), .lo = 0, .hi = 63 },
};
static SCHEMA(time_conv_schema, time_conv_fields, T, NULL);

static const struct mfield cpuid_0x15_fields[] = {
	U32("eax", cpuid_0x15_eax, 0, UINT32_MAX),
	U32("ebx", cpuid_0x15_ebx, 0, UINT32_MAX),
};
static SCHEMA(cpuid_0x15_schema, cpuid_0x15_fields, T, NULL);

static const struct mfield kernel_fields[] = {
	HEX("start", kernel.start, MF_NULL_ZERO),
	RELPATH("kallsyms", kernel.kallsyms, MF_NULLABLE),
	RELPATH("kcore", kernel.kcore, MF_NULLABLE),
	{ F("kcore_base", MT_HEX, kernel.kcore_base, MF_NULLABLE | MF_IF_PTR),
	  .cond_off = offsetof(T, kernel.kcore) },
};
static SCHEMA(kernel_schema, kernel_fields, T, NULL);

static const struct mfield snapshot_mode_fields[] = {
	U64("size", snapshot_size, 0),
};
static SCHEMA(snapshot_mode_schema, snapshot_mode_fields, T, NULL);

static const struct mfield clock_fields[] = {
	{ F("perf_minus_monotonic_ns", MT_S64, clock.perf_minus_monotonic, 0) },
	U64("error_ns", clock.error_ns, 0),
};
static SCHEMA(clock_schema, clock_fields, T, NULL);

static const struct mfield manifest_fields[] = {
	{ .key = "format", .type = MT_CONST, .cval = MANIFEST_FORMAT },
	{ F("version", MT_CONST_INT, version, 0) },
	OBJECT("tool", tool_schema, 0),
	ARGV("command", command, command_argc, 0),
	/* Absent in bundles older than import; null for what ptcollect recorded. */
	{ .key = "source", .type = MT_OBJECT, .flags = MF_OPTIONAL | MF_IF_PTR,
	  .cond_off = offsetof(T, source.tool), .sub = &source_schema },
	OBJECT("target", target_schema, 0),
	{ F("mode", MT_MODE, per_thread, 0), .count_off = offsetof(T, no_trace) },
	STR("event", event, MF_NULLABLE),
	OBJECT("pmu", pmu_schema, 0),
	OBJECT("attr", attr_schema, 0),
	STR("filter", filter, MF_NULLABLE),
	OBJECT("cpu", cpu_schema, 0),
	OBJECT("time_conv", time_conv_schema, 0),
	INT("nom_freq", nom_freq, 0, 255, MF_NULL_NEG),
	{ .key = "cpuid_0x15", .type = MT_OBJECT, .flags = MF_NULLABLE | MF_IF_BOOL,
	  .cond_off = offsetof(T, has_cpuid_0x15), .sub = &cpuid_0x15_schema },
	UINT("mtc_freq", mtc_freq, 0, 15, 0),
	OBJECT("kernel", kernel_schema, 0),
	RELPATH("proc_sideband", proc_sideband, MF_NULLABLE),
	RELPATH("vdso", vdso, MF_NULLABLE),
	RELPATH("sysroot", sysroot, MF_NULLABLE),
	ARRAY("streams", streams, nr_streams, mschema_stream, 0),
	ARRAY("images", images, nr_images, mschema_image, 0),
	/* Absent in bundles older than the copies of JIT perf maps. */
	ARRAY("perf_maps", perf_maps, nr_perf_maps, mschema_perf_map, MF_OPTIONAL),
	/* The maps not copied, and why: absent in bundles older than the owner checks. */
	ARRAY("perf_maps_refused", perf_maps_refused, nr_perf_maps_refused,
	      mschema_perf_map_refused, MF_OPTIONAL),
	/* A scripted session's: absent in bundles older than sessions. */
	{ .key = "snapshot", .type = MT_OBJECT, .flags = MF_OPTIONAL | MF_IF_BOOL,
	  .cond_off = offsetof(T, snapshot_mode), .sub = &snapshot_mode_schema },
	ARRAY("snapshots", snapshots, nr_snapshots, mschema_snapshot, MF_OPTIONAL),
	ARRAY("triggers", triggers, nr_triggers, mschema_trigger, MF_OPTIONAL),
	ARRAY("fires", fires, nr_fires, mschema_fire, MF_OPTIONAL),
	ARRAY("marks", marks, nr_marks, mschema_mark, MF_OPTIONAL),
	{ .key = "clock", .type = MT_OBJECT, .flags = MF_OPTIONAL | MF_IF_BOOL,
	  .cond_off = offsetof(T, clock.known), .sub = &clock_schema },
	{ F("start_time", MT_TIME, start_time, MF_NULLABLE) },
	{ F("end_time", MT_TIME, end_time, MF_NULLABLE) },
	STR("stop_reason", stop_reason, MF_NULLABLE),
	BOOL("complete", complete),
};
SCHEMA(mschema_manifest, manifest_fields, T, NULL);
#undef T
