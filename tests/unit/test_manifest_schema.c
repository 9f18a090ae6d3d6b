// SPDX-License-Identifier: MIT
/*
 * The manifest's one schema: a manifest with every field set, each to a
 * value no other field has (mfill), is written and read back field for
 * field; nothing in it is written as null; and a second write gives the
 * same bytes. The sizes of the structures are pinned here, so that a field
 * added to one of them is added to mfill and to this comparison too.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manifest.h"
#include "mfill.h"

/* A field added to a structure changes its size: fill it in mfill, compare it below. */
_Static_assert(sizeof(struct manifest) == 608, "struct manifest changed: see mfill.c");
_Static_assert(sizeof(struct mstream) == 120, "struct mstream changed: see mfill.c");
_Static_assert(sizeof(struct mimage) == 40, "struct mimage changed: see mfill.c");
_Static_assert(sizeof(struct msnapshot) == 64, "struct msnapshot changed: see mfill.c");
_Static_assert(sizeof(struct mwindow) == 40, "struct mwindow changed: see mfill.c");
_Static_assert(sizeof(struct mtrigger) == 136, "struct mtrigger changed: see mfill.c");
_Static_assert(sizeof(struct mfire) == 40, "struct mfire changed: see mfill.c");
_Static_assert(sizeof(struct mmark) == 24, "struct mmark changed: see mfill.c");
_Static_assert(sizeof(struct mperfmap) == 32, "struct mperfmap changed: see mfill.c");
_Static_assert(sizeof(struct mperfmap_refused) == 16, "struct mperfmap_refused changed: see mfill.c");

#define EQ(f) cr_expect_eq(a->f, b->f, #f)
#define STREQ(f) str_eq(a->f, b->f, #f)

static void str_eq(const char *a, const char *b, const char *what)
{
	if (!a || !b)
		cr_expect(a == b, "%s: %s, %s", what, a ? a : "NULL", b ? b : "NULL");
	else
		cr_expect_str_eq(a, b, "%s", what);
}

static void argv_eq(char **a, int na, char **b, int nb, const char *what)
{
	cr_assert_eq(na, nb, "%s", what);
	for (int i = 0; i < na; i++)
		cr_expect_str_eq(a[i], b[i], "%s[%d]", what, i);
}

