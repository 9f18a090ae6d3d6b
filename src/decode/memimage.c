// SPDX-License-Identifier: MIT
/* Decoder memory images: libipt section cache, base/kernel/process images, symbol names. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "memimage.h"
#include "perfmap.h"
#include "symbols.h"

/* Sections kept mapped between uses: bounded, whatever the trace's length. */
#define ISCACHE_LIMIT (64ull << 20)

/* What an isid stands for: enough to find the file offset of an address. */
struct section_info {
	char *path;
	uint64_t offset, vaddr;
	/* resolve_section()'s, found at the section's first use: its symbols (the symcache's
	 * under its lock), its file name (in @path) */
	bool known;
	const struct symfile *syms;
	const char *file;
	/*
	 * A base section's bytes, for image_read(): its file mapped at the first read
	 * (map_tried), code = NULL when it could not be; code_len: the section's bytes there.
	 */
	bool map_tried;
	const uint8_t *code;
	uint64_t code_len;
	struct file_map map;
};

struct image_store {
	struct pt_image_section_cache *iscache;
	bool own_iscache;
	struct pt_image *base;
	struct pt_image *kernel;
	struct image_proc *procs;
	struct section_info *secs;	/* by isid */
	size_t nr_secs;
	struct base_sec *bsecs;		/* the base image's sections, oldest first */
	size_t nr_bsecs, cap_bsecs;
	struct symcache *syms;
};

/* A section of the base image (image_base_find()). */
struct base_sec {
	uint64_t vaddr, size;
	int isid;
};

/* One file's symbols by file offset, for naming addresses. */
struct symfile {
	char *path;
	int status;		/* 0, or why there are no symbols */
	struct symtab tab;
	struct symbol **by_off;
	uint64_t *end;		/* where each symbol ends (a size-0 one: at the next) */
	size_t nr;
	struct symfile *next;
};

/* One process's perf map, loaded on first use (status -ENOENT: it has none). */
struct pmfile {
	uint32_t pid;
	int status;
	struct perfmap map;
	struct pmfile *next;
};

struct symcache {
	pthread_mutex_t lock;
	struct symfile *files;
	struct pmfile *maps;
	char *sysroot;		/* debug files and perf maps under it first */
	char *perfmap_dir;
	struct warnings notes;
};

struct symcache *symcache_new(void)
{
	struct symcache *c = calloc(1, sizeof(*c));

	if (c)
		pthread_mutex_init(&c->lock, NULL);
	return c;
}

int symcache_set_paths(struct symcache *c, const char *sysroot, const char *perfmap_dir)
{
	free(c->sysroot);
	free(c->perfmap_dir);
	c->sysroot = sysroot ? strdup(sysroot) : NULL;
	c->perfmap_dir = perfmap_dir ? strdup(perfmap_dir) : NULL;
	return (sysroot && !c->sysroot) || (perfmap_dir && !c->perfmap_dir) ? -ENOMEM : 0;
}

void symcache_notes(struct symcache *c, struct warnings *w)
{
	pthread_mutex_lock(&c->lock);
	*w = c->notes;
	pthread_mutex_unlock(&c->lock);
}

static void add_notes(struct symcache *c, const struct warnings *w)
{
	for (int i = 0; i < w->nr; i++)
		warn_add(&c->notes, "%s", w->msg[i]);
	c->notes.dropped += w->dropped;
}

