/* SPDX-License-Identifier: MIT */
/*
 * The memory a decoder reads code from, built the way libipt's ptxed and its
 * sideband library build it: one section cache (libipt's
 * pt_image_section_cache) that maps each file once, a base image for the
 * files given by hand (--elf, --raw), a kernel image (kcore) that every
 * process image starts from, and a pt_image per process that sideband
 * MMAP/MMAP2 records fill. Switching processes is handing the decoder another
 * pt_image: nothing is read again.
 *
 * Every section goes through the cache, so an instruction's isid (pt_insn)
 * names the file and offset it came from: image_symbolize() turns it into
 * "symbol+0xoff" with the file's ELF symbols (symbols.h), loaded once per file
 * for all decoders through a shared struct symcache.
 *
 * One image_store belongs to one decoder (one thread); a symcache is shared.
 */
#ifndef PTC_MEMIMAGE_H
#define PTC_MEMIMAGE_H

#include <intel-pt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* The ABI of a process, from the ELF class of the first file it maps (libipt's rule). */
enum image_abi {
	IMAGE_ABI_UNKNOWN,
	IMAGE_ABI_X64,
	IMAGE_ABI_X32,
	IMAGE_ABI_IA32,
};

/* Where mapped file names lead: a sysroot in front of them, the vdso of each ABI. */
struct image_paths {
	const char *symfs;	/* --sysroot: tried first, where it has the file; NULL: none */
	const char *sysroot;	/* NULL: names as recorded */
	bool fallback;		/* a file not under the sysroot is read where it is named */
	const char *vdso[4];	/* by enum image_abi; NULL: not given */
};

/* An anonymous executable mapping ("//anon", "[anon:...]", "/memfd:..."): JIT code. */
struct image_anon {
	uint64_t start, end;
};

/* A process: its image, the ABI its files have, and how many hold it. */
struct image_proc {
	uint32_t pid;
	enum image_abi abi;
	struct pt_image *image;
	struct image_anon *anon;	/* where its perf map may name code, newest last */
	size_t nr_anon;
	int refs;
	struct image_proc *next;
};

struct image_store;
struct symcache;

/* Why a mapping was not added: libipt-sb's warnings and errors, for the caller to report. */
enum image_map_result {
	IMAGE_MAPPED = 0,
	IMAGE_SKIPPED_SPECIAL,	/* "[stack]", "//anon", "... (deleted)": nothing to read */
	IMAGE_NO_VDSO,		/* "[vdso]" without a vdso file for the process's ABI */
	IMAGE_BAD_FILE,		/* the file could not be opened or is too short */
};

/* A symbol cache shared by the decoders of one run (thread-safe). */
struct symcache *symcache_new(void);
void symcache_free(struct symcache *c);
/*
 * Where symbols are looked for beyond the mapped files themselves: @sysroot
 * (--sysroot; NULL: none) is searched for their separate debug files before
 * this machine's /usr/lib/debug, and for perf maps (SYSROOT/tmp/perf-PID.map);
 * @perfmap_dir (a bundle's perf-maps/; NULL: none) holds perf-PID.map files
 * too. Without either, no perf map is read: this machine's /tmp/perf-PID.map
 * is of whatever process has that pid now. Copied. 0 or -ENOMEM.
 */
int symcache_set_paths(struct symcache *c, const char *sysroot, const char *perfmap_dir);
/*
 * The notes loading symbols gave (a debug file of another build refused, a
 * perf map with bad lines), for the command to print; @w is overwritten.
 */
void symcache_notes(struct symcache *c, struct warnings *w);

int image_store_new(struct image_store **s, struct symcache *syms, struct error *e);
/*
 * The same, its sections in @iscache (image_iscache_new(), NULL: its own), which may be
 * shared by the stores of several threads (libipt's section cache is thread-safe) and
 * must outlive them.
 */
int image_store_new_in(struct image_store **s, struct symcache *syms,
		       struct pt_image_section_cache *iscache, struct error *e);
/* A section cache for image_store_new_in(), bounded as a store's own; NULL: no memory. */
struct pt_image_section_cache *image_iscache_new(void);
void image_iscache_free(struct pt_image_section_cache *c);
void image_store_free(struct image_store *s);

/* The image for code outside any sideband process: the --elf and --raw files. */
struct pt_image *image_base(struct image_store *s);

/*
 * Up to @n bytes of code at @ip from the section @isid (a pt_insn's or pt_block's): the
 * number read, or a negative libipt error code (no such section, @ip outside it).
 */