static void same(const struct manifest *a, const struct manifest *b)
{
	EQ(version);
	STREQ(tool_version);
	argv_eq(a->command, a->command_argc, b->command, b->command_argc, "command");
	STREQ(source.tool); STREQ(source.version); STREQ(source.file); STREQ(source.format);
	STREQ(source.hostname); STREQ(source.os_release); STREQ(source.arch);
	STREQ(source.cpuid); STREQ(source.cpudesc);
	EQ(source.nr_cpus_online); EQ(source.nr_cpus_avail);
	argv_eq(a->source.command, a->source.command_argc, b->source.command,
		b->source.command_argc, "source.command");
	STREQ(source.filter); EQ(source.snapshot);
	EQ(target.kind);
	cr_assert_eq(a->target.nr_pids, b->target.nr_pids);
	for (int i = 0; i < a->target.nr_pids; i++)
		EQ(target.pids[i]);
	argv_eq(a->target.command, a->target.command_argc, b->target.command,
		b->target.command_argc, "target.command");
	EQ(target.exited); EQ(target.exit_status);
	EQ(per_thread); EQ(no_trace);
	STREQ(event); STREQ(pmu_name); EQ(pmu_type);
	EQ(attr.config); EQ(attr.config1); EQ(attr.config2);
	EQ(attr.exclude_user); EQ(attr.exclude_kernel); EQ(attr.exclude_hv);
	EQ(attr.sample_type);
	STREQ(filter);
	STREQ(cpu.vendor); EQ(cpu.family); EQ(cpu.model); EQ(cpu.stepping);
	EQ(time_conv.cap_user_time_zero); EQ(time_conv.time_zero);
	EQ(time_conv.time_mult); EQ(time_conv.time_shift);
	EQ(nom_freq); EQ(has_cpuid_0x15); EQ(cpuid_0x15_eax); EQ(cpuid_0x15_ebx); EQ(mtc_freq);
	EQ(kernel.start); STREQ(kernel.kallsyms); STREQ(kernel.kcore); EQ(kernel.kcore_base);
	STREQ(proc_sideband); STREQ(vdso); STREQ(sysroot);
	cr_assert_eq(a->nr_streams, b->nr_streams);
	for (int i = 0; i < a->nr_streams; i++) {
		STREQ(streams[i].file); STREQ(streams[i].sideband);
		EQ(streams[i].cpu); EQ(streams[i].tid);
		EQ(streams[i].bytes); EQ(streams[i].sideband_bytes);
		EQ(streams[i].lost.truncated); EQ(streams[i].lost.lost);
		EQ(streams[i].lost.lost_records); EQ(streams[i].lost.partial);
		EQ(streams[i].lost.collision); EQ(streams[i].lost.sideband_full);
		EQ(streams[i].lost.counted); EQ(streams[i].lost.unreported);
		EQ(streams[i].restarts); EQ(streams[i].itrace_start);
	}
	cr_assert_eq(a->nr_images, b->nr_images);
	for (int i = 0; i < a->nr_images; i++) {
		STREQ(images[i].path);
		STREQ(images[i].build_id);
		EQ(images[i].has_inode); EQ(images[i].maj); EQ(images[i].min); EQ(images[i].ino);
	}
	EQ(snapshot_mode); EQ(snapshot_size);
	EQ(clock.known); EQ(clock.perf_minus_monotonic); EQ(clock.error_ns);
	cr_assert_eq(a->nr_snapshots, b->nr_snapshots);
	for (int i = 0; i < a->nr_snapshots; i++) {
		EQ(snapshots[i].number); STREQ(snapshots[i].dir); STREQ(snapshots[i].cause);
		EQ(snapshots[i].trigger); EQ(snapshots[i].time_ns); EQ(snapshots[i].perf_time);
		cr_assert_eq(a->snapshots[i].nr_windows, b->snapshots[i].nr_windows);
		for (int k = 0; k < a->snapshots[i].nr_windows; k++) {
			STREQ(snapshots[i].windows[k].file);
			EQ(snapshots[i].windows[k].cpu); EQ(snapshots[i].windows[k].tid);
			EQ(snapshots[i].windows[k].bytes); EQ(snapshots[i].windows[k].aux_head);
			EQ(snapshots[i].windows[k].wrapped);
		}
	}
	cr_assert_eq(a->nr_triggers, b->nr_triggers);
	for (int i = 0; i < a->nr_triggers; i++) {
		STREQ(triggers[i].spec); STREQ(triggers[i].kind); STREQ(triggers[i].action);
		STREQ(triggers[i].path); EQ(triggers[i].offset); EQ(triggers[i].limit);
		EQ(triggers[i].fires); EQ(triggers[i].dropped); EQ(triggers[i].throttled);
		EQ(triggers[i].dropped_counted); EQ(triggers[i].late_counted);
		EQ(triggers[i].late);
		STREQ(triggers[i].guard); STREQ(triggers[i].fallback); EQ(triggers[i].stray_traps);
		EQ(triggers[i].passed_traps); STREQ(triggers[i].stray_trap);
		STREQ(triggers[i].passed_trap);
	}
	cr_assert_eq(a->nr_fires, b->nr_fires);
	for (int i = 0; i < a->nr_fires; i++) {
		EQ(fires[i].trigger); EQ(fires[i].time_ns); EQ(fires[i].perf_time);
		EQ(fires[i].pid); EQ(fires[i].tid); EQ(fires[i].cpu); EQ(fires[i].snapshot);
	}
	cr_assert_eq(a->nr_perf_maps, b->nr_perf_maps);
	for (int i = 0; i < a->nr_perf_maps; i++) {
		EQ(perf_maps[i].pid); STREQ(perf_maps[i].file); EQ(perf_maps[i].bytes);
		EQ(perf_maps[i].cut);
	}
	cr_assert_eq(a->nr_perf_maps_refused, b->nr_perf_maps_refused);
	for (int i = 0; i < a->nr_perf_maps_refused; i++) {
		EQ(perf_maps_refused[i].pid); STREQ(perf_maps_refused[i].why);
	}
	cr_assert_eq(a->nr_marks, b->nr_marks);
	for (int i = 0; i < a->nr_marks; i++) {
		EQ(marks[i].time_ns); EQ(marks[i].perf_time); STREQ(marks[i].text);
	}
	EQ(start_time.tv_sec); EQ(start_time.tv_nsec);
	EQ(end_time.tv_sec); EQ(end_time.tv_nsec);
	STREQ(stop_reason); EQ(complete);
}

static char *text_of(const struct manifest *m)
{
	json_t *j = manifest_to_json(m);
	char *t;

	cr_assert(j, "written");
	t = json_dumps(j, JSON_INDENT(2));
	json_decref(j);
	cr_assert(t);
	return t;
}

Test(manifest_schema, every_field_is_written_and_read_back_the_same)
{
	struct manifest m, back;
	struct error e = { 0 };
	char *text, *again;

	mfill(&m);
	text = text_of(&m);
	cr_assert_eq(manifest_parse(text, strlen(text), &back, &e), 0, "%s: %s", e.what, e.why);
	same(&m, &back);
	again = text_of(&back);
	cr_expect_str_eq(again, text, "a second write gives the same bytes");
	free(again);
	free(text);
	manifest_free(&back);
	manifest_free(&m);
}

