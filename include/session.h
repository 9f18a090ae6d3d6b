/* SPDX-License-Identifier: MIT */
/*
 * A recording: carries out a plan. Opens the plan's events, maps their
 * rings, makes the bundle, runs the workload, drains until a stop condition
 * and closes everything cleanly. It decides nothing the plan decided, and it
 * prints nothing: problems that do not stop it and the once-a-second figures
 * go to the caller's callbacks, the rest is in the result.
 */
#ifndef PTC_SESSION_H
#define PTC_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "plan.h"
#include "session_state.h"

/*
 * Returns 0 when the recording completed (possibly with losses it counted),
 * else a negative errno with @e; when @res->began the bundle keeps what was
 * captured and its manifest says what is missing.
 */
int session_run(const struct plan *p, const struct session_ops *ops,
		struct session_result *res, struct error *e);
void session_result_free(struct session_result *res);

#endif
