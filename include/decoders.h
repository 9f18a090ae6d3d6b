/* SPDX-License-Identifier: MIT */
/*
 * The command lines of libipt's decoders for a bundle's streams, built from
 * the manifest and where the bundle is now. libipt applies options in order:
 * the CPU and timing configuration, then the sideband setup, the primary
 * sideband of this stream, the others, and last the trace.
 */
#ifndef PTC_DECODERS_H
#define PTC_DECODERS_H

#include <stdbool.h>

#include "manifest.h"

enum decoder {
	DECODER_PTXED,
	DECODER_PTDUMP,
};

/*
 * Whether the libipt ptcollect links knows the recorded CPU (its errata
 * table does); the lines say --cpu none when it does not, as a decoder that
 * does not know a CPU refuses it.
 */
bool decoder_cpu_known(const struct manifest *m);
/*
 * NULL-terminated argv for stream @i of @m in the bundle @dir; NULL on ENOMEM.
 * With a sysroot (after archive), --pevent:sysroot DIR/sysroot comes before
 * the sideband files, so libipt finds every mapped file in the bundle.
 */
char **decoder_argv(const struct manifest *m, const char *dir, int i, enum decoder tool);
/* The same for trace file @trace (a snapshot's window) of stream @i. */
char **decoder_argv_trace(const struct manifest *m, const char *dir, int i, const char *trace,
			  enum decoder tool);
/*
 * The same without the other streams' sideband (--pevent:secondary of proc.pevent stays):
 * for a bundle of many streams, where those lists make the lines quadratic in the streams.
 */
char **decoder_argv_own(const struct manifest *m, const char *dir, int i, const char *trace,
			enum decoder tool);
/*
 * --pevent:secondary and its file for every stream's sideband, in the streams' order (a
 * stream's line takes all but its own): what decoder_argv_own() leaves out.
 */
char **decoder_secondary_argv(const struct manifest *m, const char *dir);
/*
 * Up to this many streams (a machine of 64 CPUs), each ptxed line names every other
 * stream's sideband and runs as it is; above, those lists would grow with the square of
 * the streams (48 MB of lines for 1,000), so info says them once and the script names
 * them once, in a function each ptxed line calls.
 */
#define DECODER_INLINE_SECONDARY 64
bool decoder_secondary_apart(const struct manifest *m);
/* The stream a snapshot's window belongs to (its sideband is the primary), or -1. */
int decoder_window_stream(const struct manifest *m, const struct mwindow *w);
void decoder_argv_free(char **argv);

/* A POSIX shell command line that reads back as exactly @argv; malloc'd, NULL on ENOMEM. */
char *decoder_shell_join(char *const *argv);

/*
 * A POSIX shell script that runs ptxed and ptdump on every stream of @m that
 * holds bytes (in snapshot mode, every window that does), each with the
 * arguments decoder_argv() gives, every path in the bundle quoted below the
 * bundle the script finds when it runs: its first argument, else the
 * directory the script is in when it holds manifest.json, else @dir (make it
 * absolute for a script that runs from any directory); above
 * DECODER_INLINE_SECONDARY streams the other streams' sideband is listed once, in a
 * shell function. ptcollect-info(1) documents its usage. malloc'd; NULL on ENOMEM.
 */
char *decoder_script(const struct manifest *m, const char *dir);

#endif
