/* SPDX-License-Identifier: MIT */
/* A recording's events opened, their rings mapped, its bundle made and its streams' files. */
#ifndef PTC_SESSION_OPEN_H
#define PTC_SESSION_OPEN_H

#include "error.h"
#include "session_state.h"

/*
 * The streams' events, rings and files (the sideband alone in snapshot mode).
 * Returns 0 or a negative errno with @e (ESRCH: every target thread exited).
 */
int session_open_streams(struct session *s, struct error *e);

#endif
