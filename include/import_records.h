/* SPDX-License-Identifier: MIT */
/* A perf.data's records as an import reads them: perfdata_ops' two callbacks. */
#ifndef PTC_IMPORT_RECORDS_H
#define PTC_IMPORT_RECORDS_H

#include <stddef.h>

#include "error.h"
#include "import_state.h"
#include "perfdata.h"

/* A record (@ctx is the struct import). */
int import_on_record(void *ctx, const struct pd_record *r, struct error *e);

/* An AUXTRACE record's payload, @len bytes at @buf, to its stream's trace. */
int import_payload(void *ctx, const struct pd_record *r, const void *buf, size_t len,
		   struct error *e);

#endif