/* Every field set: a null in the text is a field the writer left out of the fill. */
Test(manifest_schema, a_full_manifest_has_no_null_but_an_images_other_identity)
{
	struct manifest m;
	char *text, *p;
	int nulls = 0;

	mfill(&m);
	text = text_of(&m);
	for (p = text; (p = strstr(p, "null")); p++)
		nulls++;
	/* An image has a build-id or a device and inode: mfill's first the one, its second the other. */
	cr_expect_eq(nulls, 3, "%s", text);
	free(text);
	manifest_free(&m);
}

/* One schema for writer and reader: a manifest with nothing set reads back too. */
Test(manifest_schema, the_empty_manifest_reads_back)
{
	struct manifest m, back;
	struct error e = { 0 };
	char *argv[] = { "ptcollect" };
	char *text;

	manifest_init(&m);
	cr_assert_eq(manifest_set_argv(&m.command, &m.command_argc, argv, 1), 0);
	cr_assert_eq(manifest_set(&m.cpu.vendor, "v"), 0);
	m.target.pids = calloc(1, sizeof(pid_t));
	text = text_of(&m);
	cr_assert_eq(manifest_parse(text, strlen(text), &back, &e), 0, "%s: %s", e.what, e.why);
	same(&m, &back);
	free(text);
	manifest_free(&back);
	manifest_free(&m);
}

/*
 * The writer dumps each image alone into its place (issue 22: the tree of 80,000 of
 * them took 50 MB): the file holds the bytes json_dumps() gives of the whole tree.
 */
Test(manifest_schema, the_write_of_images_one_by_one_gives_the_bytes_of_the_whole_tree)
{
	char dir[] = "/tmp/ptc-mwrite-XXXXXX", path[64], *text, *file;
	struct manifest m;
	struct error e = { 0 };
	size_t len;
	FILE *f;
	int fd;

	mfill(&m);
	text = text_of(&m);
	cr_assert_not_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(manifest_write(&m, fd, &e), 0, "%s", e.why);
	close(fd);
	snprintf(path, sizeof(path), "%s/%s", dir, MANIFEST_FILE);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	file = calloc(1, strlen(text) + 16);
	len = fread(file, 1, strlen(text) + 8, f);
	fclose(f);
	cr_expect_eq(len, strlen(text) + 1);
	cr_expect_eq(file[strlen(text)], '\n');
	file[strlen(text)] = '\0';
	cr_expect_str_eq(file, text);
	unlink(path);
	rmdir(dir);
	free(file);
	free(text);
	manifest_free(&m);
}

/* @text with the first @old after @after replaced by @new. */
static char *edit(const char *text, const char *after, const char *old, const char *new)
{
	const char *a = strstr(text, after), *p = a ? strstr(a, old) : NULL;
	char *out;

	cr_assert_not_null(p, "no '%s' after '%s'", old, after);
	cr_assert(asprintf(&out, "%.*s%s%s", (int)(p - text), text, new, p + strlen(old)) > 0);
	return out;
}

/* What the reader says of @text, against what jansson says of it whole (@syntax) or @want. */
static void reads_as(const char *text, bool syntax, const char *want)
{
	struct manifest m;
	struct error e = { 0 };
	json_error_t je;
	char msg[sizeof(e.what) + sizeof(e.why) + 2];

	cr_assert_neq(manifest_parse(text, strlen(text), &m, &e), 0, "%s", text);
	if (syntax) {
		cr_assert_null(json_loadb(text, strlen(text), JSON_REJECT_DUPLICATES, &je));
		snprintf(msg, sizeof(msg), "not valid JSON: line %d, column %d: %s", je.line,
			 je.column, je.text);
		cr_expect_str_eq(e.why, msg);
	} else {
		snprintf(msg, sizeof(msg), "%s: %s", e.what, e.why);
		cr_expect_str_eq(msg, want);
	}
}

/*
 * The reader cuts the top level's arrays (images, fires, ...) out of the text and reads
 * their elements one at a time: what it says of a bad manifest is what it said reading
 * the text whole (jansson's syntax message first, then the first key wrong).
 */
