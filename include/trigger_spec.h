/* SPDX-License-Identifier: MIT */
/*
 * --trigger SPEC and --trigger-count N, as typed:
 *
 *	uprobe:FILE:SYMBOL[+OFF][=ACTION]	a BPF program on a uprobe
 *	breakpoint:FILE:SYMBOL[+OFF][=ACTION]	a perf hardware breakpoint
 *	ACTION = snapshot | start | stop | mark
 *
 * FILE ends at the first ':' after the kind (a path with ':' cannot be
 * named); SYMBOL is the rest, so C++ names ("ns::f(int)") work. '=ACTION' is
 * taken from the end when a lowercase word follows the last '='; '+OFF' when
 * a number follows the last '+' ("operator+(...)" stays a name). Parsing
 * checks the syntax; resolving loads FILE's symbols (as address filters do)
 * and finds the probe's file offset. Errors are usage errors whose why
 * quotes the spec; the caller puts the option in front (err_what()).
 */
#ifndef PTC_TRIGGER_SPEC_H
#define PTC_TRIGGER_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

enum trigger_kind {
	TRIGGER_UPROBE,
	TRIGGER_BREAKPOINT,
};

enum trigger_action {
	TRIGGER_ACT_DEFAULT,	/* none written: the caller decides (snapshot in -S mode) */
	TRIGGER_ACT_SNAPSHOT,
	TRIGGER_ACT_START,
	TRIGGER_ACT_STOP,
	TRIGGER_ACT_MARK,
};

struct trigger_spec {
	char *text;		/* the spec as written */
	enum trigger_kind kind;
	enum trigger_action action;
	char *file;		/* as written */
	char *symbol;
	uint64_t sym_off;	/* +OFF, 0 when absent */
	/* Filled by trigger_spec_resolve(): */
	bool resolved;
	char *path;		/* realpath of FILE */
	uint64_t offset;	/* file offset of the probe (symbol's + OFF) */
	uint64_t addr;		/* its link-time address (st_value + OFF) */
	bool fallback;		/* written breakpoint:, armed as a uprobe (script_fall_back()) */
};

/*
 * Syntax only. 0, or -EINVAL (usage) / -ENOMEM with @e. After a 0, free
 * @s with trigger_spec_free() whatever trigger_spec_resolve() returns.
 */
int trigger_spec_parse(const char *text, struct trigger_spec *s, struct error *e);
/* Find SYMBOL in FILE: 0, or a usage error naming the symbol and the nearest names. */
int trigger_spec_resolve(struct trigger_spec *s, struct error *e, struct warnings *w);
void trigger_spec_free(struct trigger_spec *s);

/* --trigger-count N: N >= 1. 0 or -EINVAL with @e. */
int trigger_count_parse(const char *text, uint64_t *n, struct error *e);

const char *trigger_kind_name(enum trigger_kind k);
/* "snapshot", ...; "default" for TRIGGER_ACT_DEFAULT. */
const char *trigger_action_name(enum trigger_action a);

#endif
