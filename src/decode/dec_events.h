/* SPDX-License-Identifier: MIT */
/* dec_events.c: libipt's events and errors, and gaps. */
#ifndef PTC_DEC_EVENTS_H
#define PTC_DEC_EVENTS_H

#include "dec.h"

void dec_gap(struct dec *x, const char *why);
void on_event(struct dec *x, const struct pt_event *ev);
bool direct_target(const struct pt_insn *in, uint64_t *to);
uint64_t error_ip(const struct pt_insn *in, int err);
void error_at(struct dec *x, const char *msg, uint64_t ip);
void on_error(struct dec *x, const char *what, int err, const struct pt_insn *in);

#endif
