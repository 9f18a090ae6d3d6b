// SPDX-License-Identifier: MIT
/*
 * `ptcollect dump` end to end on any bytes: the command reads the input as a
 * .pt trace (with and without ptdump's options) and as a .pevent file, and
 * prints it as text and as JSON, so the printers run on every packet and
 * record the parsers let through. It never crashes or leaks. The text a
 * terminal would get (escaped) is checked on the input itself: no control
 * character is left. (tests/fuzz/run discards stdout and stderr.)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "out.h"
#include "printable.h"

static char pt[64], pevent[64];

static void cleanup(void)
{
	unlink(pt);
	unlink(pevent);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(pt, sizeof(pt), "/tmp/ptc-fuzz-dump-%d.pt", (int)getpid());
	snprintf(pevent, sizeof(pevent), "/tmp/ptc-fuzz-dump-%d.pevent", (int)getpid());
	atexit(cleanup);
	return 0;
}

static void put(const char *p, const uint8_t *data, size_t size)
{
	FILE *f = fopen(p, "w");

	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
}

static void dump(char **argv)
{
	int argc = 0, ret;

	while (argv[argc])
		argc++;
	out_init(stdout, false);
	ret = do_dump(argc, argv);
	if (ret < 0 || ret > 2)
		abort();
}

/* What a terminal gets: no control character but the escapes' backslashes. */
static void check_printable(const uint8_t *data, size_t size)
{
	char *s = strndup((const char *)data, size), *p = s ? printable(s) : NULL;

	for (char *c = p; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			abort();
	free(p);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *a[] = { "dump", pt, NULL };
	char *b[] = { "dump", "--json", pt, NULL };
	char *c[] = { "dump", "--raw", "--lastip", "--exec-mode", "--no-sync", "--no-offset", pt,
		      NULL };
	char *d[] = { "dump", pevent, NULL };
	char *e[] = { "dump", "--json", "--sample-type", "0x10086", pevent, NULL };

	put(pt, data, size);
	put(pevent, data, size);
	dump(a);
	dump(b);
	dump(c);
	dump(d);
	dump(e);
	fflush(stdout);
	check_printable(data, size);
	return 0;
}
