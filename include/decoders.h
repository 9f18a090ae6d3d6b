/* SPDX-License-Identifier: MIT */
/*
 * The command lines of libipt's decoders for a bundle's streams, built from
 * the manifest and where the bundle is now. libipt applies options in order:
 * the CPU and timing configuration, then the sideband setup, the primary
 * sideband of this stream, the others, and last the trace.
 */
#ifndef PTC_DECODERS_H
#define PTC_DECODERS_H

#include <stdbool.h>

#include "manifest.h"

enum decoder {
	DECODER_PTXED,
	DECODER_PTDUMP,
};

/*
 * Whether the libipt ptcollect links knows the recorded CPU (its errata
 * table does); the lines say --cpu none when it does not, as a decoder that
 * does not know a CPU refuses it.
 */
bool decoder_cpu_known(const struct manifest *m);
/* NULL-terminated argv for stream @i of @m in the bundle @dir; NULL on ENOMEM. */
char **decoder_argv(const struct manifest *m, const char *dir, int i, enum decoder tool);
void decoder_argv_free(char **argv);

#endif
