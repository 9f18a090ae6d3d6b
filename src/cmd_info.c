// SPDX-License-Identifier: MIT
/* ptcollect info DIR: what a recording holds, what is missing, how to decode it. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "cmd.h"
#include "json.h"
#include "msg.h"
#include "out.h"

#define MAX_PROBLEMS 64

void usage_info(FILE *f)
{
	fprintf(f,
		"usage: %s info [--json] DIR\n\n"
		"Show what the bundle DIR holds (target, mode, filters, streams, bytes,\n"
		"losses, duration), what is missing from it (a recording cut short, a\n"
		"stream shorter than its manifest says, timestamps that cannot be\n"
		"converted), and the ptxed and ptdump command lines that decode each stream.\n",
		PTC_PROG);
}

struct problems {
	char *msg[MAX_PROBLEMS];
	int nr;
};

__attribute__((format(printf, 2, 3)))
static void problem(struct problems *p, const char *fmt, ...)
{
	va_list ap;

	if (p->nr == MAX_PROBLEMS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&p->msg[p->nr], fmt, ap) >= 0)
		p->nr++;
	va_end(ap);
}

static char *read_file(const char *path, size_t *len, int *err)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*err = 0;
	if (fd < 0 || fstat(fd, &st)) {
		*err = errno;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size) {
		*err = buf ? EIO : ENOMEM;
		free(buf);
		close(fd);
		return NULL;
	}
	close(fd);
	buf[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	return buf;
}

/* A command line a shell reads back as these arguments. */
static void shell_join(const struct json *argv, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (const struct json *a = argv ? argv->child : NULL; a && n < len; a = a->next) {
		const char *s = a->type == JSON_STRING ? a->string : "?";
		bool plain = *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					  "0123456789-_./:=,+@%") == strlen(s);

		n += snprintf(out + n, len - n, "%s", n ? " " : "");
		if (plain) {
			n += snprintf(out + n, len - n, "%s", s);
			continue;
		}
		n += snprintf(out + n, len - n, "'");
		for (; *s && n < len; s++)
			n += *s == '\'' ? snprintf(out + n, len - n, "'\\''") :
			     snprintf(out + n, len - n, "%c", *s);
		n += snprintf(out + n, len - n, "'");
	}
}

static void check_streams(const char *dir, const struct json *m, bool complete, struct problems *p)
{
	const struct json *streams = json_get(m, "streams");

	for (const struct json *s = streams ? streams->child : NULL; s; s = s->next) {
		const char *file = json_str(s, "file");
		uint64_t bytes = json_u64(s, "bytes", 0);
		const struct json *lost = json_get(s, "lost");
		char path[4200];
		struct stat st;

		if (!file)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		if (stat(path, &st)) {
			problem(p, "%s is missing", file);
			continue;
		}
		if ((uint64_t)st.st_size < bytes)
			problem(p, "%s has %llu bytes, the manifest says %" PRIu64 ": the file was cut "
				"short", file, (unsigned long long)st.st_size, bytes);
		else if ((uint64_t)st.st_size > bytes && !complete)
			problem(p, "%s holds %llu bytes, more than the %" PRIu64 " the manifest was last "
				"updated with", file, (unsigned long long)st.st_size, bytes);
		if (json_u64(lost, "truncated", 0))
			problem(p, "%s: %" PRIu64 " TRUNCATED record(s): the AUX buffer was full and "
				"trace is missing there (a larger -m ,AUX helps)", file,
				json_u64(lost, "truncated", 0));
		if (json_u64(lost, "lost", 0))
			problem(p, "%s: %" PRIu64 " LOST record(s): %" PRIu64 " sideband records were "
				"dropped (a larger -m DATA helps)", file, json_u64(lost, "lost", 0),
				json_u64(lost, "lost_records", 0));
		if (json_u64(lost, "sideband_full", 0))
			problem(p, "%s: the sideband ring filled %" PRIu64 " time(s): a stop of the "
				"hardware may have gone unrecorded there; it was restarted each time "
				"(a larger -m DATA helps)", file, json_u64(lost, "sideband_full", 0));
		if (json_u64(lost, "partial", 0) || json_u64(lost, "collision", 0))
			problem(p, "%s: %" PRIu64 " PARTIAL and %" PRIu64 " COLLISION record(s)", file,
				json_u64(lost, "partial", 0), json_u64(lost, "collision", 0));
	}
}

