/* SPDX-License-Identifier: MIT */
/* A recording's ending: its last snapshot and drain, the workload ended, the last manifest. */
#ifndef PTC_SESSION_END_H
#define PTC_SESSION_END_H

#include "error.h"
#include "session_state.h"

/* The last snapshot, then stop the hardware, take what it wrote, end the workload. */
void session_end(struct session *s);

/* -p with breakpoints: its threads let go (again: nothing). */
void session_release_process(struct session *s);

/* The bundle's last manifest, after @ret (returned, or the manifest's failure with @e). */
int session_finish(struct session *s, int ret, struct error *e);

#endif
