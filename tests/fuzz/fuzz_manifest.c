// SPDX-License-Identifier: MIT
/*
 * manifest.json text through the library reader: it never crashes or leaks,
 * explains every refusal, and what it accepts writes back and reads back the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct error e = { 0 };
	struct manifest m, again;
	json_t *j;
	char *text;

	if (manifest_parse((const char *)data, size, &m, &e)) {
		if (!e.why[0])
			abort();
		return 0;
	}
	j = manifest_to_json(&m);
	text = j ? json_dumps(j, 0) : NULL;
	if (!text || manifest_parse(text, strlen(text), &again, &e))
		abort();	/* what the reader accepted, the writer must write readably */
	if (again.nr_streams != m.nr_streams || again.complete != m.complete ||
	    again.nr_images != m.nr_images || !again.sysroot != !m.sysroot)
		abort();
	for (int i = 0; i < m.nr_images; i++)
		if (again.images[i].has_inode != m.images[i].has_inode ||
		    again.images[i].ino != m.images[i].ino || !again.images[i].build_id !=
		    !m.images[i].build_id)
			abort();
	free(text);
	json_decref(j);
	manifest_free(&again);
	manifest_free(&m);
	return 0;
}
