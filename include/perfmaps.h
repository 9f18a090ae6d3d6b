/* SPDX-License-Identifier: MIT */
/*
 * The JIT perf maps of a recording: at its end, record copies the
 * /tmp/perf-PID.map of every process its sideband shows with anonymous
 * executable memory (JIT code: "//anon", "[anon:...]", "/memfd:...") into
 * the bundle's perf-maps/ (0700), each file 0600, and lists them in the
 * manifest (perf_maps). A map is read only from a regular file opened
 * without following a link, with no other name (no hard link), owned by the
 * process's user or root (as perf reads only its user's or root's) and
 * writable by its owner only, up to PERFMAP_MAX_FILE bytes (whole lines);
 * MANIFEST_MAX_PERF_MAPS maps at most. One refused is a warning and an entry
 * of the manifest's perf_maps_refused (pid, why).
 */
#ifndef PTC_PERFMAPS_H
#define PTC_PERFMAPS_H

#include <sys/types.h>

#include "error.h"
#include "manifest.h"

/*
 * Copy the maps of the processes @m's sideband files (in the bundle @dirfd)
 * show, from @tmpdir ("/tmp"; a test's directory), into @dirfd's
 * perf-maps/. @owner: the uid the traced processes run as (the workload's),
 * or PERFMAPS_OWNER_OF_PROCESS: each one's, the owner of its /proc entry
 * while it lives, ours (the effective uid) once it has gone. Returns the number copied; what could not be copied (a link,
 * not a regular file, a read or write error, past the bounds) is a warning
 * in @w, never an error: the recording stands without it.
 */
#define PERFMAPS_OWNER_OF_PROCESS ((uid_t)-1)

int perfmaps_copy(int dirfd, const char *tmpdir, uid_t owner, struct manifest *m,
		  struct warnings *w);

#endif
