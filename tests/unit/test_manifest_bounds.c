// SPDX-License-Identifier: MIT
/*
 * A manifest past MANIFEST_MAX_BYTES, _OBJECTS or _VALUES is refused before
 * it is parsed, the bound named; the largest manifest ptcollect writes (every
 * fire listed, each value at its widest) stays inside them and reads; and
 * reading the worst text inside the bounds takes bounded memory.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "manifest.h"

/* "{"a":[ITEM,ITEM,...]}" with @n items. */
static char *repeat(const char *item, size_t n, size_t *len)
{
	size_t il = strlen(item), cap = 16 + n * (il + 1);
	char *t = malloc(cap), *p = t;

	cr_assert(t);
	p += sprintf(p, "{\"a\":[");
	for (size_t i = 0; i < n; i++) {
		memcpy(p, item, il);
		p += il;
		*p++ = ',';
	}
	if (n)
		p--;
	p += sprintf(p, "]}");
	*len = (size_t)(p - t);
	return t;
}

static void refused(const char *text, size_t len, const char *bound)
{
	struct manifest m;
	struct error e = { 0 };

	cr_assert_neq(manifest_parse(text, len, &m, &e), 0);
	cr_expect(e.usage, "a usage error (exit 2)");
	cr_expect(strstr(e.why, bound) && strstr(e.why, "not a ptcollect manifest"), "%s", e.why);
}

Test(manifest_bounds, past_the_byte_bound_is_refused_naming_it)
{
	size_t len = MANIFEST_MAX_BYTES + 1;
	char *t = malloc(len), b[32];

	cr_assert(t);
	memset(t, ' ', len);
	snprintf(b, sizeof(b), "larger than %u bytes", MANIFEST_MAX_BYTES);
	refused(t, len, b);
	free(t);
}

Test(manifest_bounds, too_many_objects_is_refused_before_parsing)
{
	size_t len;
	char *t = repeat("{}", MANIFEST_MAX_OBJECTS, &len);

	refused(t, len, "objects and arrays");
	free(t);
}

Test(manifest_bounds, too_many_values_is_refused_before_parsing)
{
	size_t len;
	char *t = repeat("1", MANIFEST_MAX_VALUES, &len);

	refused(t, len, "values");
	free(t);
}

Test(manifest_bounds, strings_holding_brackets_count_as_one_value)
{
	size_t len;
	char *t = repeat("\"{[{[\\\"{\"", MANIFEST_MAX_OBJECTS, &len);
	struct error e = { 0 };

	cr_expect_eq(manifest_check_bounds(t, len, &e), 0, "%s", e.why);
	free(t);
}

/* Every fire listed, every number at its widest: what ptcollect writes at most. */
Test(manifest_bounds, the_largest_manifest_written_reads)
{
	struct manifest m, back;
	struct error e = { 0 };
	struct mtrigger *tr;
	char *text;
	json_t *j;

	char *argv[] = { "ptcollect", "record", "--trigger", "uprobe:/bin/prog:main=mark" };

	manifest_init(&m);
	cr_assert_eq(manifest_set_argv(&m.command, &m.command_argc, argv, 4), 0);
	m.target.pids = calloc(1, sizeof(pid_t));
	manifest_set(&m.cpu.vendor, "GenuineIntel");
	tr = manifest_add_trigger(&m);
	cr_assert(tr);
	manifest_set(&tr->spec, "uprobe:/bin/prog:main");
	manifest_set(&tr->kind, "uprobe");
	manifest_set(&tr->action, "mark");
	manifest_set(&tr->path, "/bin/prog");
	m.clock.known = true;
	for (;;) {
		struct mfire *f = manifest_add_fire(&m);

		if (!f)
			break;
		*f = (struct mfire){ .trigger = 0, .time_ns = UINT64_MAX, .perf_time = UINT64_MAX,
				     .pid = INT32_MAX, .tid = INT32_MAX, .cpu = INT32_MAX,
				     .snapshot = INT32_MAX };
	}
	cr_assert_eq(m.nr_fires, MANIFEST_MAX_FIRES);
	j = manifest_to_json(&m);
	cr_assert(j);
	text = json_dumps(j, JSON_INDENT(2));
	cr_assert(text);
	cr_expect_lt(strlen(text), MANIFEST_MAX_BYTES / 4 * 3, "%zu bytes: keep a margin",
		     strlen(text));
	cr_expect_eq(manifest_parse(text, strlen(text), &back, &e), 0, "%s", e.why);
	cr_expect_eq(back.nr_fires, MANIFEST_MAX_FIRES);
	manifest_free(&back);
	free(text);
	json_decref(j);
	manifest_free(&m);
}

/*
 * The densest text inside the bounds: as many objects and small values as
 * allowed. Parsing it (and refusing it: it is no manifest) keeps the
 * process's peak below 256 MiB. Not under a sanitizer: its allocator's
 * overhead is not ours.
 */