static void print_streams(const struct json *m)
{
	const struct json *streams = json_get(m, "streams");
	char line[16384];
	uint64_t total = 0;

	out_arr_begin("streams", "streams");
	for (const struct json *s = streams ? streams->child : NULL; s; s = s->next) {
		const struct json *lost = json_get(s, "lost");

		total += json_u64(s, "bytes", 0);
		out_obj_begin(NULL, NULL);
		out_str("file", NULL, json_str(s, "file"));
		out_str("sideband", NULL, json_str(s, "sideband"));
		out_u64("bytes", NULL, json_u64(s, "bytes", 0));
		out_u64("truncated", NULL, json_u64(lost, "truncated", 0));
		out_u64("lost", NULL, json_u64(lost, "lost", 0));
		shell_join(json_get(s, "ptxed"), line, sizeof(line));
		out_str("ptxed", NULL, line);
		shell_join(json_get(s, "ptdump"), line, sizeof(line));
		out_str("ptdump", NULL, line);
		out_obj_end();
	}
	out_arr_end();
	out_u64("total_bytes", "trace bytes", total);
}

int do_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct problems p = { .nr = 0 };
	const struct json *target, *attr, *tc;
	char path[4200], err[512];
	struct json *m;
	struct stat st;
	size_t len;
	char *text;
	bool complete;
	int c, e;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage_info(stdout);
			return EXIT_OK;
		}
		return cmd_bad_usage("info", "unknown option '%s'", argv[optind - 1]);
	}
	if (argc - optind != 1)
		return cmd_bad_usage("info", "expected one bundle DIR");
	if (stat(argv[optind], &st) || !S_ISDIR(st.st_mode)) {
		msg_err("info: %s: %s", argv[optind], errno == ENOENT ? "no such directory" :
			"not a directory (give the bundle directory, e.g. ptcollect.data)");
		return EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "%s/" BUNDLE_MANIFEST, argv[optind]);
	text = read_file(path, &len, &e);
	if (!text) {
		msg_err("info: %s: %s", path, strerror(e));
		if (e == ENOENT)
			msg_hint("not a ptcollect bundle, or the recording was killed before it "
				 "started; any .pt file in it is raw Intel PT");
		return EXIT_USAGE;
	}
	m = json_parse(text, len, err, sizeof(err));
	free(text);
	if (!m || m->type != JSON_OBJECT) {
		msg_err("info: %s: %s", path, m ? "not a JSON object" : err);
		json_free(m);
		return EXIT_USAGE;
	}
	if (!json_str(m, "format") || strcmp(json_str(m, "format"), BUNDLE_FORMAT)) {
		msg_err("info: %s: \"format\" is not \"%s\": not a ptcollect manifest", path,
			BUNDLE_FORMAT);
		json_free(m);
		return EXIT_USAGE;
	}
	if (json_u64(m, "version", 0) != BUNDLE_VERSION) {
		msg_err("info: %s: manifest version %" PRIu64 ", this ptcollect reads version %d",
			path, json_u64(m, "version", 0), BUNDLE_VERSION);
		json_free(m);
		return EXIT_USAGE;
	}
	complete = json_bool(m, "complete", false);
	if (!complete)
		problem(&p, "the recording did not finish cleanly (the collector was killed, or "
			"a write failed): streams may end early%s%s", json_str(m, "stop_reason") ?
			"; it stopped because: " : "", json_str(m, "stop_reason") ?
			json_str(m, "stop_reason") : "");
	tc = json_get(m, "time_conv");
	if (!json_bool(tc, "cap_user_time_zero", false))
		problem(&p, "timestamps cannot be converted to TSC (the kernel reported "
			"cap_user_time_zero 0, as on many virtual machines): decoders cannot "
			"line sideband up with the trace by time");
	check_streams(argv[optind], m, complete, &p);

	target = json_get(m, "target");
	attr = json_get(m, "attr");
	out_obj_begin(NULL, NULL);
	out_str("bundle", NULL, argv[optind]);
	out_bool("complete", NULL, complete);
	out_str("stop_reason", "stopped", json_str(m, "stop_reason"));
	out_str("target", NULL, json_str(target, "kind"));
	if (json_get(target, "exit_status") && json_get(target, "exit_status")->type == JSON_NUMBER)
		out_u64("exit_status", "workload exit status", json_u64(target, "exit_status", 0));
	out_str("mode", NULL, json_str(m, "mode"));
	out_str("config", NULL, json_str(attr, "config"));
	out_str("filter", NULL, json_str(m, "filter"));
	out_str("start_time", "started", json_str(m, "start_time"));
	out_str("end_time", "ended", json_str(m, "end_time"));
	print_streams(m);
	out_arr_begin("problems", "problems");
	for (int i = 0; i < p.nr; i++)
		out_str(NULL, NULL, p.msg[i]);
	out_arr_end();
	out_obj_end();
	out_finish();
	for (int i = 0; i < p.nr; i++) {
		msg_warn("info: %s", p.msg[i]);
		free(p.msg[i]);
	}
	json_free(m);
	return EXIT_OK;
}