int image_read(struct image_store *s, int isid, uint64_t ip, uint8_t *buf, size_t n);

/*
 * The section of the base image (image_base()) that holds @ip, as libipt reads it (a later
 * section hides what it overlaps of older ones): its isid, and where it ends in @end; 0:
 * none.
 */
int image_base_find(struct image_store *s, uint64_t ip, uint64_t *end);

/*
 * Add an ELF file's PT_LOAD segments to @img (NULL: the base image), as ptxed's
 * --elf FILE[:BASE] does: at their addresses, or moved so that the lowest
 * starts at @base when @has_base. Returns the number of sections added, or a
 * negative errno with @e.
 */
int image_add_elf(struct image_store *s, struct pt_image *img, const char *path, uint64_t base,
		  bool has_base, struct error *e);
/* The kernel's code from a kcore-style ELF (--pevent:kcore): into every new process. */
int image_add_kcore(struct image_store *s, const char *path, uint64_t base, bool has_base,
		    struct error *e);
/*
 * @size bytes (0: to the end) of @path from @offset at @addr, into @img (NULL: the base
 * image): --raw FILE[:FROM-TO]:ADDR, or the kernel's text saved raw (image_kernel()).
 */
int image_add_raw(struct image_store *s, struct pt_image *img, const char *path,
		  uint64_t offset, uint64_t size, uint64_t addr, struct error *e);
/* The kernel's image, which every process image starts as a copy of. */
struct pt_image *image_kernel(struct image_store *s);

/* The process @pid, made (with the kernel's sections) when it is not known yet. */
struct image_proc *image_proc_get(struct image_store *s, uint32_t pid);
struct image_proc *image_proc_find(struct image_store *s, uint32_t pid);
/* Forget @pid (exec, a new process of that pid): a holder keeps its image until put. */
void image_proc_remove(struct image_store *s, uint32_t pid);
void image_proc_hold(struct image_proc *p);
void image_proc_put(struct image_proc *p);
/* A child starts with a copy of its parent's image. */
int image_proc_fork(struct image_store *s, uint32_t ppid, uint32_t pid);

/*
 * Map @len bytes of @file at @pgoff to @addr in @p, by libipt-sb's rules:
 * "[vdso]" is the vdso file of the process's ABI, other "[...]" names, "//anon"
 * and deleted files are skipped, other names get the sysroot in front (and
 * with paths->fallback, go without it when the sysroot has no such file). The
 * path tried is left in @tried (for messages).
 */
enum image_map_result image_proc_map(struct image_store *s, struct image_proc *p,
				     const char *file, uint64_t pgoff, uint64_t len, uint64_t addr,
				     const struct image_paths *paths, char *tried,
				     size_t tried_len);

/*
 * "symbol+0xoff" for @ip in the section @isid came from (perf's spelling);
 * "[unknown] (file+0xoff)" where no symbol covers it, "[unknown]" without a
 * section: never a name that is not known to be the code's.
 */
void image_symbolize(struct image_store *s, int isid, uint64_t ip, char *buf, size_t len);
/*
 * The same for an address of process @pid: outside any section, in one of its
 * anonymous executable mappings, the process's perf map names it
 * ("name+0xoff"), else "[unknown] (//anon+0xoff)" from the mapping's start.
 */
/* Whether @ip lies in an anonymous executable mapping of process @pid (JIT code). */
bool image_in_anon(struct image_store *s, uint32_t pid, uint64_t ip);
void image_symbolize_pid(struct image_store *s, uint32_t pid, int isid, uint64_t ip, char *buf,
			 size_t len);

/* What an address is, unformatted: its symbol and the file it is in. */
struct image_sym {
	const char *name;	/* the symbol; NULL: no symbol covers it */
	const char *object;	/* the file's path as mapped, "//anon"; NULL: no mapping known */
	const char *file;	/* the object's last path component (perf's dso), or as object */
	uint64_t off;		/* from the symbol's start; without one, in the object */
};

/*
 * image_symbolize_pid's answer without the formatting (the strings live as long
 * as @s). Not cached: its callers keep what they look up again (dec_names.c).
 */
void image_resolve_pid(struct image_store *s, uint32_t pid, int isid, uint64_t ip,
		       struct image_sym *out);
/* image_symbolize_pid's spelling of @y; its length (strlen() of @buf: 0 for @len 0). */
size_t image_sym_format(const struct image_sym *y, char *buf, size_t len);

#endif
