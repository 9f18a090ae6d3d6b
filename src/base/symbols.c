// SPDX-License-Identifier: MIT
/* ELF function symbols with file offsets (libelf), the way perf loads them. */
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32.h"
#include "fileio.h"
#include "symbols.h"

#define DEBUG_DIR "/usr/lib/debug"

/*
 * perf looks C++ functions up by their demangled names ("ns::bar(int)"), so
 * they are stored that way. The demangler is libstdc++'s, loaded when a
 * mangled name is first seen so that C programs do not link it; without it
 * names stay as they are. Returns a malloc'd name, or NULL to keep @name.
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

struct elf_file {
	int fd;
	Elf *elf;
};

/* Through file_open_input(): a FIFO or a device is refused before libelf reads it. */
static int elf_file_open(struct elf_file *ef, const char *path, struct error *e)
{
	ef->elf = NULL;
	ef->fd = file_open_input(AT_FDCWD, path, e);
	if (ef->fd < 0)
		return ef->fd;
	ef->elf = elf_begin(ef->fd, ELF_C_READ_MMAP, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF) {
		if (ef->elf)
			elf_end(ef->elf);
		close(ef->fd);
		ef->elf = NULL;
		ef->fd = -1;
		return -ENOEXEC;
	}
	return 0;
}

/*
 * Whether the section headers of @elf hold together within its @size bytes:
 * libelf skips what it cannot read, and a cut or overwritten file would
 * otherwise look like one without symbols. @why gets the first problem.
 */
static bool elf_corrupt(Elf *elf, uint64_t size, char *why, size_t len)
{
	Elf_Scn *scn = NULL;
	size_t nr, strndx;
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &nr) ||
	    elf_getshdrstrndx(elf, &strndx)) {
		snprintf(why, len, "its headers cannot be read (%s)", elf_errmsg(-1));
		return true;
	}
	/* libelf reads a table cut short as none at all: e_shnum says what should be there. */
	if (eh.e_shnum && (eh.e_shoff > size ||
			   (uint64_t)eh.e_shnum * eh.e_shentsize > size - eh.e_shoff)) {
		snprintf(why, len, "its %u section headers at offset %" PRIu64 " lie past the end "
			 "of the file (%" PRIu64 " bytes)", eh.e_shnum, (uint64_t)eh.e_shoff, size);
		return true;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh)) {
			snprintf(why, len, "section %zu: %s", elf_ndxscn(scn), elf_errmsg(-1));
			return true;
		}
		if (sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset) {
			snprintf(why, len, "section %zu lies past the end of the file (offset %" PRIu64
				 ", %" PRIu64 " bytes, the file has %" PRIu64 ")", elf_ndxscn(scn),
				 (uint64_t)sh.sh_offset, (uint64_t)sh.sh_size, size);
			return true;
		}
		if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) &&
		    (!sh.sh_entsize || sh.sh_link >= nr)) {
			snprintf(why, len, "its symbol table (section %zu) has no entry size or no "
				 "string table", elf_ndxscn(scn));
			return true;
		}
	}
	return false;
}

static void elf_file_close(struct elf_file *ef)
{
	if (ef->elf)
		elf_end(ef->elf);
	if (ef->fd >= 0)
		close(ef->fd);
	ef->elf = NULL;
	ef->fd = -1;
}

static Elf_Scn *find_section(Elf *elf, Elf64_Word type, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (n && !strcmp(n, name)))
			return scn;
	}
	return NULL;
}

/* The GNU build-id as lowercase hex, or "" when the file has none. */
static void build_id(Elf *elf, char *hex, size_t len);

int symbols_build_id(const char *path, char *hex, size_t len)
{
	int fd = file_open_input(AT_FDCWD, path, NULL), ret;

	hex[0] = '\0';
	if (fd < 0)
		return fd;
	ret = symbols_build_id_fd(fd, hex, len);
	close(fd);
	return ret;
}

int symbols_build_id_fd(int fd, char *hex, size_t len)
{
	Elf *elf;

	hex[0] = '\0';
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		return -ENOEXEC;
	}
	build_id(elf, hex, len);
	elf_end(elf);
	return hex[0] ? 0 : -ENODATA;
}

