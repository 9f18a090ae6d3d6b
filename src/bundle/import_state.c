// SPDX-License-Identifier: MIT
/* An import's state freed: its streams' files closed, their buffers, the manifest, the reader. */
#include <stdlib.h>
#include <unistd.h>

#include "bundle.h"
#include "import_state.h"
#include "manifest.h"
#include "perfdata.h"

void import_state_free(struct import *im)
{
	for (int i = 0; i < im->nr_streams; i++) {
		struct istream *s = im->streams[i];

		if (s->s.trace_fd >= 0)
			close(s->s.trace_fd);
		if (s->s.sb_fd >= 0)
			close(s->s.sb_fd);
		free(s->sb.buf);
		free(s->chunks);
		free(s);
	}
	free(im->streams);
	if (im->have_proc && im->proc.fd >= 0)
		close(im->proc.fd);
	free(im->proc.buf);
	manifest_free(&im->m);
	perfdata_close(im->pd);
	bundle_free(im->b);
	free(im);
}
