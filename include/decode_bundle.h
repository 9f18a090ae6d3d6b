/* SPDX-License-Identifier: MIT */
/*
 * decode DIR: a bundle's manifest fills the same configuration the command
 * line fills, with what its printed ptxed lines carry (decoders.h): the CPU
 * and timing configuration, sample_type, kernel start, the vdso, the time
 * conversion, and per stream its .pevent as primary sideband and every other
 * stream's and proc.pevent as secondaries. Two things more than the ptxed
 * line: the kernel's text goes into every process's image (a --raw would be
 * left behind at the first context switch), and DIR/sysroot, when there, is
 * tried before the paths the records name.
 */
#ifndef PTC_DECODE_BUNDLE_H
#define PTC_DECODE_BUNDLE_H

#include <stddef.h>

#include "decode_config.h"
#include "error.h"

/*
 * Fill @c from the bundle @dir: its streams named in @names (@nr of them:
 * "cpu0" or "cpu0.pt"), or every stream that holds trace when @nr is 0.
 * Returns the number of streams, or a negative errno with @e (not a bundle,
 * a stream it does not have).
 */
int decode_bundle(struct decode_config *c, const char *dir, char *const *names, size_t nr,
		  struct error *e);

#endif
