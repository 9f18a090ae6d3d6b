// SPDX-License-Identifier: MIT
/* The vdso's bytes, copied from our own mapping. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fileio.h"
#include "procfs.h"
#include "vdso.h"

int vdso_save(int fd, struct error *e)
{
	uint64_t lo = 0, hi = 0;
	char line[4096 + 256];
	FILE *f = fopen("/proc/self/maps", "re");
	struct procfs_map m;
	int ret;

	if (!f)
		return err_runtime(e, -errno, "/proc/self/maps: %s", strerror(errno));
	while (!lo && fgets(line, sizeof(line), f))
		if (procfs_maps_line(line, &m) && !strcmp(m.name, "[vdso]"))
			lo = m.start, hi = m.end;
	fclose(f);
	if (!lo || hi <= lo)
		return err_runtime(e, -ENOENT, "this process has no [vdso] mapping");
	ret = write_all(fd, (const void *)(uintptr_t)lo, (size_t)(hi - lo));
	if (ret)
		return err_runtime(e, ret, "writing the vdso: %s", strerror(-ret));
	return 0;
}
