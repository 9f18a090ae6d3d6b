// SPDX-License-Identifier: MIT
/*
 * A JIT in miniature: writes a function (mov eax, 42; ret) into an
 * anonymous mapping, makes it executable, names it in /tmp/perf-PID.map as
 * the JVM, V8 and LuaJIT do ("START SIZE NAME" in hex), and calls it.
 *
 *	jitprog [map|link|none] [CALLS|stdin]
 *
 * map (the default) writes the perf map; link plants /tmp/perf-PID.map as a
 * symbolic link to /proc/self/environ instead (what a collector must not
 * follow); none writes no map. With "stdin" it prints "ready" once
 * the code and the map are in place and calls the function until stdin is
 * closed (then exits 0); else it calls it CALLS times (default 1000) and
 * prints the sum.
 * The map stays after the exit, as a JIT's does: the caller removes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const unsigned char code[] = { 0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3 };

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "map";
	const char *calls = argc > 2 ? argv[2] : "1000";
	char path[64];
	long sum = 0, n;
	int (*fn)(void);
	void *mem;

	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!strcmp(how, "map")) {
		FILE *f = fopen(path, "w");

		if (!f)
			return 1;
		fprintf(f, "%lx %zx jit_answer\n", (unsigned long)mem, sizeof(code));
		if (fclose(f))
			return 1;
	} else if (!strcmp(how, "link")) {
		if (symlink("/proc/self/environ", path))
			return 1;
	}
	*(void **)&fn = mem;
	if (!strcmp(calls, "stdin")) {
		char buf[16];

		printf("ready\n");
		fflush(stdout);
		while (read(0, buf, sizeof(buf)) > 0)
			sum += fn();
		return sum % 42;	/* 0; stdout is closed by now */
	} else {
		for (n = strtol(calls, NULL, 10); n > 0; n--)
			sum += fn();
	}
	printf("sum %ld\n", sum);
	return 0;
}