void symcache_free(struct symcache *c)
{
	if (!c)
		return;
	while (c->files) {
		struct symfile *f = c->files;

		c->files = f->next;
		symbols_free(&f->tab);
		free(f->by_off);
		free(f->end);
		free(f->path);
		free(f);
	}
	while (c->maps) {
		struct pmfile *m = c->maps;

		c->maps = m->next;
		perfmap_free(&m->map);
		free(m);
	}
	free(c->sysroot);
	free(c->perfmap_dir);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static int by_offset(const void *a, const void *b)
{
	const struct symbol *x = *(struct symbol *const *)a, *y = *(struct symbol *const *)b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	/* Aliases: a global name before a local or weak one, then the table's order. */
	if ((x->bind == 'g') != (y->bind == 'g'))
		return x->bind == 'g' ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void symfile_index(struct symfile *f)
{
	size_t i;

	f->by_off = calloc(f->tab.nr ? f->tab.nr : 1, sizeof(*f->by_off));
	f->end = calloc(f->tab.nr ? f->tab.nr : 1, sizeof(*f->end));
	if (!f->by_off || !f->end) {
		f->status = -ENOMEM;
		return;
	}
	for (i = 0; i < f->tab.nr; i++)
		f->by_off[i] = &f->tab.syms[i];
	qsort(f->by_off, f->tab.nr, sizeof(*f->by_off), by_offset);
	f->nr = f->tab.nr;
	for (i = 0; i < f->nr; i++) {
		const struct symbol *s = f->by_off[i];
		size_t j = i + 1;

		if (!s->size_unknown && s->size) {
			f->end[i] = s->offset + s->size;
			continue;
		}
		/* perf's fixup: a symbol without a size reaches the next, or its segment's end. */
		while (j < f->nr && f->by_off[j]->offset == s->offset)
			j++;
		f->end[i] = j < f->nr ? f->by_off[j]->offset : s->seg_end;
	}
}

/* The symbols of @path, loaded on first use; NULL when it has none. */
static struct symfile *symcache_get(struct symcache *c, const char *path)
{
	struct symfile *f;
	struct warnings w;
	struct error e;

	pthread_mutex_lock(&c->lock);
	for (f = c->files; f; f = f->next)
		if (!strcmp(f->path, path))
			break;
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (f && !(f->path = strdup(path))) {
			free(f);
			f = NULL;
		}
		if (f) {
			/* A file without symbols is named by file and offset: nothing to report. */
			memset(&w, 0, sizeof(w));
			err_clear(&e);
			f->status = symbols_load_root(&f->tab, path, c->sysroot, &e, &w);
			if (!f->status)
				symfile_index(f);
			add_notes(c, &w);
			f->next = c->files;
			c->files = f;
		}
	}
	pthread_mutex_unlock(&c->lock);
	return f && !f->status ? f : NULL;
}

/*
 * The perf map of @pid: SYSROOT/tmp/perf-PID.map, else PERFMAP_DIR/perf-PID.map;
 * loaded on first use, bad lines said once. NULL when there is none.
 */
static const struct perfmap *symcache_perfmap(struct symcache *c, uint32_t pid)
{
	char path[4200];
	struct pmfile *m;
	struct error e;

	pthread_mutex_lock(&c->lock);
	for (m = c->maps; m; m = m->next)
		if (m->pid == pid)
			break;
	if (!m && (m = calloc(1, sizeof(*m)))) {
		m->pid = pid;
		m->status = -ENOENT;
		for (int i = 0; i < 2 && m->status == -ENOENT; i++) {
			const char *dir = i ? c->perfmap_dir : c->sysroot;

			if (!dir)
				continue;
			snprintf(path, sizeof(path), "%s%s/perf-%u.map", dir, i ? "" : "/tmp", pid);
			err_clear(&e);
			m->status = perfmap_load_at(&m->map, AT_FDCWD, path, &e);
			if (m->status && m->status != -ENOENT)
				warn_add(&c->notes, "perf map not used: %s", e.why);
			else if (!m->status && m->map.bad_lines)
				warn_add(&c->notes, "%s: %zu line(s) skipped, not \"START SIZE NAME\" "
					 "in hex within bounds (line %zu: %s)", path,
					 m->map.bad_lines, m->map.first_bad, m->map.first_why);
			if (!m->status && m->map.overlapping)
				warn_add(&c->notes, "%s: %zu entries overlap (the JIT reused their "
					 "memory): addresses there are [unknown]", path,
					 m->map.overlapping);
			if (!m->status && m->map.truncated)
				warn_add(&c->notes, "%s: only its first %llu MiB were read", path,
					 PERFMAP_MAX_FILE >> 20);
		}
		m->next = c->maps;
		c->maps = m;
	}
	pthread_mutex_unlock(&c->lock);
	return m && !m->status ? &m->map : NULL;
}

/* The symbol covering file offset @off (the first of its aliases), or NULL. */
static const struct symbol *symfile_find(const struct symfile *f, uint64_t off)
{
	size_t lo = 0, hi = f->nr, i, j;
	uint64_t end = 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->by_off[mid]->offset <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* by_off[lo - 1] is the last symbol at or before @off: take its aliases' extent. */
	i = lo - 1;
	while (i > 0 && f->by_off[i - 1]->offset == f->by_off[i]->offset)
		i--;
	for (j = i; j < lo; j++)
		end = f->end[j] > end ? f->end[j] : end;
	return off < end ? f->by_off[i] : NULL;
}

struct pt_image_section_cache *image_iscache_new(void)
{
	struct pt_image_section_cache *c = pt_iscache_alloc(NULL);

	if (c)
		pt_iscache_set_limit(c, ISCACHE_LIMIT);
	return c;
}

void image_iscache_free(struct pt_image_section_cache *c)
{
	pt_iscache_free(c);
}

int image_store_new_in(struct image_store **sp, struct symcache *syms,
		       struct pt_image_section_cache *iscache, struct error *e)
{
	struct image_store *s = calloc(1, sizeof(*s));

	*sp = NULL;
	if (!s)
		return err_runtime(e, -ENOMEM, "out of memory for a decoder image");
	s->syms = syms;
	s->own_iscache = !iscache;
	s->iscache = iscache ? iscache : image_iscache_new();
	s->base = pt_image_alloc("base");
	s->kernel = pt_image_alloc("kernel");
	if (!s->iscache || !s->base || !s->kernel) {
		image_store_free(s);
		return err_runtime(e, -ENOMEM, "out of memory for a decoder image");
	}
	*sp = s;
	return 0;
}

int image_store_new(struct image_store **sp, struct symcache *syms, struct error *e)
{
	return image_store_new_in(sp, syms, NULL, e);
}

void image_store_free(struct image_store *s)
{
	if (!s)
		return;
	while (s->procs) {
		struct image_proc *p = s->procs;

		s->procs = p->next;
		p->next = NULL;
		image_proc_put(p);
	}
	pt_image_free(s->base);
	pt_image_free(s->kernel);
	/* Images hold sections of the cache: free it after them. */
	if (s->own_iscache)
		pt_iscache_free(s->iscache);
	for (size_t i = 0; i < s->nr_secs; i++) {
		free(s->secs[i].path);
		file_unmap(&s->secs[i].map);
	}
	free(s->secs);
	free(s->bsecs);
	free(s);
}

/*
 * Base section @isid's bytes from the file, mapped here once: libipt's extent (the
 * section as added, cut at the file's end). False: not a base section, or no mapping.
 */
static bool map_section(struct image_store *s, int isid)
{
	struct section_info *sec = &s->secs[isid];
	const struct base_sec *b = NULL;

	sec->map_tried = true;
	for (size_t i = 0; i < s->nr_bsecs && !b; i++)
		if (s->bsecs[i].isid == isid)
			b = &s->bsecs[i];
	if (!b || file_map_input(AT_FDCWD, sec->path, false, &sec->map, NULL))
		return false;
	if (sec->map.len > sec->offset) {
		sec->code = (const uint8_t *)sec->map.p + sec->offset;
		sec->code_len = sec->map.len - sec->offset;
		if (b->size < sec->code_len)
			sec->code_len = b->size;
	} else {
		file_unmap(&sec->map);
	}
	return sec->code != NULL;
}

int image_read(struct image_store *s, int isid, uint64_t ip, uint8_t *buf, size_t n)
{
	struct section_info *sec;

	if (isid <= 0)
		return -pte_nomap;
	if (n > UINT16_MAX)
		n = UINT16_MAX;
	/*
	 * The base image's code from our own mapping: the same bytes as libipt's read of
	 * the file, without the iscache's and the section's locks (four lock/unlock pairs
	 * a read, at each block the fast path cuts and each instruction shape_of() reads).
	 * Anything else, and any read outside the section (libipt's error), goes to libipt.
	 */
	sec = (size_t)isid < s->nr_secs ? &s->secs[isid] : NULL;
	if (sec && sec->path && (sec->code || (!sec->map_tried && map_section(s, isid))) &&
	    ip >= sec->vaddr && ip - sec->vaddr < sec->code_len && n) {
		uint64_t at = ip - sec->vaddr;

		if (n > sec->code_len - at)
			n = (size_t)(sec->code_len - at);
		memcpy(buf, sec->code + at, n);
		return (int)n;
	}
	return pt_iscache_read(s->iscache, buf, (uint16_t)n, isid, ip);
}

struct pt_image *image_base(struct image_store *s)
{
	return s->base;
}

static int note_section(struct image_store *s, int isid, const char *path, uint64_t offset,
			uint64_t vaddr)
{
	struct section_info *n;

	if ((size_t)isid < s->nr_secs && s->secs[isid].path)
		return 0;
	if ((size_t)isid >= s->nr_secs) {
		size_t nr = (size_t)isid + 16;

		n = realloc(s->secs, nr * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + s->nr_secs, 0, (nr - s->nr_secs) * sizeof(*n));
		s->secs = n;
		s->nr_secs = nr;
	}
	s->secs[isid].path = strdup(path);
	if (!s->secs[isid].path)
		return -ENOMEM;
	s->secs[isid].offset = offset;
	s->secs[isid].vaddr = vaddr;
	return 0;
}

/* Add a file section through the cache, so that instructions carry its isid. */
static int add_section(struct image_store *s, struct pt_image *img, const char *path,
		       uint64_t offset, uint64_t size, uint64_t vaddr)
{
	int isid = pt_iscache_add_file(s->iscache, path, offset, size, vaddr);

	if (isid < 0)
		return isid;
	if (note_section(s, isid, path, offset, vaddr))
		return -pte_nomem;
	if (img == s->base) {
		if (s->nr_bsecs == s->cap_bsecs) {
			size_t cap = s->cap_bsecs ? 2 * s->cap_bsecs : 8;
			struct base_sec *n = realloc(s->bsecs, cap * sizeof(*n));

			if (!n)
				return -pte_nomem;
			s->bsecs = n;
			s->cap_bsecs = cap;
		}
		s->bsecs[s->nr_bsecs++] = (struct base_sec){ vaddr, size, isid };
	}
	return pt_image_add_cached(img, s->iscache, isid, NULL);
}

int image_base_find(struct image_store *s, uint64_t ip, uint64_t *end)
{
	/* libipt's rule: a section added later hides what it overlaps of older ones. */
	for (size_t i = s->nr_bsecs; i-- > 0;) {
		const struct base_sec *b = &s->bsecs[i];

		if (ip >= b->vaddr && ip - b->vaddr < b->size) {
			*end = b->vaddr + b->size;
			return b->isid;
		}
	}
	return 0;
}

/* libipt's words for a section that could not be added, with a hint at the usual cause. */
static int section_error(struct error *e, const char *path, int err)
{
	return err_usage_code(e, -EINVAL, "%s: cannot add to the decoder's image: %s", path,
			      pt_errstr(pt_errcode(err)));
}

static int elf_open(const char *path, int *fd, Elf **elf, struct error *e)
{
	*elf = NULL;
	*fd = file_open_input(AT_FDCWD, path, e);
	if (*fd < 0)
		return *fd;
	elf_version(EV_CURRENT);
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*elf || elf_kind(*elf) != ELF_K_ELF) {
		if (*elf)
			elf_end(*elf);
		close(*fd);
		*elf = NULL;
		return err_usage_code(e, -ENOEXEC, "%s: not an ELF file", path);
	}
	return 0;
}

