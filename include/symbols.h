/* SPDX-License-Identifier: MIT */
/*
 * Function symbols of an ELF file, as an address filter needs them: name,
 * address, size and the file offset the kernel's filter ranges are given in.
 * Symbols come from .symtab, else from a separate debug file (build-id or
 * .gnu_debuglink under /usr/lib/debug), else from .dynsym. Offsets always come
 * from the program headers of the file itself (the one that gets mapped).
 */
#ifndef PTC_SYMBOLS_H
#define PTC_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

enum symbols_bind {
	SYMBOLS_LOCAL,
	SYMBOLS_GLOBAL,
	SYMBOLS_WEAK,
};

struct symbols_sym {
	char *name;		/* demangled, as perf names it ("ns::bar(int)") */
	char *elf_name;		/* as in the ELF file ("_ZN2ns3barEi") */
	uint64_t addr;		/* st_value */
	uint64_t offset;	/* file offset through the PT_LOAD segment holding addr */
	uint64_t size;		/* st_size; 0 when the ELF gives none */
	uint64_t seg_end;	/* file offset where that segment's file bytes end */
	enum symbols_bind bind;
};

struct symbols {
	char path[4096];	/* real path of the file */
	char symfile[4096];	/* file the symbols were read from (may be a debug file) */
	const char *table;	/* ".symtab" or ".dynsym" */
	uint64_t file_size;
	int nr;
	struct symbols_sym *syms;	/* functions, sorted by offset then name */
};

/*
 * Load the function symbols of @path. Returns 0, -ENOENT (no such file),
 * -ENOEXEC (not ELF, or malformed), -ENODATA (no symbol table at all) or
 * another negative errno, with errmsg saying which and why.
 */
int symbols_load(const char *path, struct symbols *s, char *errmsg, size_t errlen);
void symbols_free(struct symbols *s);

/*
 * Size perf would use: st_size, else the distance to the next symbol's offset,
 * else (the last symbol) to the end of its page.
 */
uint64_t symbols_size(const struct symbols *s, int idx);

/* The letter perf prints for a binding: 'g', 'l' or 'w'. */
char symbols_bind_char(enum symbols_bind b);

#endif
