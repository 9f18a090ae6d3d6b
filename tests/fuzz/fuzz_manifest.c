// SPDX-License-Identifier: MIT
/* manifest.json text: the JSON reader never crashes or leaks, and explains refusals. */
#include <stdint.h>
#include <stdlib.h>

#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	struct json *j = json_parse((const char *)data, size, err, sizeof(err));

	if (!j) {
		if (!err[0])
			abort();
		return 0;
	}
	json_u64(j, "version", 0);
	json_str(j, "format");
	json_bool(json_get(j, "time_conv"), "cap_user_time_zero", false);
	json_free(j);
	return 0;
}
