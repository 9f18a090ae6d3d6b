// SPDX-License-Identifier: MIT
/* ptcollect info DIR: what a recording holds, what is missing, how to decode it. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "decoders.h"
#include "images.h"
#include "iptcaps.h"
#include "manifest.h"
#include "msg.h"
#include "out.h"
#include "utf8.h"

#define MAX_PROBLEMS 64

void usage_info(FILE *f)
{
	fprintf(f,
		"usage: %s info [--json | --script] DIR\n\n"
		"Show what the bundle DIR holds (target, mode, filters, streams, bytes,\n"
		"losses, duration), what is missing from it (a recording cut short, a\n"
		"stream shorter than its manifest says, timestamps that cannot be\n"
		"converted, mapped files the bundle lacks), and the ptxed and ptdump\n"
		"command lines that decode each stream.\n\n", PTC_PROG);
	cmd_print_options(f, info_spec.options);
}

static const struct cmd_option info_options[] = {
	CMD_OPT_JSON("the same as JSON"),
	CMD_OPT('s', "script", NONE, NULL, 's', "instead, a shell script that runs those "
		"decoders\non every stream, from any directory\n(ptcollect-info(1))"),
	CMD_OPT_HELP,
	CMD_OPT_END,
};

const struct cmd_spec info_spec = { "info", info_options, usage_info, false };

static int info_option(void *script, int c, char *arg)
{
	(void)arg;
	if (c == 's')
		*(bool *)script = true;
	return 0;
}

struct problems {
	char *msg[MAX_PROBLEMS + 1];	/* the last: how many more were not listed */
	int nr;
	unsigned more;
};

__attribute__((format(printf, 2, 3)))
static void problem(struct problems *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nr == MAX_PROBLEMS) {
		p->more++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&p->msg[p->nr], fmt, ap) >= 0)
		p->nr++;
	else
		p->more++;
	va_end(ap);
}

/* The list is bounded, its count is not: say how many it left out, never a short list. */
static void problems_close(struct problems *p)
{
	if (p->more && asprintf(&p->msg[p->nr], "%u more problem(s) not listed: the first %d "
				"are above", p->more, p->nr) >= 0)
		p->nr++;
}

static void check_streams(int dirfd, const struct manifest *m, struct problems *p)
{
	for (int i = 0; i < m->nr_streams; i++) {
		const struct mstream *s = &m->streams[i];
		const struct mlosses *l = &s->lost;
		struct stat st;

		if (!s->file)
			;	/* snapshot mode: the windows are checked with the snapshots */
		else if (fstatat(dirfd, s->file, &st, AT_SYMLINK_NOFOLLOW))
			problem(p, "%s is missing", s->file);
		else if ((uint64_t)st.st_size < s->bytes)
			problem(p, "%s has %llu bytes, the manifest says %" PRIu64 ": the file was cut "
				"short", s->file, (unsigned long long)st.st_size, s->bytes);
		else if ((uint64_t)st.st_size > s->bytes && !m->complete)
			problem(p, "%s holds %llu bytes, more than the %" PRIu64 " the manifest was last "
				"updated with", s->file, (unsigned long long)st.st_size, s->bytes);
		if (l->truncated && !m->snapshot_mode)
			problem(p, "%s: %" PRIu64 " TRUNCATED record(s): the AUX buffer was full and "
				"trace is missing there (a larger -m ,AUX helps)", s->file, l->truncated);
		if (l->lost)
			problem(p, "%s: %" PRIu64 " LOST record(s): %" PRIu64 " sideband records were "
				"dropped (a larger -m DATA helps)", s->file, l->lost, l->lost_records);
		if (l->counted && l->unreported)
			problem(p, "%s: the kernel dropped %" PRIu64 " sideband record(s) that no LOST "
				"record reports: the data ring was full and nothing came after to "
				"say so (a larger -m DATA helps)", s->file, l->unreported);
		if (l->sideband_full)
			problem(p, "%s: the sideband ring filled %" PRIu64 " time(s): a stop of the "
				"hardware may have gone unrecorded there; it was restarted each time "
				"(a larger -m DATA helps)", s->file, l->sideband_full);
		if (l->partial || l->collision)
			problem(p, "%s: %" PRIu64 " PARTIAL and %" PRIu64 " COLLISION record(s)", s->file,
				l->partial, l->collision);
	}
}

/* Fires lost (a full ring, a throttled breakpoint), and fires that came after younger ones:
 * their order, and what a limit kept, may be wrong. */
