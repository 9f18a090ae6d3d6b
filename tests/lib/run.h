/* SPDX-License-Identifier: MIT */
/* Run a program and capture what it prints: the integration tests' one way to drive binaries. */
#ifndef PTC_TEST_RUN_H
#define PTC_TEST_RUN_H

#include <stdbool.h>
#include <stddef.h>

struct run_result {
	int status;		/* exit code, or 128+signal */
	char *out;		/* stdout, NUL-terminated (never NULL after run_*) */
	char *err;		/* stderr */
};

/*
 * Run argv (argv[0] searched in PATH) with extra environment "NAME=VALUE"
 * entries (NULL-terminated, may be NULL; "NAME=" with no value unsets), stdin
 * from /dev/null. Returns 0, or -errno when it could not be started.
 */
int run_argv(char *const argv[], char *const env[], struct run_result *r);
/*
 * run_argv() for a long batch (a script of thousands of decodes): bounded by its progress,
 * not by a guess of its length on a loaded machine. The test's watchdog is re-armed to
 * @idle_secs each time the program's CPU time and its reaped children's grows (checked every
 * second), so it fails, naming the batch, only once that time stands still for @idle_secs.
 */
int run_argv_busy(char *const argv[], char *const env[], struct run_result *r,
		  unsigned idle_secs);
/* The same for ptcollect ($PTCOLLECT_BIN) with the given arguments. */
int run_ptcollect(char *const env[], struct run_result *r, const char *arg, ...)
	__attribute__((sentinel));
void run_free(struct run_result *r);

/* An argv built as a test goes: { .n = 0 } is empty; v[n] is always NULL. */
#define ARGS_MAX 64
struct args {
	char *v[ARGS_MAX];
	int n;
};

/* Append @s (kept, not copied), or fail the test when it is full. */
void args_add(struct args *a, const char *s);
/* Append each of the NULL-terminated @list. */
void args_addv(struct args *a, const char *const *list);

/*
 * ptcollect @args (without argv[0]) run with its fast paths and with libipt's decoders alone
 * (PTCOLLECT_DECODE_NO_FAST=1): the test fails unless both end alike and print the same
 * stdout, not empty, and the same stderr; @what names the run in the messages. The fast
 * run's result in @fast, for the caller's own checks (run_free() it).
 */
void run_fast_same(const struct args *args, const char *what, struct run_result *fast);

/*
 * A target that lives until the test ends it: argv started with its stdin and stdout on pipes
 * (stderr inherited). run_wait_line() reads its stdout until a line equal to @line (its
 * readiness), for at most @secs seconds: 0, or -1 at its end or the bound. run_end() closes
 * its stdin (the target's signal to end: spawner ... stdin), then kills it if it has not
 * ended within @secs, and reaps it: its exit code, or 128+signal.
 */
struct run_child {
	int pid;
	int in, out;
};

int run_start(char *const argv[], struct run_child *c);
int run_wait_line(struct run_child *c, const char *line, int secs);
int run_end(struct run_child *c, int secs);
/*
 * One line from @fd, without its '\n' (at most 8191 bytes), each byte within @secs seconds,
 * else a failed assertion that says what came so far; in a buffer the next call reuses.
 */
char *run_read_line(int fd, int secs);
/* Its stdout to the end into @buf (NUL-terminated), for at most @secs seconds: the bytes, or -1. */
long run_read_all(struct run_child *c, char *buf, size_t size, int secs);

/*
 * Poll /proc until @ready(@pid, @arg) holds, every millisecond, for at most @secs seconds:
 * whether it held. False at once when @pid is the test's child and has ended (not reaped)
 * while @ready does not hold: what it waited for will not come. The conditions below read /proc/PID.
 */
bool run_poll(int pid, bool (*ready)(int pid, const void *arg), const void *arg, int secs);
/*
 * Until the file @path exists, while the test's child @pid lives (it is not reaped here):
 * fails at once, naming @what and @pid's exit status, when @pid has ended without making
 * it, and after @secs seconds as the last resort against a real hang (a loaded machine is
 * slow, not stuck: give a generous bound). The suite's watchdog names @what too.
 */
void run_wait_file(int pid, const char *path, const char *what, int secs);
/* Whether the test's child @pid has ended (not reaped here); its wait status in *@st. */
bool run_ended(int pid, int *st);
/* /proc/PID/stat's state is the letter *@arg ('Z': exited, not reaped). */
bool run_proc_state(int pid, const void *arg);
/* /proc/PID/maps has a mapping whose path contains the string @arg. */
bool run_proc_maps(int pid, const void *arg);

/* $PTCOLLECT_BIN, $PTCOLLECT_SRCDIR, $PTCOLLECT_TESTPROGS/NAME (abort when unset). */
const char *run_bin(void);
const char *run_srcdir(void);
/* Path of a test program, or of a file under the checkout (malloc'd: free it). */
char *run_testprog(const char *name);
char *run_srcpath(const char *rel);
/*
 * The reference data (libipt's tools in oracle/, real traces in traces/), which is not in the
 * repository: $PTCOLLECT_SHARED, else the checkout's ../shared. run_shared() returns
 * DIR/REL (malloc'd) when it exists; when it does not, the test is skipped with a message
 * naming the path and the variable, or fails instead when PTCOLLECT_REQUIRE_SHARED=1 (what
 * .ci/run sets: CI has the data, so a missing oracle is an error there, not a skip).
 */
char *run_shared(const char *rel);
/* libipt's TOOL (ptxed, ptdump, pttc): run_shared("oracle/TOOL"), runnable, or skip/fail. */
char *run_oracle(const char *tool);

#endif