/* The GNU build-id note among the notes of @d, as hex into @hex; false if none. */
static bool note_build_id(Elf_Data *d, char *hex, size_t len)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((char *)d->d_buf + name_off, "GNU", 4))
			continue;
		hex[0] = '\0';
		for (size_t i = 0; i < nh.n_descsz && 2 * i + 3 <= len; i++)
			snprintf(hex + 2 * i, 3, "%02x", ((unsigned char *)d->d_buf)[desc_off + i]);
		return true;
	}
	return false;
}

/*
 * The kernel reads the build-id of a mapped file from its PT_NOTE segments
 * (lib/buildid.c), so those come first; a file with notes only in sections
 * (an object or a debug file) is read there.
 */
static void build_id(Elf *elf, char *hex, size_t len)
{
	Elf_Scn *scn = NULL;
	size_t n = 0;

	hex[0] = '\0';
	for (size_t i = 0; !elf_getphdrnum(elf, &n) && i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_NOTE &&
		    note_build_id(elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						       ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR),
				  hex, len))
			return;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    note_build_id(elf_getdata(scn, NULL), hex, len))
			return;
	}
}

/* What .gnu_debuglink says: the debug file's name, and the CRC-32 of its bytes. */
struct debuglink {
	const char *name;
	uint32_t crc;
	bool has_crc;
};

static bool read_debuglink(Elf *elf, struct debuglink *dl)
{
	Elf_Scn *scn = find_section(elf, SHT_PROGBITS, ".gnu_debuglink");
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	const char *nul = d && d->d_buf && d->d_size ? memchr(d->d_buf, 0, d->d_size) : NULL;
	GElf_Ehdr eh;
	uint32_t raw;
	size_t at;

	if (!nul || nul == d->d_buf)
		return false;
	dl->name = d->d_buf;
	/* The CRC follows the name padded to 4 bytes, in the byte order of the ELF file. */
	at = ((size_t)(nul - dl->name) + 1 + 3) & ~(size_t)3;
	dl->has_crc = at <= d->d_size && d->d_size - at >= 4 && gelf_getehdr(elf, &eh);
	if (dl->has_crc) {
		memcpy(&raw, dl->name + at, 4);
		dl->crc = eh.e_ident[EI_DATA] == ELFDATA2MSB ? be32toh(raw) : le32toh(raw);
	}
	return true;
}

/*
 * Why @dbg is not the debug file of a binary with build-id @id (may be ""),
 * as gdb and libdw judge it: another build-id when both have one, or for a
 * .gnu_debuglink candidate (@dl) another CRC. Returns false when it belongs.
 */
static bool foreign_debug_file(const char *id, struct elf_file *dbg, const struct debuglink *dl,
			       char *why, size_t len)
{
	char dbg_id[128];
	uint32_t crc;
	int ret;

	build_id(dbg->elf, dbg_id, sizeof(dbg_id));
	if (id[0] && dbg_id[0] && strcmp(id, dbg_id)) {
		snprintf(why, len, "build-id mismatch: it belongs to another build (its build-id "
			 "is %s, the binary's %s)", dbg_id, id);
		return true;
	}
	if (!dl || !dl->has_crc)
		return false;
	ret = crc32_fd(dbg->fd, &crc);
	if (ret)
		snprintf(why, len, "its CRC cannot be read: %s", strerror(-ret));
	else if (crc != dl->crc)
		snprintf(why, len, "CRC mismatch: it belongs to another build (its CRC is %08x, "
			 ".gnu_debuglink names %08x)", crc, dl->crc);
	return ret || crc != dl->crc;
}

/*
 * A separate debug file with .symtab: the build-id path first, then the
 * places gdb and perf look for the .gnu_debuglink name (beside the file,
 * .debug/, the debug tree); with a @root (a sysroot, realpath'd), its debug
 * tree before this machine's, and the file's directory there taken as the
 * one it was recorded at. A candidate of another build is passed over, with
 * a warning.
 */
