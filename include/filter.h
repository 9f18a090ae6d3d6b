/* SPDX-License-Identifier: MIT */
/*
 * Address filters in perf's grammar,
 *	filter|start|stop|tracestop START[/SIZE|/END] [@FILE]
 * separated by commas or spaces, resolved to the string the kernel takes
 * through PERF_EVENT_IOC_SET_FILTER exactly as perf resolves it: symbols
 * (with #N / #g selectors) to file offsets and sizes, '*' to the whole
 * object, kernel symbols from kallsyms, tracestop sent as a ranged stop.
 * Then what the intel_pt driver would refuse is refused here, by name.
 */
#ifndef PTC_FILTER_H
#define PTC_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct filter_opts {
	bool traces_kernel;	/* the event does not exclude the kernel */
	bool task_target;	/* a workload, -p or -t: file filters need one */
	int nr_addr_filters;	/* the PMU's nr_addr_filters */
	int num_address_ranges;	/* caps/num_address_ranges, -1 when absent */
	const char *kallsyms;	/* default /proc/kallsyms */
};

/*
 * Resolve @spec. Returns 0 with *@kernel_str (malloc'd), or a negative errno
 * with @e: a usage error for bad input (exit 2), a runtime error otherwise.
 * Warnings that do not stop the recording go to @w (may be NULL).
 */
int filter_build(const char *spec, const struct filter_opts *o, char **kernel_str,
		 struct error *e, struct warnings *w);

/*
 * The kernel's filter string (filter_build()'s: "filter 0xA/0xS" or "stop 0xA/0xS",
 * "@FILE" after a file's, joined by commas) as the intel_pt driver programs it:
 * range n from filter n, cfg[n] IA32_RTIT_CTL.ADDRn_CFG (1: FilterEn, 2: TraceStop),
 * a[n] and b[n] IA32_RTIT_ADDRn_A/B (both inclusive).
 */
struct filter_ranges {
	int nr;
	unsigned int cfg[4];
	uint64_t a[4], b[4];
};

/*
 * Fill @r from @kernel_str when every filter in it is a range of addresses (the
 * kernel's): 1. A filter on a file is at other addresses in each process, so
 * one set of ranges does not describe it: 0, as for none, or a string this
 * does not read.
 */
int filter_ranges(const char *kernel_str, struct filter_ranges *r);

#endif