static int load_segments(struct image_store *s, struct pt_image *img, const char *path,
			 uint64_t base, bool has_base, struct error *e)
{
	uint64_t bias = 0, lowest = UINT64_MAX;
	size_t nr = 0, i;
	int fd, ret, added = 0;
	GElf_Phdr ph;
	Elf *elf;

	ret = elf_open(path, &fd, &elf, e);
	if (ret)
		return ret;
	if (elf_getphdrnum(elf, &nr)) {
		ret = err_usage_code(e, -ENOEXEC, "%s: no program headers: %s", path,
				     elf_errmsg(-1));
		goto out;
	}
	for (i = 0; i < nr; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < lowest)
			lowest = ph.p_vaddr;
	/* ptxed's rule: BASE moves the lowest PT_LOAD there, the others with it. */
	if (has_base && lowest != UINT64_MAX)
		bias = base - lowest;
	for (i = 0; i < nr; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		ret = add_section(s, img, path, ph.p_offset, ph.p_filesz, ph.p_vaddr + bias);
		if (ret < 0) {
			ret = section_error(e, path, ret);
			goto out;
		}
		added++;
	}
	ret = added;
	if (!added)
		ret = err_usage_code(e, -ENOEXEC, "%s: no PT_LOAD segment with bytes in the file",
				     path);
out:
	elf_end(elf);
	close(fd);
	return ret;
}