static int open_debug_file(Elf *elf, const char *path, const char *root, struct elf_file *dbg,
			   char *where, size_t len, struct warnings *w)
{
	char id[128], cand[6][4096], dir[3000], why[512];
	const char *recorded_dir = dir;
	struct debuglink dl;
	int n = 0, first_link;

	build_id(elf, id, sizeof(id));
	if (strlen(id) > 2) {
		if (root)
			snprintf(cand[n++], sizeof(cand[0]), "%.3000s" DEBUG_DIR
				 "/.build-id/%.2s/%s.debug", root, id, id + 2);
		snprintf(cand[n++], sizeof(cand[0]), DEBUG_DIR "/.build-id/%.2s/%s.debug", id,
			 id + 2);
	}
	first_link = n;
	if (read_debuglink(elf, &dl)) {
		size_t rl = root ? strlen(root) : 0;
		char *slash;

		snprintf(dir, sizeof(dir), "%.2999s", path);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		if (rl && !strncmp(dir, root, rl) && dir[rl] == '/')
			recorded_dir = dir + rl;
		snprintf(cand[n++], sizeof(cand[0]), "%s/%s", dir, dl.name);
		snprintf(cand[n++], sizeof(cand[0]), "%s/.debug/%s", dir, dl.name);
		if (root)
			snprintf(cand[n++], sizeof(cand[0]), "%.1000s" DEBUG_DIR "%.2000s/%s", root,
				 recorded_dir, dl.name);
		snprintf(cand[n++], sizeof(cand[0]), DEBUG_DIR "%s/%s", recorded_dir, dl.name);
	}
	for (int i = 0; i < n; i++) {
		if (elf_file_open(dbg, cand[i], NULL))
			continue;
		if (!find_section(dbg->elf, SHT_SYMTAB, NULL)) {
			elf_file_close(dbg);
			continue;
		}
		if (!foreign_debug_file(id, dbg, i >= first_link ? &dl : NULL, why, sizeof(why))) {
			snprintf(where, len, "%.4000s", cand[i]);
			return 0;
		}
		warn_add(w, "%s: not used as the debug file of %s: %s", cand[i], path, why);
		elf_file_close(dbg);
	}
	return -ENOENT;
}

/* File offset of @addr through the PT_LOAD segment of @elf holding it. */
static bool addr_to_offset(Elf *elf, uint64_t addr, uint64_t *off, uint64_t *seg_start,
			   uint64_t *seg_end)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* A corrupt header's sizes can wrap: such a segment maps nothing. */
		if (ph.p_offset + ph.p_filesz < ph.p_offset)
			continue;
		if (addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz)
			continue;
		*off = addr - ph.p_vaddr + ph.p_offset;
		*seg_start = ph.p_offset & ~((uint64_t)sysconf(_SC_PAGESIZE) - 1);
		*seg_end = ph.p_offset + ph.p_filesz;
		return true;
	}
	return false;
}

