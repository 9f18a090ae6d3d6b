// SPDX-License-Identifier: MIT
/*
 * --stats (or --timeline) alone: no instruction stream. The counts are the decoder's
 * (struct decode_stats, counted whatever the output), printed by the command.
 */
#include "render.h"

const struct renderer render_stats = {
	.name = "stats",
	.output = RENDER_OUT,
	.mode = DECODE_NONE,
};