int image_add_elf(struct image_store *s, struct pt_image *img, const char *path, uint64_t base,
		  bool has_base, struct error *e)
{
	return load_segments(s, img ? img : s->base, path, base, has_base, e);
}

int image_add_kcore(struct image_store *s, const char *path, uint64_t base, bool has_base,
		    struct error *e)
{
	return load_segments(s, s->kernel, path, base, has_base, e);
}

struct pt_image *image_kernel(struct image_store *s)
{
	return s->kernel;
}

int image_add_raw(struct image_store *s, struct pt_image *img, const char *path,
		  uint64_t offset, uint64_t size, uint64_t addr, struct error *e)
{
	int fd = file_open_input(AT_FDCWD, path, e), ret;
	off_t end;

	if (fd < 0)
		return fd;
	end = lseek(fd, 0, SEEK_END);
	close(fd);
	if (end < 0 || (uint64_t)end <= offset)
		return err_usage(e, "%s: offset 0x%" PRIx64 " is not inside the file (%lld bytes)",
				 path, offset, (long long)end);
	if (size && size > (uint64_t)end - offset)
		return err_usage(e, "%s: range 0x%" PRIx64 "-0x%" PRIx64 " runs past the end of "
				 "the file (%lld bytes)", path, offset, offset + size,
				 (long long)end);
	if (!size)
		size = (uint64_t)end - offset;
	ret = add_section(s, img ? img : s->base, path, offset, size, addr);
	return ret < 0 ? section_error(e, path, ret) : 0;
}