static void check_triggers(const struct manifest *m, struct problems *p)
{
	for (int i = 0; i < m->nr_triggers; i++) {
		const struct mtrigger *t = &m->triggers[i];

		if (t->dropped)
			problem(p, "trigger %s: %s%" PRIu64 " fire(s) dropped by the kernel (its "
				"ring was full): not acted on, not among the fires", t->spec,
				t->dropped_counted ? "" : "at least ", t->dropped);
		if (t->throttled)
			problem(p, "trigger %s: the kernel throttled it %" PRIu64 " time(s) "
				"(kernel.perf_event_max_sample_rate): the fires meanwhile were not "
				"seen", t->spec, t->throttled);
		if (t->late)
			problem(p, "trigger %s: %" PRIu64 " fire(s) came late, after younger ones: "
				"their order%s may be wrong (the fires have their time_ns)",
				t->spec, t->late,
				t->limit ? ", and which fires the limit kept," : "");
	}
}

/* The JIT perf maps copied: each there with its bytes; those refused, said. */
static void check_perf_maps(int dirfd, const struct manifest *m, struct problems *p)
{
	for (int i = 0; i < m->nr_perf_maps; i++) {
		const struct mperfmap *pm = &m->perf_maps[i];
		struct stat st;

		if (fstatat(dirfd, pm->file, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			problem(p, "%s is missing: the JIT code of pid %d has no names", pm->file,
				pm->pid);
		else if ((uint64_t)st.st_size != pm->bytes)
			problem(p, "%s has %llu bytes, the manifest says %" PRIu64 ": it was changed "
				"after the recording", pm->file, (unsigned long long)st.st_size,
				pm->bytes);
	}
	for (int i = 0; i < m->nr_perf_maps_refused; i++)
		problem(p, "the perf map of pid %d was not copied: %s", m->perf_maps_refused[i].pid,
			m->perf_maps_refused[i].why);
}

/* Whether the decoders find every mapped file: in the sysroot after archive, else on this machine. */
static void check_images(int dirfd, const struct manifest *m, struct problems *p)
{
	int missing = 0, first = -1;
	struct image_paths ip;

	if (images_paths(m, &ip)) {
		problem(p, "out of memory: the mapped files were not checked");
		return;
	}
	for (int i = 0; i < m->nr_images; i++) {
		const struct mimage *img = &m->images[i];
		struct stat st;
		char *at;

		if (ip.first[i] == i && ip.count[i] > 1)
			problem(p, "%s was replaced while it was traced (it was mapped as two "
				"different files): decoders have only one of them, and the code of "
				"the other decodes wrong or not at all", img->path);
		if (!m->sysroot || ip.first[i] != i)
			continue;
		if (asprintf(&at, "%s%s", m->sysroot, img->path) < 0)
			continue;
		if (fstatat(dirfd, at, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode)) {
			missing++;
			first = first < 0 ? i : first;
		}
		free(at);
	}
	images_paths_free(&ip);
	if (missing)
		problem(p, "%d of the mapped files are not in %s (%s among them): 'ptcollect "
			"archive' could not copy them, and ptxed will not find their code", missing,
			m->sysroot, m->images[first].path);
	else if (!m->sysroot && m->nr_images)
		problem(p, "the bundle holds none of the %d mapped files: it decodes only where "
			"they are (on the machine it was recorded on); run 'ptcollect archive' "
			"there to decode it elsewhere", m->nr_images);
}

static void check_windows(int dirfd, const struct manifest *m, struct problems *p)
{
	for (int i = 0; i < m->nr_snapshots; i++) {
		for (int j = 0; j < m->snapshots[i].nr_windows; j++) {
			const struct mwindow *w = &m->snapshots[i].windows[j];
			struct stat st;

			if (fstatat(dirfd, w->file, &st, AT_SYMLINK_NOFOLLOW))
				problem(p, "%s is missing", w->file);
			else if ((uint64_t)st.st_size != w->bytes)
				problem(p, "%s has %llu bytes, the manifest says %" PRIu64, w->file,
					(unsigned long long)st.st_size, w->bytes);
		}
	}
}

/* Packets the libipt ptcollect links cannot decode (Event Trace with libipt 2.0.5). */
static void check_libipt(const struct manifest *m, struct problems *p)
{
	struct iptcaps caps;
	char lacks[160];

	if (!m->pmu_name || strcmp(m->pmu_name, "intel_pt") ||
	    !(m->attr.config & IPTCAPS_CONFIG_EVENT))
		return;
	iptcaps_get(&caps);
	if (iptcaps_decodes(&caps, IPTCAPS_EVENT_TRACE))
		return;
	iptcaps_lacks(&caps, IPTCAPS_EVENT_TRACE, lacks, sizeof(lacks));
	problem(p, "the trace holds Event Trace packets (CFE, EVD: the event term, config bit "
		"31) and %s: 'ptcollect decode' stops at the first of them until the next PSB; "
		"perf and libipt 2.1 or later decode them", lacks);
}

static void check_bundle(int dirfd, const struct manifest *m, struct problems *p)
{
	if (!m->complete)
		problem(p, "the recording did not finish cleanly (the collector was killed, or "
			"a write failed): streams may end early%s%s", m->stop_reason ?
			"; it stopped because: " : "", m->stop_reason ? m->stop_reason : "");
	check_perf_maps(dirfd, m, p);
	check_triggers(m, p);
	if (m->no_trace)
		return;		/* no trace: nothing to decode */
	if (!decoder_cpu_known(m))
		problem(p, "the libipt ptcollect links does not know CPU %u/%u/%u (%s): the decoder "
			"lines say --cpu none, so libipt applies none of its errata workarounds",
			m->cpu.family, m->cpu.model, m->cpu.stepping, m->cpu.vendor);
	check_libipt(m, p);
	if (!m->time_conv.cap_user_time_zero)
		problem(p, "timestamps cannot be converted to TSC (the kernel reported "
			"cap_user_time_zero 0, as on many virtual machines): decoders cannot "
			"line sideband up with the trace by time");
	check_streams(dirfd, m, p);
	check_images(dirfd, m, p);
	check_windows(dirfd, m, p);
}

/*
 * The decoder's line for trace file @trace of stream @i (NULL: the stream's
 * own), as one shell command; null for an empty one.
 */
static int put_decoder(json_t *obj, const char *key, const struct manifest *m, const char *dir,
		       int i, const char *trace, uint64_t bytes, enum decoder tool)
{
	char **argv, *line;
	int ret;

	if (!bytes || !trace)
		return json_object_set_new(obj, key, json_null());
	argv = decoder_secondary_apart(m) ? decoder_argv_own(m, dir, i, trace, tool) :
	       decoder_argv_trace(m, dir, i, trace, tool);
	line = argv ? decoder_shell_join(argv) : NULL;
	ret = line ? json_object_set_new(obj, key, utf8_json_string(line)) : -1;

	free(line);
	decoder_argv_free(argv);
	return ret;
}

/* The other streams' sideband that each ptxed line leaves out, said once (decoders.h). */
static int put_secondary(json_t *info, const struct manifest *m, const char *dir)
{
	char **argv = decoder_secondary_argv(m, dir), *line;
	int ret;

	line = argv ? decoder_shell_join(argv) : NULL;
	ret = line ? json_object_set_new(info, "ptxed_secondary", utf8_json_string(line)) : -1;
	free(line);
	decoder_argv_free(argv);
	return ret;
}

/* The snapshots as the manifest has them, each window with its decoder lines. */
static json_t *snapshots(const struct manifest *m, const char *dir)
{
	json_t *arr = json_array();

	for (int i = 0; arr && i < m->nr_snapshots; i++) {
		const struct msnapshot *sn = &m->snapshots[i];
		json_t *s = manifest_snapshot_to_json(sn), *ws = json_object_get(s, "windows");

		for (int j = 0; s && j < sn->nr_windows; j++) {
			const struct mwindow *w = &sn->windows[j];
			json_t *wj = json_array_get(ws, (size_t)j);
			int k = decoder_window_stream(m, w);

			if (put_decoder(wj, "ptxed", m, dir, k, k < 0 ? NULL : w->file, w->bytes,
					DECODER_PTXED) ||
			    put_decoder(wj, "ptdump", m, dir, k, k < 0 ? NULL : w->file, w->bytes,
					DECODER_PTDUMP)) {
				json_decref(s);
				s = NULL;
			}
		}
		if (!s || json_array_append_new(arr, s)) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* The manifest's own values, in its types; what info adds beside them. */
/* The manifest's JSON less its long lists, which info does not print (80,000 images: 50 MB). */
static json_t *manifest_head_json(const struct manifest *m)
{
	struct manifest head = *m;

	head.images = NULL;
	head.nr_images = 0;
	head.fires = NULL;
	head.nr_fires = 0;
	return manifest_to_json(&head);
}

static json_t *describe(const struct manifest *m, const char *dir, const struct problems *p)
{
	json_t *mj = manifest_head_json(m), *info, *streams, *problems;
	static const char *const keys[] = {
		"complete", "stop_reason", "target", "mode", "event", "attr", "filter",
		"start_time", "end_time", "snapshot", "triggers", "marks",
	};
	uint64_t total = 0;
	char buf[24];

	info = json_pack("{s:o}", "bundle", utf8_json_string(dir));
	streams = json_array();
	problems = json_array();
	if (!mj || !info || !streams || !problems)
		goto fail;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		json_object_set(info, keys[k], json_object_get(mj, keys[k]));
	/* The JIT perf maps copied (pid, file, bytes, cut), and those refused (pid, why). */
	if (m->nr_perf_maps)
		json_object_set(info, "perf_maps", json_object_get(mj, "perf_maps"));
	if (m->nr_perf_maps_refused)
		json_object_set(info, "perf_maps_refused", json_object_get(mj, "perf_maps_refused"));
	if (decoder_secondary_apart(m) && put_secondary(info, m, dir))
		goto fail;
	for (int i = 0; i < m->nr_streams; i++) {
		json_t *s = manifest_stream_to_json(&m->streams[i]);

		total += m->streams[i].bytes;
		if (!s || put_decoder(s, "ptxed", m, dir, i, m->streams[i].file, m->streams[i].bytes,
				      DECODER_PTXED) ||
		    put_decoder(s, "ptdump", m, dir, i, m->streams[i].file, m->streams[i].bytes,
				DECODER_PTDUMP) ||
		    json_array_append_new(streams, s))
			goto fail;
	}
	if (m->snapshot_mode && json_object_set_new(info, "snapshots", snapshots(m, dir)))
		goto fail;
	snprintf(buf, sizeof(buf), "%d", m->nr_fires);
	if (m->nr_triggers && json_object_set_new(info, "fires", json_string(buf)))
		goto fail;
	for (int i = 0; i < p->nr; i++)
		json_array_append_new(problems, utf8_json_string(p->msg[i]));
	snprintf(buf, sizeof(buf), "%" PRIu64, total);
	if (json_object_set_new(info, "streams", streams) ||
	    json_object_set_new(info, "total_bytes", json_string(buf)) ||
	    json_object_set_new(info, "problems", problems)) {
		json_decref(mj);
		json_decref(info);
		return NULL;
	}
	json_decref(mj);
	return info;
fail:
	json_decref(mj);
	json_decref(info);
	json_decref(streams);
	json_decref(problems);
	return NULL;
}

/* The decoding script, the bundle baked in as an absolute path for a script run elsewhere. */
static int print_script(const struct manifest *m, const char *dir)
{
	char *abs = realpath(dir, NULL), *text = decoder_script(m, abs ? abs : dir);

	free(abs);
	if (!text) {
		msg_err("info: out of memory");
		return EXIT_RUNTIME;
	}
	fputs(text, stdout);
	free(text);
	return cmd_flush_stdout();
}

int do_info(int argc, char **argv)
{
	bool script = false;
	struct problems p = { .nr = 0 };
	struct error e = { 0 };
	struct manifest m;
	const char *dir;
	json_t *info;
	int fd, ret;

	ret = cmd_parse_options(&info_spec, argc, argv, info_option, &script);
	if (ret != CMD_GO_ON)
		return ret;
	ret = EXIT_OK;
	if (argc - optind != 1)
		return cmd_bad_usage("info", "expected one bundle DIR");
	if (script && out_json)
		return cmd_bad_usage("info", "--script prints a shell script: it does not go with "
				     "--json");
	dir = argv[optind];
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		msg_err("info: %s: %s", dir, errno == ENOENT ? "no such directory" :
			"not a directory (give the bundle directory, e.g. ptcollect.data)");
		return EXIT_USAGE;
	}
	if (manifest_read(fd, dir, &m, &e)) {
		close(fd);
		if (e.code == -ENOENT)
			err_hint(&e, "not a ptcollect bundle, or the recording was killed before it "
				 "started; any .pt file in it is raw Intel PT");
		return cmd_error("info", &e);
	}
	check_bundle(fd, &m, &p);
	problems_close(&p);
	close(fd);
	if (script) {
		ret = print_script(&m, dir);
	} else if ((info = describe(&m, dir, &p))) {
		out_value(NULL, NULL, info);
		out_finish();
	} else {
		msg_err("info: out of memory");
		ret = EXIT_RUNTIME;
	}
	for (int i = 0; i < p.nr; i++) {
		msg_warn("info: %s", p.msg[i]);
		free(p.msg[i]);
	}
	manifest_free(&m);
	return ret;
}
