/* SPDX-License-Identifier: MIT */
/* What an import's bundle holds besides the streams: the vdso, the recording described. */
#ifndef PTC_IMPORT_DESCRIBE_H
#define PTC_IMPORT_DESCRIBE_H

#include "error.h"
#include "import_state.h"

/* The vdso: given (--vdso), or in perf's build-id cache under the perf.data's build-id. */
int import_save_vdso(struct import *im, struct error *e);

/* The manifest's description of the recording, from the perf.data's header. */
int import_describe(struct import *im, struct error *e);

#endif