struct image_proc *image_proc_find(struct image_store *s, uint32_t pid)
{
	struct image_proc *p;

	for (p = s->procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

struct image_proc *image_proc_get(struct image_store *s, uint32_t pid)
{
	struct image_proc *p = image_proc_find(s, pid);
	char name[32];

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	snprintf(name, sizeof(name), "pid-%x", pid);
	p->image = pt_image_alloc(name);
	if (!p->image || pt_image_copy(p->image, s->kernel) < 0) {
		pt_image_free(p->image);
		free(p);
		return NULL;
	}
	p->pid = pid;
	p->refs = 1;
	p->next = s->procs;
	s->procs = p;
	return p;
}

void image_proc_hold(struct image_proc *p)
{
	p->refs++;
}

void image_proc_put(struct image_proc *p)
{
	if (!p || --p->refs > 0)
		return;
	pt_image_free(p->image);
	free(p->anon);
	free(p);
}

void image_proc_remove(struct image_store *s, uint32_t pid)
{
	struct image_proc **pp;

	for (pp = &s->procs; *pp; pp = &(*pp)->next) {
		struct image_proc *p = *pp;

		if (p->pid != pid)
			continue;
		*pp = p->next;
		p->next = NULL;
		image_proc_put(p);
		return;
	}
}

int image_proc_fork(struct image_store *s, uint32_t ppid, uint32_t pid)
{
	struct image_proc *parent, *child;

	image_proc_remove(s, pid);
	child = image_proc_get(s, pid);
	if (!child)
		return -ENOMEM;
	parent = image_proc_find(s, ppid);
	if (parent && pt_image_copy(child->image, parent->image) < 0)
		return -ENOMEM;
	if (parent)
		child->abi = parent->abi;
	if (parent && parent->nr_anon) {
		child->anon = malloc(parent->nr_anon * sizeof(*child->anon));
		if (!child->anon)
			return -ENOMEM;
		memcpy(child->anon, parent->anon, parent->nr_anon * sizeof(*child->anon));
		child->nr_anon = parent->nr_anon;
	}
	return 0;
}

/* Anonymous code: what a JIT maps and names in its perf map. */
static bool anon_code(const char *file)
{
	return !strcmp(file, "//anon") || !strncmp(file, "[anon:", 6) ||
	       !strncmp(file, "/memfd:", 7);
}

/* Remember an anonymous executable mapping (bounded: the oldest are forgotten). */
static void note_anon(struct image_proc *p, uint64_t addr, uint64_t len)
{
	struct image_anon *n;

	if (!len || addr + len < addr)
		return;
	if (p->nr_anon >= 4096) {
		memmove(p->anon, p->anon + 1, (p->nr_anon - 1) * sizeof(*p->anon));
		p->nr_anon--;
	}
	n = realloc(p->anon, (p->nr_anon + 1) * sizeof(*n));
	if (!n)
		return;
	p->anon = n;
	n[p->nr_anon].start = addr;
	n[p->nr_anon].end = addr + len;
	p->nr_anon++;
}

/* The ABI of an ELF file from its header, as libipt-sb reads it. */
static enum image_abi file_abi(const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return IMAGE_ABI_UNKNOWN;
	n = pread(fd, h, sizeof(h), 0);
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) || h[EI_VERSION] != EV_CURRENT)
		return IMAGE_ABI_UNKNOWN;
	if (h[EI_CLASS] == ELFCLASS64)
		return IMAGE_ABI_X64;
	if (h[EI_CLASS] == ELFCLASS32) {
		uint16_t machine = (uint16_t)(h[18] | h[19] << 8);

		return machine == EM_386 ? IMAGE_ABI_IA32 : machine == EM_X86_64 ?
		       IMAGE_ABI_X32 : IMAGE_ABI_UNKNOWN;
	}
	return IMAGE_ABI_UNKNOWN;
}

