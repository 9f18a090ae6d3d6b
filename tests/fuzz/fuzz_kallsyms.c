// SPDX-License-Identifier: MIT
/*
 * kallsyms text: the reader never reads past a line or the file, keeps only
 * lines it could parse whole, and perf's lookups on what it kept never crash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kallsyms.h"

static void lookups(const struct kallsyms *k)
{
	uint64_t start, size;

	kallsyms_text(k, 4096, &start, &size);
	for (size_t i = 0; i < k->nr && i < 16; i++) {
		const struct ksym *s = &k->syms[i];
		const struct ksym *f = kallsyms_find(k, s->name);

		if (!s->name[0] || (s->module && !s->module[0]))
			abort();	/* kept lines have a name, and a module only with one */
		if (!s->module && (!f || strcmp(f->name, s->name)))
			abort();	/* the kernel's own symbols are found by name */
		for (int idx = -1; idx <= 2; idx++) {
			int ret = kallsyms_func(k, s->name, idx, &start, &size);

			if (ret && ret != -ENOENT && ret != -EEXIST)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct error e = { 0 };
	struct kallsyms k;

	if (fd < 0) {
		fd = memfd_create("kallsyms", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	if (kallsyms_load(&k, path, &e)) {
		if (!e.why[0])
			abort();	/* a refusal says why */
		return 0;
	}
	lookups(&k);
	kallsyms_free(&k);
	return 0;
}
