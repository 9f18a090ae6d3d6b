// SPDX-License-Identifier: MIT
/* ptcollect archive DIR: the mapped files into the bundle, so it decodes on any machine. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "cmd.h"
#include "manifest.h"
#include "msg.h"
#include "out.h"

void usage_archive(FILE *f)
{
	fprintf(f,
		"usage: %s archive [--json] DIR\n\n"
		"Copy every file the sideband of the bundle DIR maps (executables,\n"
		"libraries) into DIR/sysroot at its path, and the kernel's text when the\n"
		"kernel was traced, so that the decoder lines of 'ptcollect info' work on\n"
		"any machine. Run it where the recording was made. A file is copied only\n"
		"when its build-id is the one recorded when it was mapped; a file that\n"
		"changed is named and left out, and the rest is copied (exit status 1).\n\n",
		PTC_PROG);
	cmd_print_options(f, archive_spec.options);
}

static const struct cmd_option archive_options[] = {
	CMD_OPT_JSON("the result as JSON"),
	CMD_OPT_HELP,
	CMD_OPT_END,
};

const struct cmd_spec archive_spec = { "archive", archive_options, usage_archive, false };

static void print_result(const char *dir, const struct archive_result *r)
{
	out_obj_begin(NULL, NULL);
	out_str("bundle", NULL, dir);
	out_str("sysroot", NULL, "sysroot");
	out_u64("copied", NULL, r->copied);
	out_u64("kept", "already there", r->kept);
	out_u64("unchecked", "copied unchecked", r->unchecked);
	out_u64("refused", "not archived", r->refused);
	out_bool("kernel_text", "kernel text taken", r->kernel_text);
	out_arr_begin("problems", NULL);
	for (int i = 0; i < r->nr_items; i++)
		out_str(NULL, NULL, r->items[i].msg);
	out_arr_end();
	out_obj_end();
}

/* Archive @dir; @report: the results on stdout (archive), else a note on stderr (record). */
static int archive_dir(const char *dir, bool report)
{
	struct archive_result r;
	struct error e = { 0 };
	struct manifest m;
	int fd, lock, ret;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		msg_err("archive: %s: %s", dir, errno == ENOENT ? "no such directory" :
			"not a directory (give the bundle directory, e.g. ptcollect.data)");
		return EXIT_USAGE;
	}
	/* Held from the read to the write: no other writer's manifest is overwritten. */
	lock = manifest_lock(fd, dir, &e);
	manifest_init(&m);
	ret = lock < 0 ? lock : manifest_read(fd, dir, &m, &e);
	if (!ret)
		ret = archive_bundle(fd, dir, &m, &r, &e);
	if (lock >= 0)
		close(lock);
	close(fd);
	manifest_free(&m);
	if (ret)
		return cmd_error("archive", &e);
	for (int i = 0; i < r.nr_items; i++)
		msg_warn("archive: %s", r.items[i].msg);
	if (report) {
		print_result(dir, &r);
		ret = out_finish() ? EXIT_RUNTIME : cmd_flush_stdout();
	} else {
		msg_note("archive: %u file(s) copied into %s/sysroot, %u already there, %u not "
			 "archived%s", r.copied, dir, r.kept, r.refused,
			 r.kernel_text ? "; the kernel's text taken" : "");
	}
	if (!ret && r.refused)
		ret = EXIT_RUNTIME;
	archive_result_free(&r);
	return ret;
}

int cmd_archive_bundle(const char *dir)
{
	return archive_dir(dir, false);
}

int do_archive(int argc, char **argv)
{
	int ret = cmd_parse_options(&archive_spec, argc, argv, NULL, NULL);

	if (ret != CMD_GO_ON)
		return ret;
	if (argc - optind != 1)
		return cmd_bad_usage("archive", "expected one bundle DIR");
	return archive_dir(argv[optind], true);
}
