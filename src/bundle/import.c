// SPDX-License-Identifier: MIT
/*
 * perf.data (intel_pt) to a bundle: trace by stream in buffer order, sideband
 * converted, manifest. The records are import_records', the streams'
 * files import_streams', the vdso and the description import_describe's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "import.h"
#include "import_describe.h"
#include "import_records.h"
#include "import_state.h"
#include "import_streams.h"
#include "manifest.h"
#include "perfdata.h"

/* ---- the whole ---------------------------------------------------------- */

static int run(struct import *im, struct error *e)
{
	static const struct perfdata_ops ops = { import_on_record, import_payload };
	int ret;

	ret = perfdata_read(im->pd, &ops, im, e);
	if (!ret && !im->have_info) {
		ret = err_usage(e, "no AUXTRACE_INFO record: this perf.data holds no Intel PT "
				"trace (record with -e intel_pt//)");
		err_what(e, "%s", im->o->input);
	}
	ret = ret ?: import_finish_streams(im, e);
	ret = ret ?: import_save_vdso(im, e);
	ret = ret ?: import_describe(im, e);
	ret = ret ?: bundle_write_manifest(im->b, &im->m, e);
	return ret;
}

int import_perfdata(const struct import_opts *o, struct import_stats *st, struct warnings *w,
		    struct error *e)
{
	struct import *im = calloc(1, sizeof(*im));
	int ret;

	memset(st, 0, sizeof(*st));
	if (!im)
		return err_runtime(e, -ENOMEM, "out of memory");
	im->o = o;
	im->st = st;
	im->w = w;
	im->proc.fd = -1;
	manifest_init(&im->m);
	if (!faccessat(AT_FDCWD, o->dir, F_OK, AT_SYMLINK_NOFOLLOW)) {
		ret = err_usage_code(e, -EEXIST, "it exists: import makes a new bundle");
		err_what(e, "%s", o->dir);
		err_hint(e, "give a name that does not exist yet");
		import_state_free(im);
		return ret;
	}
	ret = perfdata_open(&im->pd, o->fd, o->input, e);
	st->pipe = im->pd && perfdata_pipe_mode(im->pd);
	/* DIR appears whole at the end, or not at all: see bundle_create_staged(). */
	ret = ret ?: bundle_create_staged(&im->b, o->dir, e);
	ret = ret ?: run(im, e);
	ret = ret ?: bundle_publish(im->b, e);
	if (ret)
		bundle_discard(im->b);
	import_state_free(im);
	return ret;
}
