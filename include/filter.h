/* SPDX-License-Identifier: MIT */
/*
 * Address filters: perf's --filter grammar in, the kernel's filter string
 * (PERF_EVENT_IOC_SET_FILTER) out, resolved exactly as perf resolves it.
 *
 *   filter|start|stop|tracestop START[/SIZE|/END] [@FILE], separated by ',' or ' '
 *
 * START and END are function names (with "#N" for the N'th of that name, "#g"
 * for the global one), numbers, or "*" for the whole object. Without @FILE the
 * filter is a kernel one, resolved from kallsyms.
 */
#ifndef PTC_FILTER_H
#define PTC_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#define FILTER_MAX	32	/* more than any PMU has ranges */

struct filter_opts {
	bool kernel;			/* the event traces the kernel */
	bool task_target;		/* a command, -p or -t (file filters need one) */
	int nr_addr_filters;		/* the PMU's nr_addr_filters, -1 when unknown */
	int num_address_ranges;		/* caps/num_address_ranges, -1 when unknown */
	const char *kallsyms;		/* NULL: /proc/kallsyms */
};

/* One filter as written. */
struct filter_item {
	char action[16];		/* "filter", "start", "stop", "tracestop" */
	bool start_is_sym, end_is_sym, range;
	char *start_sym, *end_sym, *file;
	unsigned long long start, size;	/* numbers as written */
	int start_idx, end_idx;		/* -1 none, 0 "#g", N "#N" */
	int pos, len;			/* where it is in the spec */
};

struct filter_list {
	int nr;
	struct filter_item items[FILTER_MAX];
};

/* Syntax only. Returns 0 or -EINVAL with errmsg showing where it broke. */
int filter_parse(const char *spec, struct filter_list *l, char *errmsg, size_t errlen);
void filter_list_free(struct filter_list *l);

/*
 * Parse, check against the PMU and the target, resolve, and return the kernel
 * string in *kernel_str (malloc'd). Returns 0, or -EINVAL (bad input: exit 2)
 * or another negative errno, with errmsg. Opens nothing but ELF files and
 * kallsyms.
 */
int filter_build(const char *spec, const struct filter_opts *o, char **kernel_str,
		 char *errmsg, size_t errlen);

#endif
