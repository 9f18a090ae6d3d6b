/* SPDX-License-Identifier: MIT */
/* A manifest with every field set, each to a value no other field has (the round-trip test's). */
#ifndef PTC_TEST_MFILL_H
#define PTC_TEST_MFILL_H

#include "manifest.h"

void mfill(struct manifest *m);

#endif