enum image_map_result image_proc_map(struct image_store *s, struct image_proc *p,
				     const char *file, uint64_t pgoff, uint64_t len, uint64_t addr,
				     const struct image_paths *paths, char *tried, size_t tried_len)
{
	const char *path = file;
	char buf[4096 + 256];

	snprintf(tried, tried_len, "%s", file);
	if (anon_code(file)) {
		note_anon(p, addr, len);
		return IMAGE_SKIPPED_SPECIAL;
	}
	if (file[0] == '[') {
		if (strcmp(file, "[vdso]"))
			return IMAGE_SKIPPED_SPECIAL;
		path = p->abi ? paths->vdso[p->abi] : NULL;
		if (!path)
			return IMAGE_NO_VDSO;
	} else if (!strcmp(file, "//anon") || strstr(file, " (deleted)")) {
		return IMAGE_SKIPPED_SPECIAL;
	} else if (paths->symfs && (snprintf(buf, sizeof(buf), "%s%s", paths->symfs, file),
				    !access(buf, F_OK))) {
		path = buf;	/* --sysroot: before the bundle's and the recorded path */
	} else if (paths->sysroot) {
		snprintf(buf, sizeof(buf), "%s%s", paths->sysroot, file);
		/* A bundle's sysroot holds what was archived; the rest is where it was. */
		if (!paths->fallback || !access(buf, F_OK))
			path = buf;
	}
	snprintf(tried, tried_len, "%s", path);
	if (!p->abi)
		p->abi = file_abi(path);
	if (add_section(s, p->image, path, pgoff, len, addr) < 0)
		return IMAGE_BAD_FILE;
	return IMAGE_MAPPED;
}