Test(manifest_bounds, the_densest_text_inside_the_bounds_reads_in_bounded_memory)
{
#if defined(__SANITIZE_ADDRESS__)
	cr_skip_test("the sanitizer's allocator decides the peak");
#else
	size_t n_obj = MANIFEST_MAX_OBJECTS - 10, n_val = MANIFEST_MAX_VALUES - n_obj - 10;
	size_t cap = 64 + n_obj * 3 + n_val * 2, len;
	char *t = malloc(cap), *p = t;
	struct manifest m;
	struct error e = { 0 };
	struct rusage ru;

	cr_assert(t);
	p += sprintf(p, "{\"o\":[");
	for (size_t i = 0; i < n_obj; i++)
		p += sprintf(p, "{},");
	p += sprintf(p, "0],\"v\":[");
	for (size_t i = 0; i < n_val; i++)
		p += sprintf(p, "1,");
	p += sprintf(p, "0]}");
	len = (size_t)(p - t);
	cr_assert_eq(manifest_check_bounds(t, len, &e), 0, "%s", e.why);
	cr_assert_neq(manifest_parse(t, len, &m, &e), 0);
	free(t);
	cr_assert_eq(getrusage(RUSAGE_SELF, &ru), 0);
	cr_expect_lt(ru.ru_maxrss, 256L * 1024, "peak %ld KiB", ru.ru_maxrss);
	cr_log_info("peak %ld KiB", ru.ru_maxrss);
#endif
}

/* The room a recording keeps: the manifest grown to every limit still fits in it. */
Test(manifest_bounds, the_size_bound_holds_the_manifest_grown_to_its_limits)
{
	char *argv[] = { "ptcollect", "record", "-S", "--trigger", "uprobe:/bin/p:main" };
	struct manifest m;
	size_t bound, len;
	char *text;
	json_t *j;

	manifest_init(&m);
	cr_assert_eq(manifest_set_argv(&m.command, &m.command_argc, argv, 5), 0);
	m.target.pids = calloc(1, sizeof(pid_t));
	manifest_set(&m.cpu.vendor, "GenuineIntel");
	m.snapshot_mode = true;
	for (int i = 0; i < 3; i++) {
		struct mstream *s = manifest_add_stream(&m);
		char f[32];

		snprintf(f, sizeof(f), "cpu%d.pevent", i);
		manifest_set(&s->sideband, f);
		s->cpu = i;
	}
	{
		struct mtrigger *t = manifest_add_trigger(&m);

		manifest_set(&t->spec, "uprobe:/bin/p:main");
		manifest_set(&t->kind, "uprobe");
		manifest_set(&t->action, "snapshot");
		manifest_set(&t->path, "/bin/p");
		t->limit = 50;
	}
	bound = manifest_size_bound(&m, 50, 50 + 64);
	cr_assert_gt(bound, 0);
	/* Grow it: every count at its widest, 50 fires, 114 snapshots, the closing fields. */
	for (int i = 0; i < m.nr_streams; i++) {
		struct mstream *s = &m.streams[i];

		s->bytes = s->sideband_bytes = s->restarts = s->itrace_start = UINT64_MAX;
		s->lost = (struct mlosses){ UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
					    UINT64_MAX, UINT64_MAX, UINT64_MAX, true };
	}
	m.triggers[0].fires = m.triggers[0].dropped = m.triggers[0].throttled = UINT64_MAX;
	m.triggers[0].stray_traps = m.triggers[0].late = UINT64_MAX;
	m.triggers[0].late_counted = true;
	m.triggers[0].passed_traps = UINT64_MAX;
	for (int k = 0; k < 2; k++) {
		char text[MANIFEST_TRAP_TEXT];

		memset(text, 'x', sizeof(text) - 1);
		text[sizeof(text) - 1] = 0;
		cr_assert_eq(manifest_set(k ? &m.triggers[0].passed_trap :
					  &m.triggers[0].stray_trap, text), 0);
	}
	for (int i = 0; i < 50; i++)
		*manifest_add_fire(&m) = (struct mfire){ 0, UINT64_MAX, UINT64_MAX, INT32_MIN,
							 INT32_MIN, INT32_MIN, UINT32_MAX };
	for (int i = 0; i < 114; i++) {
		struct msnapshot *s = manifest_add_snapshot(&m);
		char d[64];

		snprintf(d, sizeof(d), "snap-%d", 1000000000 + i);
		manifest_set(&s->dir, d);
		manifest_set(&s->cause, "trigger");
		s->number = UINT32_MAX;
		s->trigger = 0;
		s->time_ns = s->perf_time = UINT64_MAX;
		for (int k = 0; k < m.nr_streams; k++) {
			struct mwindow *w = manifest_add_window(s);
			char f[96];

			snprintf(f, sizeof(f), "%s/cpu%d.pt", d, 1000000000 + k);
			manifest_set(&w->file, f);
			w->cpu = w->tid = INT32_MIN;
			w->bytes = w->aux_head = UINT64_MAX;
			w->wrapped = true;
		}
	}
	m.clock.known = true;
	m.clock.perf_minus_monotonic = INT64_MIN;
	m.clock.error_ns = UINT64_MAX;
	m.end_time.tv_sec = 4102444800;
	m.target.exited = true;
	m.target.exit_status = 255;
	manifest_set(&m.stop_reason, "the disk is full: the bundle holds what was written");
	m.complete = true;
	j = manifest_to_json(&m);
	text = json_dumps(j, JSON_INDENT(2));
	cr_assert(text);
	len = strlen(text) + 1;
	cr_expect_leq(len, bound, "written %zu bytes, bound %zu", len, bound);
	free(text);
	json_decref(j);
	manifest_free(&m);
}