Test(manifest_schema, a_cut_manifest_reads_as_the_whole_text)
{
	struct manifest m, back;
	struct error e = { 0 };
	char *text, *t, *u;

	mfill(&m);
	text = text_of(&m);
	/* Read cut, it is what it was. */
	cr_assert_eq(manifest_parse(text, strlen(text), &back, &e), 0, "%s: %s", e.what, e.why);
	same(&m, &back);
	manifest_free(&back);
	/* A syntax error inside an image; a duplicate key in one; a second "images". */
	t = edit(text, "\"images\"", "\"path\":", "\"path\" ");
	reads_as(t, true, NULL);
	free(t);
	t = edit(text, "\"images\"", "\"path\":", "\"path\": \"/x\", \"path\":");
	reads_as(t, true, NULL);
	free(t);
	t = edit(text, "\"images\"", "\"images\":", "\"images\": [], \"images\":");
	reads_as(t, true, NULL);
	free(t);
	/* A key wrong before the images, and a syntax error in them: the syntax first. */
	t = edit(text, "\"format\"", "\"mode\": \"", "\"mode\": \"x");
	u = edit(t, "\"images\"", "\"path\":", "\"path\" ");
	reads_as(u, true, NULL);
	free(u);
	reads_as(t, false, "\"mode\": 'xper-thread' is not per-cpu, per-thread or none");
	free(t);
	/* Not objects; a bad value in the second image; a trailing comma. */
	t = edit(text, "\"images\"", "\"images\": [", "\"images\": [1, ");
	reads_as(t, false, "\"images[0]\": expected an object, found an integer");
	free(t);
	t = edit(text, "\"images\"", "}", "}, 7");
	reads_as(t, false, "\"images[1]\": expected an object, found an integer");
	free(t);
	t = edit(text, "\"inode\": null", "\"path\": \"/image-", "\"path\": \"image-");
	reads_as(t, false, "\"images[1].path\": 'image-76' is not an absolute path");
	free(t);
	free(text);
	manifest_free(&m);
}

/*
 * lost.unreported: null when the kernel could not count (before 6.0), absent in a
 * bundle older than the field; both read as not counted, a count as counted.
 */
Test(manifest_schema, an_uncounted_or_absent_unreported_reads_as_not_counted)
{
	struct manifest m, back;
	struct error e = { 0 };
	char *text, *cut;

	mfill(&m);
	m.streams[0].lost.counted = false;
	m.streams[0].lost.unreported = 0;
	text = text_of(&m);
	cr_assert(strstr(text, "\"unreported\": null"), "%s", text);
	cr_assert_eq(manifest_parse(text, strlen(text), &back, &e), 0, "%s: %s", e.what, e.why);
	same(&m, &back);
	cr_expect(!back.streams[0].lost.counted && back.streams[1].lost.counted);
	manifest_free(&back);
	cut = edit(text, "\"sideband_full\"", ",\n        \"unreported\": null", "");
	cr_assert_eq(manifest_parse(cut, strlen(cut), &back, &e), 0, "%s: %s", e.what, e.why);
	cr_expect(!back.streams[0].lost.counted, "an older bundle: only LOST records known");
	manifest_free(&back);
	free(cut);
	free(text);
	manifest_free(&m);
}

/*
 * A trigger's dropped counted by the kernel or only a floor, and its late
 * fires; absent (bundles older than each): a floor, and not counted.
 */
Test(manifest_schema, a_triggers_uncounted_dropped_or_late_fires_absent_read_as_older)
{
	struct manifest m, back;
	struct error e = { 0 };
	char *text, *cut, *cut2;

	mfill(&m);
	cr_assert_geq(m.nr_triggers, 1);
	m.triggers[0].dropped_counted = true;
	m.triggers[0].late_counted = true;
	m.triggers[0].late = 3;
	text = text_of(&m);
	cr_assert(strstr(text, "\"dropped_counted\": true"), "%s", text);
	cr_assert(strstr(text, "\"late\": \"3\","), "%s", text);
	cr_assert_eq(manifest_parse(text, strlen(text), &back, &e), 0, "%s: %s", e.what, e.why);
	same(&m, &back);
	cr_expect(back.triggers[0].dropped_counted);
	cr_expect_eq(back.triggers[0].late, 3);
	manifest_free(&back);
	cut = edit(text, "\"throttled\"", "\"dropped_counted\": true,", "");
	cut2 = edit(cut, "\"throttled\"", "\"late\": \"3\",", "");
	cr_assert_eq(manifest_parse(cut2, strlen(cut2), &back, &e), 0, "%s: %s", e.what, e.why);
	cr_expect(!back.triggers[0].dropped_counted, "an older bundle: the LOST records' count");
	cr_expect(!back.triggers[0].late_counted, "an older bundle: not counted");
	cr_expect_eq(back.triggers[0].late, 0);
	cr_expect_eq(back.triggers[0].fires, m.triggers[0].fires);
	manifest_free(&back);
	free(cut2);
	/* Written so when not counted. */
	cut2 = edit(text, "\"throttled\"", "\"late\": \"3\",", "\"late\": null,");
	cr_assert_eq(manifest_parse(cut2, strlen(cut2), &back, &e), 0, "%s: %s", e.what, e.why);
	cr_expect(!back.triggers[0].late_counted);
	cr_expect(back.triggers[0].dropped_counted);
	manifest_free(&back);
	free(cut2);
	free(cut);
	free(text);
	manifest_free(&m);
}
