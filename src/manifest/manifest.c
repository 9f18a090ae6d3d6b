// SPDX-License-Identifier: MIT
/*
 * struct manifest: made, grown and freed. Its schema is manifest_schema.c,
 * written by manifest_write.c and read by manifest_read.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

void manifest_init(struct manifest *m)
{
	memset(m, 0, sizeof(*m));
	m->version = MANIFEST_VERSION;
	m->nom_freq = -1;
	m->source.nr_cpus_online = m->source.nr_cpus_avail = -1;
}

static void free_argv(char **argv, int argc)
{
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
}

static void free_source(struct msource *s)
{
	char **strs[] = {
		&s->tool, &s->version, &s->file, &s->format, &s->hostname, &s->os_release,
		&s->arch, &s->cpuid, &s->cpudesc, &s->filter,
	};

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		free(*strs[i]);
	free_argv(s->command, s->command_argc);
}

void manifest_free(struct manifest *m)
{
	free(m->tool_version);
	free_source(&m->source);
	free_argv(m->command, m->command_argc);
	free(m->target.pids);
	free_argv(m->target.command, m->target.command_argc);
	free(m->event);
	free(m->pmu_name);
	free(m->filter);
	free(m->cpu.vendor);
	free(m->kernel.kallsyms);
	free(m->kernel.kcore);
	free(m->proc_sideband);
	free(m->vdso);
	free(m->sysroot);
	for (int i = 0; i < m->nr_streams; i++) {
		free(m->streams[i].file);
		free(m->streams[i].sideband);
	}
	free(m->streams);
	for (int i = 0; i < m->nr_images; i++) {
		free(m->images[i].path);
		free(m->images[i].build_id);
	}
	free(m->images);
	for (int i = 0; i < m->nr_perf_maps; i++)
		free(m->perf_maps[i].file);
	free(m->perf_maps);
	for (int i = 0; i < m->nr_perf_maps_refused; i++)
		free(m->perf_maps_refused[i].why);
	free(m->perf_maps_refused);
	for (int i = 0; i < m->nr_snapshots; i++) {
		struct msnapshot *sn = &m->snapshots[i];

		for (int j = 0; j < sn->nr_windows; j++)
			free(sn->windows[j].file);
		free(sn->windows);
		free(sn->dir);
		free(sn->cause);
	}
	free(m->snapshots);
	for (int i = 0; i < m->nr_triggers; i++) {
		free(m->triggers[i].spec);
		free(m->triggers[i].kind);
		free(m->triggers[i].action);
		free(m->triggers[i].path);
		free(m->triggers[i].guard);
		free(m->triggers[i].fallback);
		free(m->triggers[i].stray_trap);
		free(m->triggers[i].passed_trap);
	}
	free(m->triggers);
	free(m->fires);
	for (int i = 0; i < m->nr_marks; i++)
		free(m->marks[i].text);
	free(m->marks);
	free(m->stop_reason);
	manifest_init(m);
}

int manifest_set(char **dst, const char *src)
{
	char *n = NULL;

	if (src && !(n = strdup(src)))
		return -ENOMEM;
	free(*dst);
	*dst = n;
	return 0;
}

int manifest_set_argv(char ***dst, int *dst_argc, char *const *argv, int argc)
{
	char **n = calloc((size_t)argc + 1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		n[i] = strdup(argv[i]);
		if (!n[i]) {
			free_argv(n, i);
			return -ENOMEM;
		}
	}
	free_argv(*dst, *dst_argc);
	*dst = n;
	*dst_argc = argc;
	return 0;
}

/*
 * Grow @arr of @nr elements of @size by one zeroed element. The array has room for the
 * next power of two of @nr: it grows when @nr is one (80,000 images, not 80,000 copies).
 */
static void *append(void *arrp, int *nr, size_t size)
{
	void **arr = arrp;
	size_t have = (size_t)*nr;
	char *n = *arr;

	if (!have || !(have & (have - 1))) {
		n = realloc(*arr, (have ? 2 * have : 1) * size);
		if (!n)
			return NULL;
	}
	*arr = n;
	memset(n + (size_t)*nr * size, 0, size);
	return n + (size_t)(*nr)++ * size;
}

struct mstream *manifest_add_stream(struct manifest *m)
{
	struct mstream *s = append(&m->streams, &m->nr_streams, sizeof(*s));

	if (s)
		s->cpu = s->tid = -1;
	return s;
}

struct mimage *manifest_add_image(struct manifest *m)
{
	return append(&m->images, &m->nr_images, sizeof(struct mimage));
}

struct mperfmap *manifest_add_perf_map(struct manifest *m)
{
	return append(&m->perf_maps, &m->nr_perf_maps, sizeof(struct mperfmap));
}

struct mperfmap_refused *manifest_add_perf_map_refused(struct manifest *m)
{
	return append(&m->perf_maps_refused, &m->nr_perf_maps_refused,
		      sizeof(struct mperfmap_refused));
}

struct msnapshot *manifest_add_snapshot(struct manifest *m)
{
	struct msnapshot *s = append(&m->snapshots, &m->nr_snapshots, sizeof(*s));

	if (s)
		s->trigger = -1;
	return s;
}

struct mwindow *manifest_add_window(struct msnapshot *s)
{
	struct mwindow *w = append(&s->windows, &s->nr_windows, sizeof(*w));

	if (w)
		w->cpu = w->tid = -1;
	return w;
}

struct mtrigger *manifest_add_trigger(struct manifest *m)
{
	return append(&m->triggers, &m->nr_triggers, sizeof(struct mtrigger));
}

struct mfire *manifest_add_fire(struct manifest *m)
{
	if (m->nr_fires >= MANIFEST_MAX_FIRES)
		return NULL;
	return append(&m->fires, &m->nr_fires, sizeof(struct mfire));
}

struct mmark *manifest_add_mark(struct manifest *m)
{
	return append(&m->marks, &m->nr_marks, sizeof(struct mmark));
}

uint64_t manifest_perf_time(const struct manifest *m, uint64_t monotonic_ns)
{
	return m->clock.known ? monotonic_ns + (uint64_t)m->clock.perf_minus_monotonic : 0;
}
