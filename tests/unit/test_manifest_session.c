// SPDX-License-Identifier: MIT
/*
 * The manifest's scripted-session part: snapshots with their windows,
 * triggers, fires, marks and the clock offset are written in the type rule
 * and read back the same; bad values are refused with the key named; a
 * manifest without them (a plain recording) still reads.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

static void minimal(struct manifest *m)
{
	char *argv[] = { "ptcollect", "record", "-S" };

	manifest_init(m);
	cr_assert_eq(manifest_set_argv(&m->command, &m->command_argc, argv, 3), 0);
	cr_assert_eq(manifest_set(&m->tool_version, "0.1.0"), 0);
	cr_assert_eq(manifest_set(&m->cpu.vendor, "GenuineIntel"), 0);
	cr_assert_eq(manifest_set(&m->pmu_name, "intel_pt"), 0);
	m->target.kind = TARGET_COMMAND;
	m->target.pids = calloc(1, sizeof(pid_t));
}

static void session(struct manifest *m)
{
	struct msnapshot *s;
	struct mwindow *w;
	struct mtrigger *t;
	struct mfire *f;
	struct mmark *k;

	minimal(m);
	m->snapshot_mode = true;
	m->snapshot_size = 65536;
	m->clock.known = true;
	m->clock.perf_minus_monotonic = -401246;
	m->clock.error_ns = 163;
	t = manifest_add_trigger(m);
	manifest_set(&t->spec, "uprobe:/bin/prog:main");
	manifest_set(&t->kind, "uprobe");
	manifest_set(&t->action, "snapshot");
	manifest_set(&t->path, "/bin/prog");
	t->offset = 0x11d9;
	t->limit = 7;
	t->fires = 7;
	s = manifest_add_snapshot(m);
	s->number = 1;
	manifest_set(&s->dir, "snap-1");
	manifest_set(&s->cause, "trigger");
	s->trigger = 0;
	s->time_ns = 18446744073709551000ull;	/* past 2^53: a string keeps it */
	s->perf_time = manifest_perf_time(m, 1000000);
	w = manifest_add_window(s);
	manifest_set(&w->file, "snap-1/cpu0.pt");
	w->cpu = 0;
	w->bytes = 4096;
	w->aux_head = 12288;
	w->wrapped = true;
	f = manifest_add_fire(m);
	f->trigger = 0;
	f->time_ns = 999999;
	f->perf_time = manifest_perf_time(m, 999999);
	f->pid = 10;
	f->tid = 11;
	f->cpu = 1;
	f->snapshot = 1;
	k = manifest_add_mark(m);
	manifest_set(&k->text, "slow request");
	k->time_ns = 5;
}

static char *text_of(const struct manifest *m)
{
	json_t *j = manifest_to_json(m);
	char *s = json_dumps(j, JSON_INDENT(2));

	json_decref(j);
	cr_assert(s);
	return s;
}

Test(manifest_session, snapshots_triggers_fires_marks_and_clock_read_back)
{
	struct manifest m, r;
	struct error e = { 0 };
	char *text;

	session(&m);
	text = text_of(&m);
	cr_expect(strstr(text, "\"time_ns\": \"18446744073709551000\""), "%s", text);
	cr_expect(strstr(text, "\"perf_minus_monotonic_ns\": \"-401246\""), "%s", text);
	cr_expect(strstr(text, "\"perf_time\": \"598754\""), "mono + offset: %s", text);
	cr_assert_eq(manifest_parse(text, strlen(text), &r, &e), 0, "%s: %s", e.what, e.why);
	cr_expect(r.snapshot_mode);
	cr_expect_eq(r.snapshot_size, 65536);
	cr_assert_eq(r.nr_snapshots, 1);
	cr_expect_eq(r.snapshots[0].time_ns, 18446744073709551000ull);
	cr_expect_str_eq(r.snapshots[0].cause, "trigger");
	cr_expect_eq(r.snapshots[0].trigger, 0);
	cr_assert_eq(r.snapshots[0].nr_windows, 1);
	cr_expect_str_eq(r.snapshots[0].windows[0].file, "snap-1/cpu0.pt");
	cr_expect_eq(r.snapshots[0].windows[0].aux_head, 12288);
	cr_expect(r.snapshots[0].windows[0].wrapped);
	cr_assert_eq(r.nr_triggers, 1);
	cr_expect_eq(r.triggers[0].offset, 0x11d9);
	cr_expect_eq(r.triggers[0].limit, 7);
	cr_assert_eq(r.nr_fires, 1);
	cr_expect_eq(r.fires[0].tid, 11);
	cr_expect_eq(r.fires[0].snapshot, 1);
	cr_assert_eq(r.nr_marks, 1);
	cr_expect_str_eq(r.marks[0].text, "slow request");
	cr_expect(r.clock.known);
	cr_expect_eq(r.clock.perf_minus_monotonic, -401246);
	manifest_free(&r);
	manifest_free(&m);
	free(text);
}

