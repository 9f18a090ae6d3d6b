// SPDX-License-Identifier: MIT
/* The kernel's symbols and text, kept in the bundle for decoding kernel addresses. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "kallsyms.h"
#include "kimage.h"

#define KALLSYMS_MAX (256u << 20)

/* Where the kernel starts and where its text is, from its symbols. */
static void find_text(const struct kallsyms *ks, struct kimage *k)
{
	const struct ksym *text = kallsyms_find(ks, "_text"), *stext = kallsyms_find(ks, "_stext");
	const struct ksym *etext = kallsyms_find(ks, "_etext");

	k->start = text && text->addr ? text->addr : stext ? stext->addr : 0;
	k->text_start = stext ? stext->addr : 0;
	k->text_end = etext ? etext->addr : 0;
}

/* The next symbol of the kernel itself at or after *@i, or NULL. */
static const struct ksym *next_own(const struct kallsyms *ks, size_t *i)
{
	while (*i < ks->nr && ks->syms[*i].module)
		(*i)++;
	return *i < ks->nr ? &ks->syms[(*i)++] : NULL;
}

static bool same_symbols(const struct kallsyms *a, const struct kallsyms *b)
{
	size_t i = 0, j = 0;
	const struct ksym *x, *y;

	do {
		x = next_own(a, &i);
		y = next_own(b, &j);
		if (!x || !y)
			break;
	} while (x->addr == y->addr && x->type == y->type && !strcmp(x->name, y->name));
	return !x && !y;
}

int kimage_same_kernel(int dirfd, const char *saved, const char *running, struct kimage *k,
		       struct error *e)
{
	struct kallsyms was, now;
	int ret;

	memset(k, 0, sizeof(*k));
	ret = kallsyms_load_at(&was, dirfd, saved, e);
	if (ret)
		return ret;
	ret = kallsyms_load(&now, running, e);
	if (ret) {
		kallsyms_free(&was);
		return ret;
	}
	find_text(&now, k);
	if (!k->start)
		ret = err_runtime(e, -EPERM, "%s shows no kernel addresses (kptr_restrict): run "
				  "as root", running);
	else if (!same_symbols(&was, &now))
		ret = err_runtime(e, -ESTALE, "the running kernel is not the one recorded (its "
				  "symbols differ from the bundle's %s): it was rebooted or "
				  "replaced", saved);
	kallsyms_free(&was);
	kallsyms_free(&now);
	return ret;
}

int kimage_save_kallsyms(const char *path, int fd, struct kimage *k, struct error *e)
{
	struct kallsyms ks;
	size_t len;
	char *buf;
	int ret;

	memset(k, 0, sizeof(*k));
	ret = file_read_all(AT_FDCWD, path, KALLSYMS_MAX, &buf, &len, e);
	if (ret)
		return ret;
	ret = write_all(fd, buf, len);
	free(buf);
	if (ret)
		return err_runtime(e, ret, "copying %s: %s", path, strerror(-ret));
	ret = kallsyms_load(&ks, path, e);
	if (ret)
		return ret;
	find_text(&ks, k);
	kallsyms_free(&ks);
	if (!k->start)
		return err_runtime(e, -EPERM, "%s shows no kernel addresses (kptr_restrict): run "
				   "as root to trace the kernel", path);
	return 0;
}

int kimage_save_text(const char *kcore, int out, const struct kimage *k, struct error *e)
{
	uint64_t start = k->text_start, size = k->text_end - k->text_start;
	Elf *elf = NULL;
	int in, ret = -ENOENT;
	size_t n;

	if (!start || k->text_end <= start)
		return err_runtime(e, -ENOENT, "--kcore: kallsyms gives no _stext/_etext");
	in = open(kcore, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return err_runtime(e, -errno, "--kcore: %s: %s", kcore, strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(in, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &n)) {
		ret = err_runtime(e, -EINVAL, "--kcore: %s is not an ELF core file", kcore);
		goto out;
	}
	for (size_t i = 0; i < n && ret == -ENOENT; i++) {
		GElf_Phdr ph;
		uint64_t done = 0;
		char buf[65536];

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    start < ph.p_vaddr || size > ph.p_memsz ||
		    start - ph.p_vaddr > ph.p_memsz - size)	/* no sum that can wrap */
			continue;
		ret = 0;
		while (!ret && done < size) {
			size_t want = size - done < sizeof(buf) ? size - done : sizeof(buf);
			ssize_t r = pread(in, buf, want, (off_t)(ph.p_offset + start - ph.p_vaddr +
								  done));

			if (r <= 0)
				ret = r < 0 ? -errno : -EIO;
			else
				ret = write_all(out, buf, (size_t)r);
			done += r > 0 ? (uint64_t)r : 0;
		}
		if (ret)
			err_runtime(e, ret, "--kcore: copying the kernel text: %s", strerror(-ret));
	}
	if (ret == -ENOENT)
		err_runtime(e, ret, "--kcore: no segment of %s holds the kernel text", kcore);
out:
	if (elf)
		elf_end(elf);
	close(in);
	return ret;
}
