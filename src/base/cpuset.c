// SPDX-License-Identifier: MIT
/* The online CPUs: the one place that decides which CPUs exist for a recording. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cpuset.h"
#include "fileio.h"
#include "pmu.h"

int cpuset_online(int *cpus, int *nr, struct error *e)
{
	char path[4200], *text;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", pmu_sysfs_root());
	ret = file_read_all(AT_FDCWD, path, 4096, &text, &len, e);
	if (!ret) {
		text[strcspn(text, "\n")] = '\0';
		ret = cli_parse_cpulist(text, cpus, nr, e);
		free(text);
		if (ret)
			err_what(e, "%s", path);
	}
	/* The system's file, not the user's input: missing, unreadable or garbled alike. */
	if (ret && e)
		e->usage = false;
	return ret;
}

void cpuset_format(const int *cpus, int nr, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < nr && n < len; i++) {
		int j = i;

		while (j + 1 < nr && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (j > i)
			n += (size_t)snprintf(out + n, len - n, "%s%d-%d", n ? "," : "", cpus[i],
					      cpus[j]);
		else
			n += (size_t)snprintf(out + n, len - n, "%s%d", n ? "," : "", cpus[i]);
		i = j;
	}
}
