/* SPDX-License-Identifier: MIT */
/*
 * Function symbols of an ELF file, as perf loads them for address filters:
 * .symtab (of the file, or of its debug file found through the build-id or
 * .gnu_debuglink under /usr/lib/debug, used only when its build-id and the
 * link's CRC say it is of the same build, as gdb and libdw check), else
 * .dynsym; FUNC and GNU_IFUNC
 * symbols that are defined, aliases included; sorted by address. Each has
 * its file offset, through the PT_LOAD segment that holds it.
 */
#ifndef PTC_SYMBOLS_H
#define PTC_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct symbol {
	char *name;		/* demangled for C++, as perf names it: "ns::bar(int)" */
	uint64_t addr;		/* st_value */
	uint64_t size;		/* st_size */
	uint64_t offset;	/* file offset of addr */
	uint64_t seg_start;	/* file offset where its segment's mapping starts (page aligned) */
	uint64_t seg_end;	/* file offset where its PT_LOAD segment's file bytes end */
	char bind;		/* 'g' global, 'l' local, 'w' weak */
	bool size_unknown;	/* st_size is 0: where it ends is not known */
	size_t index;		/* in the symbol table */
};

struct symtab {
	char path[4096];	/* realpath of the file */
	char table[16];		/* ".symtab" or ".dynsym" */
	char debug_file[4096];	/* where .symtab came from, if not the file itself */
	uint64_t file_size;
	struct symbol *syms;
	size_t nr;
};

/*
 * Load the function symbols of @file (opened with file_open_input(): a FIFO
 * is refused, never waited on). Returns 0, or a negative errno with @e:
 * usage errors -ENOENT (no such file), -EINVAL (not a regular file), -ENOEXEC
 * (not ELF), -EBADMSG (a corrupt ELF: section headers that do not fit the
 * file), -ENODATA (no symbols; with a hint), runtime errors otherwise.
 * Problems that do not stop the load (a debug file that does not belong to
 * @file) go to @w, which may be NULL.
 */
int symbols_load(struct symtab *t, const char *file, struct error *e, struct warnings *w);
/*
 * The same, with the separate debug file looked for under @root (a sysroot:
 * ROOT/usr/lib/debug/.build-id/..., ROOT/usr/lib/debug/DIR/NAME for the
 * .gnu_debuglink, DIR the file's own below ROOT) before this machine's; NULL
 * as symbols_load().
 */
int symbols_load_root(struct symtab *t, const char *file, const char *root, struct error *e,
		      struct warnings *w);
void symbols_free(struct symtab *t);

/*
 * The GNU build-id of @path in lowercase hex, from its PT_NOTE segments as
 * the kernel reads it, else from its note sections: 0, -ENOENT, -ENOEXEC or
 * -ENODATA (none). @len 41 holds any (at most 20 bytes).
 */
int symbols_build_id(const char *path, char *hex, size_t len);
/* The same for the file open at @fd (its offset is not used). */
int symbols_build_id_fd(int fd, char *hex, size_t len);

/* Up to @max names closest to @name (edit distance), for "did you mean". */
size_t symbols_nearest(const struct symtab *t, const char *name, const char **out, size_t max);

#endif
