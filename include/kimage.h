/* SPDX-License-Identifier: MIT */
/*
 * The kernel's image for decoding kernel addresses: a copy of kallsyms, where
 * the kernel starts, and with --kcore its text as the running kernel has it
 * (alternatives and static keys applied), from /proc/kcore, as perf's --kcore.
 */
#ifndef PTC_KIMAGE_H
#define PTC_KIMAGE_H

#include <stdint.h>

#include "error.h"

struct kimage {
	uint64_t start;			/* _text, else _stext: libipt's kernel-start */
	uint64_t text_start, text_end;	/* _stext, _etext */
};

/*
 * Copy @kallsyms (normally /proc/kallsyms) to the new file @fd and find the
 * kernel's addresses in it. -EPERM when the addresses are hidden (kptr_restrict).
 */
int kimage_save_kallsyms(const char *kallsyms, int fd, struct kimage *k, struct error *e);
/*
 * Whether the running kernel (@running, normally /proc/kallsyms) is the one
 * whose kallsyms the bundle @dirfd keeps as @saved: the kernel's own symbols
 * (not its modules') are the same, at the same addresses, so its text is.
 * Fills @k from @running. 0 when it is; -ESTALE when not, -EPERM when the
 * addresses are hidden, or another negative errno, each with @e.
 */
int kimage_same_kernel(int dirfd, const char *saved, const char *running, struct kimage *k,
		       struct error *e);
/* Write the text between _stext and _etext from @kcore (an ELF core file) to @fd. */
int kimage_save_text(const char *kcore, int fd, const struct kimage *k, struct error *e);

#endif
