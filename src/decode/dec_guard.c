// SPDX-License-Identifier: MIT
/*
 * What is resident of a chunk's trace mapped from its file: pages dropped behind the
 * reader, and the SIGSEGV guard that bounds what libipt touches (a process-wide handler
 * and per-thread state, kept apart from the decoding it watches).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dec_guard.h"

/*
 * The trace is mapped from its file and read once, front to back: pages well behind the
 * decoder are dropped, so that resident memory does not grow with the trace.
 */
void drop_behind(struct dec *x, uint64_t off, uint64_t keep)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), base, from, to;

	/* Dropped pages of a file mapping are read again; of memory, they would be zeroes. */
	if (off < keep || !x->c->mapped)
		return;
	base = (uintptr_t)(x->c->pt + x->c->begin);
	/*
	 * The page a chunk starts in may hold the end of the chunk before, still being read:
	 * dropping it costs that reader a fault (the bytes are the file's), nothing more.
	 */
	from = (base + x->dropped) & ~(page - 1);
	to = (base + off - keep + (keep ? 0 : page - 1)) & ~(page - 1);
	if (to > from && !madvise((void *)from, to - from, MADV_DONTNEED))
		x->dropped = to - base;
}

/*
 * libipt reads a run of PAD or timing packets in one call (1 GiB of PAD after a PSB is
 * one pt_insn_next()), and a trace of errors returns no instruction between its
 * resyncs: dropping pages between the decoder's calls does not bound what it touches.
 * Nor is its reading front to back: libipt 2.2 reads ahead on a copy of its decoder (at
 * a sync, the events after the PSB+, up to the end of a PAD run) and then reads the same
 * bytes again. So the pages wholly inside the chunk's range are made unreadable but for
 * a window, a little behind and a step ahead of where the reader last was. A touch
 * outside the window (a SIGSEGV in the decoder's own thread, within libipt or not) drops
 * the window's pages, moves it to the page touched and lets the read go on: the bytes
 * read are the file's, the offsets libipt reports its own, and no more than the window
 * is resident, whichever way the reader goes. The reader of a neighbouring chunk never
 * touches these pages.
 */
#define GUARD_STEP (1u << 20)

static __thread struct guard *thread_guard;
static struct sigaction next_segv;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static bool guard_ready;
static uintptr_t guard_page;

static uintptr_t clamp(uintptr_t v, uintptr_t lo, uintptr_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The drop of the pages of [from, to) outside the window [wlo, whi). */
static void drop_outside(uintptr_t from, uintptr_t to, uintptr_t wlo, uintptr_t whi)
{
	uintptr_t a = clamp(wlo, from, to), b = clamp(whi, from, to);

	if (a > from)
		madvise((void *)from, a - from, MADV_DONTNEED);
	if (to > b)
		madvise((void *)b, to - b, MADV_DONTNEED);
}

/* The reader touched @addr, outside the window: the window moves there. */
static bool guard_move(struct guard *g, uintptr_t addr)
{
	uintptr_t cur = addr & ~(guard_page - 1);
	uintptr_t wlo = cur - g->lo > KEEP_BEHIND ? cur - KEEP_BEHIND : g->lo;
	uintptr_t whi = g->hi - cur > GUARD_STEP ? cur + GUARD_STEP : g->hi;

	if (mprotect((void *)wlo, whi - wlo, PROT_READ))
		return false;
	if (g->whi) {
		/*
		 * What leaves the window is dropped, and unreadable again. In that order: the
		 * drop clears the pages' entries (a TLB flush, at -J 2 the other CPU's too),
		 * and then the protection finds none to change and flushes nothing; the other
		 * way round, both flushed. Only this thread reads these pages meanwhile.
		 */
		uintptr_t a = clamp(wlo, g->wlo, g->whi), b = clamp(whi, g->wlo, g->whi);

		drop_outside(g->wlo, g->whi, wlo, whi);
		if (a > g->wlo)
			mprotect((void *)g->wlo, a - g->wlo, PROT_NONE);
		if (g->whi > b)
			mprotect((void *)b, g->whi - b, PROT_NONE);
	}
	g->wlo = wlo;
	g->whi = whi;
	return true;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	struct guard *g = thread_guard;
	uintptr_t a = (uintptr_t)si->si_addr;
	int saved = errno;

	if (g && a >= g->lo && a < g->hi && !(a >= g->wlo && a < g->whi)) {
		if (guard_move(g, a)) {
			errno = saved;
			return;
		}
		/* The read cannot go on: the fault again, without this handler. */
		signal(SIGSEGV, SIG_DFL);
		return;
	}
	/* Not a guard: whatever handled SIGSEGV before does (the default: the fault again). */
	if (next_segv.sa_flags & SA_SIGINFO)
		next_segv.sa_sigaction(sig, si, uc);
	else if (next_segv.sa_handler != SIG_DFL && next_segv.sa_handler != SIG_IGN)
		next_segv.sa_handler(sig);
	else
		signal(SIGSEGV, SIG_DFL);
}

static void guard_install(void)
{
	struct sigaction sa, now;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	guard_page = (uintptr_t)sysconf(_SC_PAGESIZE);
	if (sigaction(SIGSEGV, &sa, &next_segv) || sigaction(SIGSEGV, NULL, &now))
		return;
	/* A sanitizer may keep its own handler: then there are no guards. */
	guard_ready = (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_segv;
}

void guard_begin(struct dec *x, struct guard *g)
{
	uintptr_t base = (uintptr_t)(x->c->pt + x->c->begin), lo, hi;

	memset(g, 0, sizeof(*g));
	if (!x->c->mapped || pthread_once(&guard_once, guard_install) || !guard_ready)
		return;
	lo = (base + guard_page - 1) & ~(guard_page - 1);
	hi = (base + (uintptr_t)(x->c->end - x->c->begin)) & ~(guard_page - 1);
	/* A range no longer than the window needs none. */
	if (hi <= lo || hi - lo <= KEEP_BEHIND + GUARD_STEP ||
	    mprotect((void *)lo, hi - lo, PROT_NONE))
		return;
	g->lo = lo;
	g->hi = hi;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	thread_guard = g;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* The reader starts at the chunk's start: the window does too. */
	if (!guard_move(g, lo)) {
		thread_guard = NULL;
		mprotect((void *)lo, hi - lo, PROT_READ);
		memset(g, 0, sizeof(*g));
	}
}

void guard_end(struct dec *x, struct guard *g)
{
	uintptr_t base = (uintptr_t)(x->c->pt + x->c->begin);

	if (!g->hi)
		return;
	thread_guard = NULL;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mprotect((void *)g->lo, g->hi - g->lo, PROT_READ);
	/* Outside the window, nothing is resident; the pages before it count as dropped. */
	if (g->wlo > base && g->wlo - base > x->dropped)
		x->dropped = g->wlo - base;
}
