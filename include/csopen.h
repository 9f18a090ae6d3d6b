/* SPDX-License-Identifier: MIT */
/*
 * cs_open() for code that disassembles in several threads at once. Capstone 4's Intel
 * printer sorts a static table at the first instruction it prints in a process, without a
 * lock (X86_insn_reg_intel()): decode workers printing their first instructions together
 * sorted it together, and one could search it half sorted (ThreadSanitizer saw the two
 * sorts, -J 4). The first csopen() prints one instruction under pthread_once(), so the
 * table is sorted before any handle is returned.
 */
#ifndef PTC_CSOPEN_H
#define PTC_CSOPEN_H

#include <capstone/capstone.h>

cs_err csopen(cs_mode mode, csh *h);

#endif
