// SPDX-License-Identifier: MIT
/* The vdso's bytes, copied from our own mapping. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fileio.h"
#include "vdso.h"

int vdso_save(int fd, struct error *e)
{
	unsigned long long lo = 0, hi = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int ret;

	if (!f)
		return err_runtime(e, -errno, "/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			break;
	fclose(f);
	if (!lo || hi <= lo)
		return err_runtime(e, -ENOENT, "this process has no [vdso] mapping");
	ret = write_all(fd, (const void *)(uintptr_t)lo, (size_t)(hi - lo));
	if (ret)
		return err_runtime(e, ret, "writing the vdso: %s", strerror(-ret));
	return 0;
}
