/* SPDX-License-Identifier: MIT */
/*
 * The kernel's symbols as /proc/kallsyms lists them ("ADDR TYPE NAME" and
 * "\t[MODULE]" for a module's), read once, kept in file order, for every
 * user: the filter resolver (perf's rules for kernel filters) and the
 * kernel's image in a bundle (_text, _stext, _etext).
 */
#ifndef PTC_KALLSYMS_H
#define PTC_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct ksym {
	uint64_t addr;		/* 0 for every symbol when kptr_restrict hides them */
	char type;		/* as listed: T/t text, W/w weak, D/d data, ... */
	char *name;
	char *module;		/* "ext4" for "[ext4]"; NULL for the kernel itself */
};

struct kallsyms {
	struct ksym *syms;	/* in file order (which is not address order) */
	size_t nr;
};

/*
 * Read @path (a kallsyms file; opened with file_open_input(), so a FIFO is
 * refused). Lines that do not parse are skipped. Returns 0, or a negative
 * errno with @e (usage for a missing or special file, runtime otherwise).
 */
int kallsyms_load(struct kallsyms *k, const char *path, struct error *e);
/* The same with @path relative to the directory @dirfd. */
int kallsyms_load_at(struct kallsyms *k, int dirfd, const char *path, struct error *e);
void kallsyms_free(struct kallsyms *k);

/* The first symbol named @name (of the kernel itself, not of a module), or NULL. */
const struct ksym *kallsyms_find(const struct kallsyms *k, const char *name);

/* A function as perf counts them: type T or W, either case. */
bool ksym_is_function(const struct ksym *s);

/*
 * perf's find_kern_sym: the function @name of the kernel itself (module
 * symbols carry their module in perf's names, so a bare name never matches
 * them). @idx: -1 the only one, 0 the global one (#g), N the N'th in file
 * order (#N). *@start is its address; *@size runs to the next line of the
 * file with another address (0 when no line follows). Returns 0, -ENOENT
 * (none) or -EEXIST (more than one matches: ambiguous).
 */
int kallsyms_func(const struct kallsyms *k, const char *name, int idx, uint64_t *start,
		  uint64_t *size);

/*
 * perf's whole kernel ('*'): from the first function in file order to a
 * page past the highest function, @page bytes a page. Returns 0, -ENOENT (no
 * function) or -ERANGE (that end lies past 2^64).
 */
int kallsyms_text(const struct kallsyms *k, uint64_t page, uint64_t *start, uint64_t *size);

#endif