Test(manifest_session, a_plain_recording_has_none_of_it_and_reads)
{
	struct manifest m, r;
	struct error e = { 0 };
	json_t *j;
	char *text;

	minimal(&m);
	j = manifest_to_json(&m);
	/* A manifest written before these keys existed. */
	json_object_del(j, "snapshot");
	json_object_del(j, "snapshots");
	json_object_del(j, "triggers");
	json_object_del(j, "fires");
	json_object_del(j, "marks");
	json_object_del(j, "clock");
	text = json_dumps(j, 0);
	json_decref(j);
	cr_assert_eq(manifest_parse(text, strlen(text), &r, &e), 0, "%s: %s", e.what, e.why);
	cr_expect(!r.snapshot_mode && !r.nr_snapshots && !r.nr_fires && !r.clock.known);
	manifest_free(&r);
	manifest_free(&m);
	free(text);
}

/* Replace the first @from in the session manifest's text by @to; the reader must refuse it. */
static void refused(const char *from, const char *to, const char *key)
{
	struct manifest m, r;
	struct error e = { 0 };
	char *text, *at, *bad;

	session(&m);
	text = text_of(&m);
	at = strstr(text, from);
	cr_assert(at, "no '%s' in the manifest", from);
	bad = malloc(strlen(text) + strlen(to) + 1);
	sprintf(bad, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	cr_expect_neq(manifest_parse(bad, strlen(bad), &r, &e), 0, "accepted: %s", to);
	cr_expect(strstr(e.what, key), "'%s' names %s, not %s", to, e.what, key);
	manifest_free(&m);
	free(text);
	free(bad);
}

Test(manifest_session, bad_values_are_refused_with_the_key_named)
{
	refused("\"file\": \"snap-1/cpu0.pt\"", "\"file\": \"../cpu0.pt\"",
		"snapshots[0].windows[0].file");
	refused("\"dir\": \"snap-1\"", "\"dir\": \"/tmp\"", "snapshots[0].dir");
	refused("\"bytes\": \"4096\"", "\"bytes\": 4096", "snapshots[0].windows[0].bytes");
	refused("\"wrapped\": true", "\"wrapped\": 1", "snapshots[0].windows[0].wrapped");
	refused("\"number\": 1", "\"number\": 0", "snapshots[0].number");
	refused("\"trigger\": 0,\n      \"time_ns\": \"999999\"",
		"\"trigger\": 1,\n      \"time_ns\": \"999999\"", "fires[0].trigger");
	refused("\"offset\": \"0x11d9\"", "\"offset\": \"4569\"", "triggers[0].offset");
	refused("\"perf_minus_monotonic_ns\": \"-401246\"", "\"perf_minus_monotonic_ns\": \"x1\"",
		"clock.perf_minus_monotonic_ns");
	refused("\"text\": \"slow request\"", "\"text\": 7", "marks[0].text");
	refused("\"snapshots\": [", "\"snapshots\": {}, \"x\": [", "snapshots");
}