/* The newest anonymous executable mapping of @p holding @ip, or NULL. */
static const struct image_anon *find_anon(const struct image_proc *p, uint64_t ip)
{
	for (size_t i = p ? p->nr_anon : 0; i > 0; i--)
		if (ip >= p->anon[i - 1].start && ip < p->anon[i - 1].end)
			return &p->anon[i - 1];
	return NULL;
}

bool image_in_anon(struct image_store *s, uint32_t pid, uint64_t ip)
{
	return find_anon(image_proc_find(s, pid), ip);
}

static void resolve_section(struct image_store *s, int isid, uint64_t ip, struct image_sym *out)
{
	struct section_info *sec = &s->secs[isid];
	const struct symbol *sym;
	uint64_t off = sec->offset + (ip - sec->vaddr);

	if (!sec->known) {
		sec->syms = s->syms ? symcache_get(s->syms, sec->path) : NULL;
		sec->file = strrchr(sec->path, '/');
		sec->file = sec->file && sec->file[1] ? sec->file + 1 : sec->path;
		sec->known = true;
	}
	sym = sec->syms ? symfile_find(sec->syms, off) : NULL;
	out->object = sec->path;
	out->file = sec->file;
	out->name = sym ? sym->name : NULL;
	out->off = sym ? off - sym->offset : off;
}

void image_resolve_pid(struct image_store *s, uint32_t pid, int isid, uint64_t ip,
		       struct image_sym *out)
{
	const struct perfmap_sym *jit;
	const struct image_anon *anon;
	const struct perfmap *map;

	if (isid <= 0 || (size_t)isid >= s->nr_secs || !s->secs[isid].path) {
		anon = pid != UINT32_MAX ? find_anon(image_proc_find(s, pid), ip) : NULL;
		map = anon && s->syms ? symcache_perfmap(s->syms, pid) : NULL;
		jit = map ? perfmap_find(map, ip) : NULL;
		out->object = anon ? "//anon" : NULL;
		out->file = out->object;
		out->name = jit ? jit->name : NULL;
		out->off = jit ? ip - jit->start : anon ? ip - anon->start : 0;
		return;
	}
	resolve_section(s, isid, ip, out);
}

/* snprintf()'s bytes, by hand: @k bytes of @s appended to @buf at *@n, cut where @len ends it. */
static void put_n(char *buf, size_t len, size_t *n, const char *s, size_t k)
{
	if (*n + k >= len)
		k = len - 1 - *n;
	memcpy(buf + *n, s, k);
	*n += k;
}

static void put(char *buf, size_t len, size_t *n, const char *s)
{
	put_n(buf, len, n, s, strlen(s));
}

/* A literal's length is known: no strlen() (a name's spelling made four calls of it). */
#define put_lit(buf, len, n, s) put_n(buf, len, n, s, sizeof(s) - 1)

static void put_hex(char *buf, size_t len, size_t *n, uint64_t v)
{
	char t[20], *p = t + sizeof(t);

	do {
		*--p = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	put_n(buf, len, n, p, (size_t)(t + sizeof(t) - p));
}

size_t image_sym_format(const struct image_sym *y, char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return 0;
	if (y->name) {
		put(buf, len, &n, y->name);
		put_lit(buf, len, &n, "+0x");
		put_hex(buf, len, &n, y->off);
	} else if (!y->object) {
		put_lit(buf, len, &n, "[unknown]");
	} else {
		put_lit(buf, len, &n, "[unknown] (");
		put(buf, len, &n, y->file);
		put_lit(buf, len, &n, "+0x");
		put_hex(buf, len, &n, y->off);
		put_lit(buf, len, &n, ")");
	}
	buf[n] = '\0';
	return n;
}

void image_symbolize_pid(struct image_store *s, uint32_t pid, int isid, uint64_t ip, char *buf,
			 size_t len)
{
	struct image_sym y;

	image_resolve_pid(s, pid, isid, ip, &y);
	image_sym_format(&y, buf, len);
}

void image_symbolize(struct image_store *s, int isid, uint64_t ip, char *buf, size_t len)
{
	image_symbolize_pid(s, UINT32_MAX, isid, ip, buf, len);
}
