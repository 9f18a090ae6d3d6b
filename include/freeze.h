/* SPDX-License-Identifier: MIT */
/*
 * Early freezes for snapshot triggers: one thread pinned to each traced CPU
 * waits on the triggers' descriptor and, the moment a fire is there, stops
 * its own CPU's stream. The stop is then a call on that CPU (no
 * cross-CPU interrupt) by a thread the fire wakes there, which is what ends
 * a snapshot window soonest after the fire; the session's loop then takes
 * the snapshot as usual (stopping a stopped stream changes nothing).
 *
 * After the loop has acted on fires it releases the freezer
 * (freeze_release()): a thread that wakes after that for the fires acted on
 * does nothing, and a stream stopped early that no snapshot started again is
 * started then, so no freeze outlives the fires it was for. The threads
 * never wait for the loop, nor the loop for them.
 */
#ifndef PTC_FREEZE_H
#define PTC_FREEZE_H

#include <stdbool.h>

#include "error.h"
#include "stream.h"

struct freezer;

/* A thread per stream of @streams (per-CPU streams only), watching @trigger_fd. */
int freeze_start(struct freezer **fz, struct stream *streams, int n, int trigger_fd,
		 struct error *e);
/*
 * The loop has acted: streams stopped early start again when @resume (tracing
 * goes on), and the threads watch for the next fire.
 */
void freeze_release(struct freezer *fz, bool resume);
/* End and join the threads (NULL: nothing to do). */
void freeze_stop(struct freezer *fz);

#endif
