/* SPDX-License-Identifier: MIT */
/* The [vdso]: code every process runs that exists in no file, saved as one for decoders. */
#ifndef PTC_VDSO_H
#define PTC_VDSO_H

#include "error.h"

/* Write this process's [vdso] (the same for every 64-bit process of this kernel) to @fd. */
int vdso_save(int fd, struct error *e);

#endif
