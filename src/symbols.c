// SPDX-License-Identifier: MIT
/* Function symbols of an ELF file and their file offsets (libelf). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols.h"

#define NT_BUILD_ID	3

static int fail(char *errmsg, size_t errlen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *errmsg, size_t errlen, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, errlen, fmt, ap);
	va_end(ap);
	return err;
}

/* Separate debug files live here; $PTCOLLECT_DEBUG_ROOT lets tests supply their own. */
static const char *debug_root(void)
{
	const char *r = getenv("PTCOLLECT_DEBUG_ROOT");

	return r && *r ? r : "/usr/lib/debug";
}

static Elf_Scn *find_section(Elf *elf, const char *name, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		if (type != SHT_NULL && sh->sh_type != type)
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* Hex build-id from .note.gnu.build-id, or "" when the file has none. */
static void read_build_id(Elf *elf, char *hex, size_t hexlen)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, ".note.gnu.build-id", SHT_NOTE, &sh);
	Elf_Data *d;
	GElf_Nhdr nh;
	size_t off = 0, noff, doff;

	hex[0] = '\0';
	if (!scn || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return;
	while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
		const unsigned char *id = (const unsigned char *)d->d_buf + doff;

		if (nh.n_type != NT_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)d->d_buf + noff, "GNU", 4))
			continue;
		if (nh.n_descsz < 2 || nh.n_descsz * 2 + 1 > hexlen)
			return;
		for (size_t i = 0; i < nh.n_descsz; i++)
			sprintf(hex + 2 * i, "%02x", id[i]);
		return;
	}
}

static bool has_symtab(const char *path)
{
	GElf_Shdr sh;
	bool ret = false;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		ret = find_section(elf, ".symtab", SHT_SYMTAB, &sh) != NULL;
	elf_end(elf);
	close(fd);
	return ret;
}

/*
 * A stripped file's symbols may sit in a debug file: first by build-id, then by
 * the .gnu_debuglink name next to the file, in .debug/ and under the debug root.
 */
static bool find_debug_file(Elf *elf, const char *path, char *out, size_t outlen)
{
	char id[256], dir[PATH_MAX];
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *d;
	char *slash;

	read_build_id(elf, id, sizeof(id));
	if (id[0]) {
		snprintf(out, outlen, "%s/.build-id/%.2s/%s.debug", debug_root(), id, id + 2);
		if (has_symtab(out))
			return true;
	}
	scn = find_section(elf, ".gnu_debuglink", SHT_PROGBITS, &sh);
	if (!scn || !(d = elf_getdata(scn, NULL)) || !d->d_buf || !d->d_size ||
	    !memchr(d->d_buf, '\0', d->d_size) || !*(const char *)d->d_buf)
		return false;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	const char *fmts[] = { "%s/%s", "%s/.debug/%s" };
	for (size_t i = 0; i < 2; i++) {
		if (snprintf(out, outlen, fmts[i], dir, (const char *)d->d_buf) >= (int)outlen)
			return false;
		if (strcmp(out, path) && has_symtab(out))
			return true;
	}
	if (snprintf(out, outlen, "%s%s/%s", debug_root(), dir, (const char *)d->d_buf) >=
	    (int)outlen)
		return false;
	return has_symtab(out);
}

/*
 * perf looks C++ functions up by their demangled names ("ns::bar(int)"). The
 * demangler is libstdc++'s, loaded when first needed so that C users do not
 * link it; without it names stay mangled. Returns a malloc'd name or NULL.
 */
static char *demangle(const char *name)
{
	typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
	static demangle_fn fn;
	static bool tried;
	int status = -1;
	char *d;

	if (strncmp(name, "_Z", 2))
		return NULL;
	if (!tried) {
		void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);

		tried = true;
		if (h)
			*(void **)&fn = dlsym(h, "__cxa_demangle");
	}
	if (!fn)
		return NULL;
	d = fn(name, NULL, NULL, &status);
	if (status) {
		free(d);
		return NULL;
	}
	return d;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct symbols_sym *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* File offset of @addr through the PT_LOAD that maps it; false when none does. */
static bool addr_to_offset(Elf *elf, size_t nphdr, uint64_t addr, uint64_t *off, uint64_t *end)
{
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz)
			continue;
		*off = addr - ph.p_vaddr + ph.p_offset;
		*end = ph.p_offset + ph.p_filesz;
		return true;
	}
	return false;
}

