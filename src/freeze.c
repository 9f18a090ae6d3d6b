// SPDX-License-Identifier: MIT
/* Threads on the traced CPUs that stop their CPU's stream the moment a trigger fires. */
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
	pthread_t th;
	bool running;
	bool froze;		/* stopped its stream since the last release */
};

struct freezer {
	int trigger_fd;
	int quit_fd;		/* an eventfd: the threads end */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned long gen;	/* counts releases */
	bool quit;
	int n;
	struct watcher w[];
};

static void *watch(void *arg)
{
	struct watcher *w = arg;
	struct freezer *fz = w->fz;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(w->st->cpu, &set);
	/* Not pinned, it still freezes early, only at the price of an interrupt. */
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_mutex_lock(&fz->mu);
	while (!fz->quit) {
		unsigned long gen = fz->gen;
		struct pollfd pf[2] = {
			{ .fd = fz->trigger_fd, .events = POLLIN },
			{ .fd = fz->quit_fd, .events = POLLIN },
		};

		pthread_mutex_unlock(&fz->mu);
		poll(pf, 2, -1);
		pthread_mutex_lock(&fz->mu);
		/* A release since the poll: those fires were acted on already. */
		if (fz->gen == gen && !fz->quit && !w->froze) {
			events_ioctl(w->st, PERF_EVENT_IOC_DISABLE);
			w->froze = true;
		}
		while (fz->gen == gen && !fz->quit)
			pthread_cond_wait(&fz->cv, &fz->mu);
	}
	pthread_mutex_unlock(&fz->mu);
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
		w->running = true;
		fz->n++;
	}
	return 0;
}

void freeze_hold(struct freezer *fz)
{
	if (fz)
		pthread_mutex_lock(&fz->mu);
}

void freeze_release(struct freezer *fz, bool resume)
{
	if (!fz)
		return;
	for (int i = 0; i < fz->n; i++) {
		if (fz->w[i].froze && resume)
			events_ioctl(fz->w[i].st, PERF_EVENT_IOC_ENABLE);
		fz->w[i].froze = false;
	}
	fz->gen++;
	pthread_cond_broadcast(&fz->cv);
	pthread_mutex_unlock(&fz->mu);
}

void freeze_stop(struct freezer *fz)
{
	uint64_t one = 1;
	ssize_t w;

	if (!fz)
		return;
	pthread_mutex_lock(&fz->mu);
	fz->quit = true;
	pthread_cond_broadcast(&fz->cv);
	pthread_mutex_unlock(&fz->mu);
	/* Wakes the threads in poll(); the broadcast, those in the wait. */
	w = write(fz->quit_fd, &one, sizeof(one));
	(void)w;
	for (int i = 0; i < fz->n; i++)
		if (fz->w[i].running)
			pthread_join(fz->w[i].th, NULL);
	pthread_cond_destroy(&fz->cv);
	pthread_mutex_destroy(&fz->mu);
	close(fz->quit_fd);
	free(fz);
}