/* Address order; at one address, table order (perf keeps aliases, in insertion order). */
static int by_addr(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int read_table(struct symtab *t, Elf *symelf, Elf_Scn *scn, Elf *runtime)
{
	GElf_Shdr sh;
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t count;

	if (!gelf_getshdr(scn, &sh) || !d || !sh.sh_entsize)
		return -ENODATA;
	count = sh.sh_size / sh.sh_entsize;
	t->syms = calloc(count ? count : 1, sizeof(*t->syms));
	if (!t->syms)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		struct symbol *s = &t->syms[t->nr];
		const char *name;
		GElf_Sym sym;
		int type;

		if (!gelf_getsym(d, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(symelf, sh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (!addr_to_offset(runtime, sym.st_value, &s->offset, &s->seg_start, &s->seg_end))
			continue;	/* not in a loaded segment: nothing to trace */
		s->name = demangle(name);
		if (!s->name)
			s->name = strdup(name);
		if (!s->name)
			return -ENOMEM;
		s->addr = sym.st_value;
		s->size = sym.st_size;
		s->size_unknown = !sym.st_size;
		s->index = i;
		s->bind = GELF_ST_BIND(sym.st_info) == STB_GLOBAL ? 'g' :
			  GELF_ST_BIND(sym.st_info) == STB_WEAK ? 'w' : 'l';
		t->nr++;
	}
	qsort(t->syms, t->nr, sizeof(*t->syms), by_addr);
	return t->nr ? 0 : -ENODATA;
}

int symbols_load(struct symtab *t, const char *file, struct error *e, struct warnings *w)
{
	return symbols_load_root(t, file, NULL, e, w);
}

int symbols_load_root(struct symtab *t, const char *file, const char *root, struct error *e,
		      struct warnings *w)
{
	struct elf_file ef, dbg = { .fd = -1, .elf = NULL };
	char why[256], real_root[PATH_MAX];
	Elf_Scn *scn;
	struct stat st;
	int ret;

	memset(t, 0, sizeof(*t));
	elf_version(EV_CURRENT);
	if (!realpath(file, t->path)) {
		ret = -errno;
		return err_usage_code(e, ret, "%s: %s", file, strerror(-ret));
	}
	ret = elf_file_open(&ef, file, e);
	if (ret == -ENOEXEC)
		return err_usage_code(e, ret, "%s: not an ELF file", file);
	if (ret)
		return ret;
	if (!fstat(ef.fd, &st))
		t->file_size = (uint64_t)st.st_size;
	if (elf_corrupt(ef.elf, t->file_size, why, sizeof(why))) {
		elf_file_close(&ef);
		return err_usage_code(e, -EBADMSG, "%s: a corrupt ELF file: %s", file, why);
	}
	scn = find_section(ef.elf, SHT_SYMTAB, NULL);
	if (scn) {
		strcpy(t->table, ".symtab");
		ret = read_table(t, ef.elf, scn, ef.elf);
	} else if (!open_debug_file(ef.elf, t->path, root && realpath(root, real_root) ?
				    real_root : NULL, &dbg, t->debug_file, sizeof(t->debug_file),
				    w)) {
		strcpy(t->table, ".symtab");
		ret = read_table(t, dbg.elf, find_section(dbg.elf, SHT_SYMTAB, NULL), ef.elf);
	} else if ((scn = find_section(ef.elf, SHT_DYNSYM, NULL))) {
		strcpy(t->table, ".dynsym");
		ret = read_table(t, ef.elf, scn, ef.elf);
	} else {
		ret = -ENODATA;
	}
	if (ret == -ENODATA) {
		err_usage_code(e, ret, "%s: no function symbols (no .symtab, no debug file under "
			       DEBUG_DIR ", no .dynsym)", file);
		err_hint(e, "install the package's debug symbols (-dbgsym) or filter by address");
	} else if (ret) {
		err_runtime(e, ret, "%s: %s", file, strerror(-ret));
	}
	elf_file_close(&dbg);
	elf_file_close(&ef);
	if (ret)
		symbols_free(t);
	return ret;
}

void symbols_free(struct symtab *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->syms[i].name);
	free(t->syms);
	t->syms = NULL;
	t->nr = 0;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[65], cur[65];

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, sizeof(cur));
	}
	return prev[lb];
}

size_t symbols_nearest(const struct symtab *t, const char *name, const char **out, size_t max)
{
	size_t best[8], n = 0;

	if (max > 8)
		max = 8;
	for (size_t i = 0; i < t->nr; i++) {
		size_t d = edit_distance(name, t->syms[i].name), k;

		if (d == SIZE_MAX || d > strlen(name) / 2 + 2)
			continue;
		/* Insert, keeping the closest first; equal names once. */
		for (k = 0; k < n; k++)
			if (!strcmp(out[k], t->syms[i].name))
				break;
		if (k < n)
			continue;
		for (k = n; k > 0 && best[k - 1] > d; k--) {
			if (k < max) {
				best[k] = best[k - 1];
				out[k] = out[k - 1];
			}
		}
		if (k < max) {
			best[k] = d;
			out[k] = t->syms[i].name;
			if (n < max)
				n++;
		}
	}
	return n;
}
