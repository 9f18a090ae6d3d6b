/* SPDX-License-Identifier: MIT */
/* The CPUs that are online, as sysfs lists them (under $PTCOLLECT_SYSFS when set). */
#ifndef PTC_CPUSET_H
#define PTC_CPUSET_H

#include <stddef.h>

#include "error.h"

/* devices/system/cpu/online into @cpus (CLI_MAX_CPUS entries). 0 or -errno with @e. */
int cpuset_online(int *cpus, int *nr, struct error *e);
/* "0-3,6" from an ascending list. */
void cpuset_format(const int *cpus, int nr, char *out, size_t len);

#endif
