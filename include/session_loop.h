/* SPDX-License-Identifier: MIT */
/* A recording's loop: the rings drained, the signals, the timer, the triggers and the control. */
#ifndef PTC_SESSION_LOOP_H
#define PTC_SESSION_LOOP_H

#include <stdbool.h>

#include "error.h"
#include "snapshot.h"
#include "steer.h"
#include "session_state.h"

/* The signals the loop hears (blocked until the process exits) and its one-second timer. */
int session_setup_signals(struct session *s, struct error *e);

/* What the triggers, the control channel and SIGUSR2 ask for, done on @s. */
struct steer_ops session_steer_ops(struct session *s);

/* Until a stop condition; 0, or a negative errno with @e when poll fails. */
int session_loop(struct session *s, struct error *e);

/* A pass over every stream's ring (@final: the last, after the hardware stopped). */
void session_drain_all(struct session *s, bool final);

/* A snapshot now (@arg is the session); its number, or a negative errno with @e. */
int session_act_snapshot(void *arg, const struct snapshot_cause *why, struct error *e);

/* The sideband (proc.pevent) of the processes running before tracing began. */
void session_synthesize_running(struct session *s);

#endif