static int read_syms(struct symbols *s, Elf *symelf, Elf_Scn *scn, const GElf_Shdr *sh,
		     Elf *runelf, size_t nphdr, char *errmsg, size_t errlen)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n, cap = 0;

	if (!d || !sh->sh_entsize)
		return fail(errmsg, errlen, -ENOEXEC, "%s: %s is unreadable", s->symfile,
			    s->table);
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		struct symbols_sym *ns;
		GElf_Sym sym;
		const char *name;
		int type, bind;
		uint64_t off, end;

		if (!gelf_getsym(d, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		bind = GELF_ST_BIND(sym.st_info);
		/* perf's rule for a function: typed FUNC (or IFUNC), named, defined. */
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_name)
			continue;
		name = elf_strptr(symelf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (!addr_to_offset(runelf, nphdr, sym.st_value, &off, &end))
			continue;
		if ((size_t)s->nr == cap) {
			cap = cap ? cap * 2 : 64;
			ns = realloc(s->syms, cap * sizeof(*ns));
			if (!ns)
				return fail(errmsg, errlen, -ENOMEM, "out of memory");
			s->syms = ns;
		}
		ns = &s->syms[s->nr];
		ns->elf_name = strdup(name);
		ns->name = demangle(name);
		if (!ns->name)
			ns->name = strdup(name);
		if (!ns->name || !ns->elf_name) {
			free(ns->name);
			free(ns->elf_name);
			return fail(errmsg, errlen, -ENOMEM, "out of memory");
		}
		ns->addr = sym.st_value;
		ns->offset = off;
		ns->seg_end = end;
		ns->size = sym.st_size;
		ns->bind = bind == STB_GLOBAL ? SYMBOLS_GLOBAL :
			   bind == STB_WEAK ? SYMBOLS_WEAK : SYMBOLS_LOCAL;
		s->nr++;
	}
	if (s->nr)
		qsort(s->syms, s->nr, sizeof(*s->syms), cmp_sym);
	/* The same name at the same place twice (symtab quirks) counts once, as in perf. */
	int w = 0;
	for (int r = 0; r < s->nr; r++) {
		if (w && s->syms[w - 1].offset == s->syms[r].offset &&
		    !strcmp(s->syms[w - 1].name, s->syms[r].name)) {
			free(s->syms[r].name);
			free(s->syms[r].elf_name);
			continue;
		}
		s->syms[w++] = s->syms[r];
	}
	s->nr = w;
	return 0;
}

static int open_elf(const char *path, int *fd, Elf **elf, char *errmsg, size_t errlen)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return fail(errmsg, errlen, -errno, "%s: %s", path, strerror(errno));
	*elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		elf_end(*elf);
		*elf = NULL;
		close(*fd);
		*fd = -1;
		return fail(errmsg, errlen, -ENOEXEC, "%s: not an ELF file", path);
	}
	return 0;
}

int symbols_load(const char *path, struct symbols *s, char *errmsg, size_t errlen)
{
	int fd = -1, dfd = -1, ret;
	Elf *elf = NULL, *delf = NULL, *symelf;
	Elf_Scn *scn;
	GElf_Shdr sh;
	struct stat st;
	size_t nphdr;

	memset(s, 0, sizeof(*s));
	elf_version(EV_CURRENT);
	if (!realpath(path, s->path))
		return fail(errmsg, errlen, -errno, "%s: %s", path, strerror(errno));
	if (stat(s->path, &st) || !S_ISREG(st.st_mode))
		return fail(errmsg, errlen, -ENOEXEC, "%s: not a regular file", path);
	s->file_size = st.st_size;
	ret = open_elf(s->path, &fd, &elf, errmsg, errlen);
	if (ret)
		return ret;
	if (elf_getphdrnum(elf, &nphdr) || !nphdr) {
		ret = fail(errmsg, errlen, -ENOEXEC, "%s: an ELF file with no program headers "
			   "(an object file?); filters need an executable or shared library", path);
		goto out;
	}
	snprintf(s->symfile, sizeof(s->symfile), "%s", s->path);
	symelf = elf;
	s->table = ".symtab";
	scn = find_section(elf, ".symtab", SHT_SYMTAB, &sh);
	if (!scn) {
		char dpath[PATH_MAX];

		if (find_debug_file(elf, s->path, dpath, sizeof(dpath)) &&
		    !open_elf(dpath, &dfd, &delf, errmsg, errlen)) {
			scn = find_section(delf, ".symtab", SHT_SYMTAB, &sh);
			if (scn) {
				symelf = delf;
				snprintf(s->symfile, sizeof(s->symfile), "%s", dpath);
			}
		}
	}
	if (!scn) {
		s->table = ".dynsym";
		scn = find_section(elf, ".dynsym", SHT_DYNSYM, &sh);
	}
	if (!scn) {
		ret = fail(errmsg, errlen, -ENODATA, "%s: no symbol table (.symtab or .dynsym) and "
			   "no debug file; give addresses instead of names", path);
		goto out;
	}
	ret = read_syms(s, symelf, scn, &sh, elf, nphdr, errmsg, errlen);
out:
	elf_end(delf);
	if (dfd >= 0)
		close(dfd);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (ret)
		symbols_free(s);
	return ret;
}

void symbols_free(struct symbols *s)
{
	for (int i = 0; i < s->nr; i++) {
		free(s->syms[i].name);
		free(s->syms[i].elf_name);
	}
	free(s->syms);
	s->syms = NULL;
	s->nr = 0;
}

uint64_t symbols_size(const struct symbols *s, int idx)
{
	const struct symbols_sym *sym = &s->syms[idx];

	if (sym->size)
		return sym->size;
	/* perf extends a size-less symbol to the next one (symbols__fixup_end). */
	for (int i = idx + 1; i < s->nr; i++)
		if (s->syms[i].offset > sym->offset)
			return s->syms[i].offset - sym->offset;
	/* The last one: to the end of its page, as perf 6.1 does (0 when page-aligned). */
	return ((sym->offset + 4095) & ~4095ULL) - sym->offset;
}

char symbols_bind_char(enum symbols_bind b)
{
	return b == SYMBOLS_GLOBAL ? 'g' : b == SYMBOLS_LOCAL ? 'l' : 'w';
}
