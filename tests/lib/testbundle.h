/* SPDX-License-Identifier: MIT */
/* Bundles the tests write through the recorder's own code (bundle, manifest, stream). */
#ifndef PTC_TEST_BUNDLE_H
#define PTC_TEST_BUNDLE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "manifest.h"

/* The manifest of a workload recording on a Skylake-like machine, with @pc's time conversion. */
void testbundle_describe(struct manifest *m, const struct perf_event_mmap_page *pc);
/*
 * Make the bundle @dir (it must not exist): two streams of 4096 bytes each
 * with losses, described by @m (consumed); @finish: closed cleanly, with a
 * stop reason, else as if the collector was killed while recording.
 */
void testbundle_write_manifest(const char *dir, struct manifest *m, bool finish);
/* The same with @nr streams (cpu0 to cpu@nr-1), each as those two. */
void testbundle_write_streams(const char *dir, struct manifest *m, bool finish, int nr);
/* The same with testbundle_describe()'s manifest. */
void testbundle_write(const char *dir, const struct perf_event_mmap_page *pc, bool finish);
/*
 * The manifest of a system-wide recording on a Skylake server (sample_type 0x10086): its
 * command `ptcollect record -a` and @extra (NULL, or one more argument such as "-S"); no
 * stream yet.
 */
void testbundle_describe_cpu(struct manifest *m, const char *extra);
/*
 * A perf record of @type (@body, @len bytes) with the trailer of sample_type 0x10086: pid
 * and tid 4242, @time, cpu 0, id 1; appended to @f.
 */
void testbundle_sb_record(FILE *f, uint32_t type, const void *body, size_t len, uint64_t time);
/* A fresh name under /tmp for a bundle (nothing there yet), malloc'd. */
char *testbundle_dir(void);
/* Remove @dir and all below it, links as links (any name: no shell involved). */
void testbundle_remove(const char *dir);

#endif
