// SPDX-License-Identifier: MIT
/*
 * Threads on the traced CPUs that stop their CPU's stream the moment a
 * trigger fires. They never wait for the loop: a thread stops its stream,
 * says so (froze), and looks at the release count again; the loop counts a
 * release, then takes back every froze and starts those streams. Each side
 * writes first and reads the other's after (sequentially consistent), so at
 * least one of them sees a freeze that raced a release, and the exchange on
 * froze lets exactly one of them start the stream again.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "events.h"
#include "freeze.h"

struct watcher {
	struct freezer *fz;
	struct stream *st;
	pthread_t th;		/* running for every watcher below n */
	int froze;		/* atomic: it stopped its stream, no release has taken it back */
};

struct freezer {
	int trigger_fd;
	int quit_fd;		/* an eventfd: the threads end */
	pthread_mutex_t mu;	/* only to sleep until the next release */
	pthread_cond_t cv;
	unsigned long gen;	/* atomic: releases so far */
	int resume;		/* atomic: tracing goes on after a release */
	int quit;		/* atomic */
	int n;
	struct watcher w[];
};

#define LOAD(p)		__atomic_load_n(p, __ATOMIC_SEQ_CST)
#define STORE(p, v)	__atomic_store_n(p, v, __ATOMIC_SEQ_CST)

/* A freeze nobody needs any more: start the stream again, unless another did. */
static void take_back(struct watcher *w, bool resume)
{
	if (__atomic_exchange_n(&w->froze, 0, __ATOMIC_SEQ_CST) && resume)
		events_enable(w->st);
}

static void sleep_past(struct freezer *fz, unsigned long gen)
{
	pthread_mutex_lock(&fz->mu);
	while (LOAD(&fz->gen) == gen && !LOAD(&fz->quit))
		pthread_cond_wait(&fz->cv, &fz->mu);
	pthread_mutex_unlock(&fz->mu);
}

static void *watch(void *arg)
{
	struct sched_param rt = { .sched_priority = 1 };
	struct watcher *w = arg;
	struct freezer *fz = w->fz;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->st->cpu, &set);
	/* Not pinned, it still freezes early, only at the price of an interrupt. */
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	/*
	 * Where the user may: the lowest real-time priority, so that a fire
	 * preempts the traced thread at once. The thread only sleeps, stops a
	 * stream and sleeps again.
	 */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt);
	while (!LOAD(&fz->quit)) {
		unsigned long gen = LOAD(&fz->gen);
		struct pollfd pf[2] = {
			{ .fd = fz->trigger_fd, .events = POLLIN },
			{ .fd = fz->quit_fd, .events = POLLIN },
		};

		poll(pf, 2, -1);
		if (LOAD(&fz->quit))
			break;
		/* A release since the poll: those fires were acted on already. */
		if (LOAD(&fz->gen) == gen) {
			events_disable(w->st);
			STORE(&w->froze, 1);
			if (LOAD(&fz->gen) != gen)
				take_back(w, LOAD(&fz->resume));
		}
		sleep_past(fz, gen);
	}
	return NULL;
}

int freeze_start(struct freezer **out, struct stream *streams, int n, int trigger_fd,
		 struct error *e)
{
	struct freezer *fz = calloc(1, sizeof(*fz) + (size_t)n * sizeof(fz->w[0]));
	int ret = 0;

	*out = NULL;
	if (!fz)
		return err_runtime(e, -ENOMEM, "out of memory");
	fz->trigger_fd = trigger_fd;
	fz->resume = 1;
	fz->quit_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fz->quit_fd < 0) {
		ret = err_runtime(e, -errno, "eventfd: %s", strerror(errno));
		free(fz);
		return ret;
	}
	pthread_mutex_init(&fz->mu, NULL);
	pthread_cond_init(&fz->cv, NULL);
	*out = fz;
	for (int i = 0; i < n; i++) {
		struct watcher *w = &fz->w[fz->n];

		if (streams[i].cpu < 0)
			continue;
		w->fz = fz;
		w->st = &streams[i];
		ret = -pthread_create(&w->th, NULL, watch, w);
		if (ret)
			return err_runtime(e, ret, "starting a freeze thread: %s", strerror(-ret));
		fz->n++;
	}
	return 0;
}

void freeze_release(struct freezer *fz, bool resume)
{
	if (!fz)
		return;
	STORE(&fz->resume, resume);
	pthread_mutex_lock(&fz->mu);
	__atomic_add_fetch(&fz->gen, 1, __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&fz->cv);
	pthread_mutex_unlock(&fz->mu);
	for (int i = 0; i < fz->n; i++)
		take_back(&fz->w[i], resume);
}

void freeze_stop(struct freezer *fz)
{
	uint64_t one = 1;
	ssize_t w;

	if (!fz)
		return;
	pthread_mutex_lock(&fz->mu);
	STORE(&fz->quit, 1);
	pthread_cond_broadcast(&fz->cv);
	pthread_mutex_unlock(&fz->mu);
	/* Wakes the threads in poll(); the broadcast, those asleep until a release. */
	w = write(fz->quit_fd, &one, sizeof(one));
	(void)w;
	for (int i = 0; i < fz->n; i++)
		pthread_join(fz->w[i].th, NULL);
	pthread_cond_destroy(&fz->cv);
	pthread_mutex_destroy(&fz->mu);
	close(fz->quit_fd);
	free(fz);
}
