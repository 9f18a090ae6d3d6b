/* SPDX-License-Identifier: MIT */
/*
 * The output directory of a recording and the files in it. The directory
 * is made fresh (mode 0700) and every file in it is created new, 0600,
 * without following links, so a trace is private to its user and nothing
 * planted in the way is written through. --force moves an old bundle aside
 * and removes it only once the new recording has begun; a recording that
 * fails before that puts it back. man/ptcollect-bundle.5 documents the files.
 */
#ifndef PTC_BUNDLE_H
#define PTC_BUNDLE_H

#include <stdbool.h>

#include "error.h"
#include "manifest.h"
#include "stream.h"

#define BUNDLE_PROC	"proc.pevent"	/* COMM/MMAP2 of targets that were already running */
#define BUNDLE_SYSROOT	"sysroot"
#define BUNDLE_VDSO	"sysroot/vdso-x64.so"
#define BUNDLE_KALLSYMS	"kallsyms"
#define BUNDLE_KCORE	"kcore.text"	/* --kcore: the running kernel's text, raw */
#define BUNDLE_PERF_MAPS "perf-maps"	/* JIT perf maps of the traced processes: perf-PID.map */

struct bundle;

/*
 * May --force replace the directory @fd (named @path)? Only an empty one, or
 * a bundle whose manifest this ptcollect reads. 0, or a usage error saying why not.
 */
int bundle_replaceable(int fd, const char *path, struct error *e);

/*
 * Make the directory @path. With @replace, @path is a bundle (the plan
 * checked it): it is moved aside first, and checked again there.
 */
int bundle_create(struct bundle **b, const char *path, bool replace, struct error *e);
/*
 * Make @path's bundle under a hidden name beside it (import): @path itself
 * appears whole, at bundle_publish(), or never. Until then
 * bundle_staged_remove() removes it, from a signal handler too.
 */
int bundle_create_staged(struct bundle **b, const char *path, struct error *e);
int bundle_publish(struct bundle *b, struct error *e);
/* Async-signal-safe: remove the staged bundle not yet published, if any. */
void bundle_staged_remove(void);
int bundle_dirfd(const struct bundle *b);
const char *bundle_path(const struct bundle *b);

/* Create @name in the bundle (0600, new, no link followed): the descriptor, or -errno. */
int bundle_create_file(struct bundle *b, const char *name, struct error *e);
/* Create the directory @name in the bundle (0700). */
int bundle_mkdir(struct bundle *b, const char *name, struct error *e);
/* Create a stream's two files. */
int bundle_open_stream(struct bundle *b, struct stream *s, struct error *e);
/* Close them; a close error is a write error the kernel reported late. */
int bundle_close_stream(struct bundle *b, struct stream *s, struct error *e);

/*
 * Keep @bytes of the disk for the last manifest: a recording that fills the
 * disk can still say what it holds. bundle_unreserve() gives them back.
 * 0, or an error naming the room needed and the room free (-ENOSPC).
 */
int bundle_reserve(struct bundle *b, size_t bytes, struct error *e);
void bundle_unreserve(struct bundle *b);

int bundle_write_manifest(struct bundle *b, const struct manifest *m, struct error *e);

/* The recording has begun: remove the bundle that --force moved aside. */
int bundle_begun(struct bundle *b, struct error *e);
/* Nothing was recorded: remove what was made, and put a replaced bundle back. */
void bundle_discard(struct bundle *b);
void bundle_free(struct bundle *b);

/* @s's names and counts as the manifest records them. 0 or -ENOMEM. */
int bundle_describe_stream(const struct stream *s, struct mstream *m);

#endif
