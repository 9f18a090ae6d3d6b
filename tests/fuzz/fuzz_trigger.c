// SPDX-License-Identifier: MIT
/*
 * --trigger specs: parse every input; those naming "SELF" as the file are
 * resolved against this fuzz binary (symbols, +OFF on instruction starts).
 * Never crash or leak; every refusal is a usage error that quotes the spec.
 * The input's first byte also goes to --trigger-count's parser as text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trigger_spec.h"

static void check_count(const char *text)
{
	struct error e = { 0 };
	uint64_t n = 0;

	if (trigger_count_parse(text, &n, &e)) {
		if (!e.usage || !e.why[0])
			abort();
	} else if (n == 0) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[512], *self;
	struct trigger_spec s;
	struct warnings w = { 0 };
	struct error e = { 0 };

	if (size >= sizeof(text) - 32)
		size = sizeof(text) - 33;
	memcpy(text, data, size);
	text[size] = '\0';
	check_count(text);
	/* "uprobe:SELF:..." names this binary, wherever it is. */
	self = strstr(text, ":SELF:");
	if (self) {
		char rest[512];

		strcpy(rest, self + 6);
		snprintf(self, sizeof(text) - (size_t)(self - text), ":/proc/self/exe:%s", rest);
	}
	if (trigger_spec_parse(text, &s, &e)) {
		if (!e.usage || !strstr(e.why, text))
			abort();
		return 0;
	}
	if (!s.symbol[0] || !s.file[0])
		abort();
	if (self && trigger_spec_resolve(&s, &e, &w) == 0 && (!s.resolved || !s.path))
		abort();
	if (self && !s.resolved && !e.why[0])
		abort();
	trigger_spec_free(&s);
	return 0;
}
