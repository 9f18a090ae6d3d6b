// SPDX-License-Identifier: MIT
/*
 * libipt's block caches written when libipt allocates them. libipt keeps one block cache a
 * section (4 bytes a byte of code), made by calloc() inside libipt on a decoder's first use
 * of the section: fresh pages map the zero page, each is read before it is written, and the
 * write copies it. With the workers of -J 2 on two CPUs of one address space, each such
 * copy flushes the other CPU's TLB too (an IPI, a VM exit on a VM): 176 on the walk of
 * bench/decode, --stats -J 2, one section cache shared by the workers. memfill() writes
 * a table's pages at once, which needs no flush, but libipt's API gives no way to the
 * cache (pt_section_request_bcache() is libipt's own), and an interposed calloc() would be
 * every library's (and ASan's, under ASan). So libipt's own GOT entry for calloc is changed
 * to fill_calloc(), which calls the calloc the entry was bound to (libc's, or ASan's) and
 * fills what it gets, within the bounds of iptfill.h.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "iptfill.h"
#include "memfill.h"

typedef void *calloc_fn(size_t, size_t);

static calloc_fn *bound;	/* what libipt's entry was bound to */
static uint64_t filled, calls;	/* atomic */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool hooked;

static void *fill_calloc(size_t n, size_t size)
{
	void *p = bound(n, size);
	size_t len;

	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	if (p && !__builtin_mul_overflow(n, size, &len) && len >= IPTFILL_LEAST &&
	    len <= IPTFILL_MOST &&
	    __atomic_add_fetch(&filled, len, __ATOMIC_RELAXED) <= IPTFILL_BUDGET)
		memfill(p, len);
	return p;
}

uint64_t iptfill_filled(void)
{
	uint64_t f = __atomic_load_n(&filled, __ATOMIC_RELAXED);

	return f < IPTFILL_BUDGET ? f : IPTFILL_BUDGET;
}

uint64_t iptfill_calls(void)
{
	return __atomic_load_n(&calls, __ATOMIC_RELAXED);
}

#if defined(__x86_64__)
struct lib {
	uintptr_t addr;			/* an address in it */
	const struct dl_phdr_info *info;
	struct dl_phdr_info copy;
};

/* dl_iterate_phdr(): the object whose loaded segments hold l->addr. */
static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lib *l = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && l->addr >= lo && l->addr < lo + ph->p_memsz) {
			l->copy = *info;
			l->info = &l->copy;
			return 1;
		}
	}
	return 0;
}

/* A dynamic section's address: ld.so relocates them in place, not every ld.so does. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
	return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

/* The GOT slot of @info's relocations @rel (@size bytes) for the symbol "calloc", or NULL. */
static void **calloc_slot(const struct dl_phdr_info *info, const ElfW(Rela) *rel, size_t size,
			  const ElfW(Sym) *symtab, const char *strtab)
{
	for (size_t i = 0; rel && i < size / sizeof(*rel); i++) {
		unsigned long type = ELF64_R_TYPE(rel[i].r_info);
		const ElfW(Sym) *s = &symtab[ELF64_R_SYM(rel[i].r_info)];

		if ((type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT) &&
		    ELF64_R_SYM(rel[i].r_info) && !strcmp(strtab + s->st_name, "calloc"))
			return (void **)(info->dlpi_addr + rel[i].r_offset);
	}
	return NULL;
}

static void hook(void)
{
	struct lib l = { .addr = (uintptr_t)dlsym(RTLD_DEFAULT, "pt_blk_next") };
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	size_t jmpsz = 0, relasz = 0, page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t relro = 0, relro_end = 0, at;
	void **slot;

	bound = (calloc_fn *)dlsym(RTLD_DEFAULT, "calloc");
	/* libipt in the program itself: its calloc entry is every caller's; left alone. */
	if (!bound || !l.addr || !dl_iterate_phdr(find_lib, &l) || !l.info->dlpi_name[0])
		return;
	for (int i = 0; i < l.info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &l.info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(l.info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type == PT_GNU_RELRO) {
			relro = l.info->dlpi_addr + ph->p_vaddr;
			relro_end = relro + ph->p_memsz;
		}
	}
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = dyn_ptr(l.info, dyn->d_un.d_ptr);

		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)p; break;
		case DT_STRTAB: strtab = (const char *)p; break;
		case DT_JMPREL: jmprel = (const ElfW(Rela) *)p; break;
		case DT_PLTRELSZ: jmpsz = dyn->d_un.d_val; break;
		case DT_RELA: rela = (const ElfW(Rela) *)p; break;
		case DT_RELASZ: relasz = dyn->d_un.d_val; break;
		case DT_PLTREL: if (dyn->d_un.d_val != DT_RELA) return; break;
		}
	}
	if (!symtab || !strtab)
		return;
	slot = calloc_slot(l.info, jmprel, jmpsz, symtab, strtab);
	if (!slot)
		slot = calloc_slot(l.info, rela, relasz, symtab, strtab);
	if (!slot)
		return;
	/* Under RELRO (BIND_NOW) the entry is read-only once ld.so bound it: opened a moment. */
	at = (uintptr_t)slot;
	if (at >= relro && at < relro_end) {
		uintptr_t pg = at & ~(page - 1);

		if (mprotect((void *)pg, page, PROT_READ | PROT_WRITE))
			return;
		__atomic_store_n(slot, (void *)fill_calloc, __ATOMIC_RELEASE);
		mprotect((void *)pg, page, PROT_READ);
	} else {
		__atomic_store_n(slot, (void *)fill_calloc, __ATOMIC_RELEASE);
	}
	hooked = true;
}
#else
static void hook(void)
{
}
#endif

bool iptfill_hook(void)
{
	pthread_once(&once, hook);
	return hooked;
}
