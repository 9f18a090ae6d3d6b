// SPDX-License-Identifier: MIT
/* The data ring and AUX area of a perf event: mapping, draining, snapshots. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "auxring.h"
#include "monotime.h"

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

int auxring_mmap(struct auxring *r, int fd, uint64_t data_bytes, uint64_t aux_bytes,
		 bool overwrite)
{
	uint64_t pg = page_size();
	void *base, *aux;

	memset(r, 0, sizeof(*r));
	r->data_map_len = pg + data_bytes;
	/* The data ring is always read-write: we publish data_tail. */
	base = mmap(NULL, r->data_map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	r->pc = base;
	r->pc->aux_offset = r->data_map_len;
	r->pc->aux_size = aux_bytes;
	/* Read-only AUX is how the kernel is told to overwrite (snapshot mode). */
	aux = mmap(NULL, aux_bytes, overwrite ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, (off_t)r->data_map_len);
	if (aux == MAP_FAILED) {
		int e = errno;

		munmap(base, r->data_map_len);
		r->pc = NULL;
		return -e;
	}
	auxring_attach(r, base, data_bytes, aux, aux_bytes, overwrite);
	r->mapped = true;
	r->data_map_len = pg + data_bytes;
	return 0;
}

void auxring_attach(struct auxring *r, void *base, uint64_t data_size, void *aux,
		    uint64_t aux_size, bool overwrite)
{
	memset(r, 0, sizeof(*r));
	r->pc = base;
	r->data = (uint8_t *)base + page_size();
	r->data_size = data_size;
	r->aux = aux;
	r->aux_size = aux_size;
	r->overwrite = overwrite;
	r->head_wait_ns = AUXRING_HEAD_WAIT_NS;
}

void auxring_unmap(struct auxring *r)
{
	free(r->snap_ref);
	r->snap_ref = NULL;
	if (r->mapped) {
		munmap(r->aux, r->aux_size);
		munmap(r->pc, r->data_map_len);
	}
	r->pc = NULL;
	r->mapped = false;
}

uint32_t auxring_watermark(uint64_t aux_bytes)
{
	/* A quarter: a wakeup leaves three quarters of room while we drain. */
	uint64_t w = aux_bytes / 4;

	if (w < page_size())
		w = page_size();
	return w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
}

/*
 * Write the pieces @iov[0..@n) (at most two: a ring's bytes before and after
 * the wrap) with one writev(), continuing through short writes and EINTR.
 * *@done gets what reached the file even when it fails (ENOSPC after a
 * partial write, for example).
 */
static int writev_full(int fd, struct iovec *iov, int n, uint64_t *done)
{
	uint64_t want = 0;

	*done = 0;
	for (int i = 0; i < n; i++)
		want += iov[i].iov_len;
	while (*done < want) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		*done += (uint64_t)w;
		/* Drop what was written: whole pieces, then a part of the next. */
		while (n && (size_t)w >= iov[0].iov_len) {
			w -= (ssize_t)iov[0].iov_len;
			iov++;
			n--;
		}
		if (n) {
			iov[0].iov_base = (uint8_t *)iov[0].iov_base + w;
			iov[0].iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* The ring bytes [@pos, @pos + @n) as at most two pieces, split at the wrap. */
static int ring_iov(uint8_t *base, uint64_t size, uint64_t pos, uint64_t n, struct iovec *iov)
{
	uint64_t off = pos & (size - 1);

	iov[0].iov_base = base + off;
	iov[0].iov_len = n;
	if (off + n <= size)
		return 1;
	iov[0].iov_len = size - off;
	iov[1].iov_base = base;
	iov[1].iov_len = n - iov[0].iov_len;
	return 2;
}

static int drain_aux(struct auxring *r, int fd, uint64_t max, bool whole_pages)
{
	uint64_t head, tail, done, n;
	struct iovec iov[2];
	int ret;

	if (r->overwrite)
		return -EINVAL;
	head = __atomic_load_n(&r->pc->aux_head, __ATOMIC_ACQUIRE);
	tail = r->pc->aux_tail;	/* only we write it */
	n = head - tail < max ? head - tail : max;
	if (whole_pages) {
		uint64_t start = r->stats.aux_bytes, end = (start + n) & ~(page_size() - 1);

		/*
		 * End on a page of the file: ext4 pays for every partly written
		 * page (2.9 against 4.0 GB/s here). The rest waits for the next
		 * call, unless the ring needs the room (a one-page ring).
		 */
		if (end > start)
			n = end - start;
		else if (n < r->aux_size / 2)
			n = 0;
	}
	if (!n)
		return 0;
	/* Straight from the mapping: one writev, even across the wrap. */
	ret = writev_full(fd, iov, ring_iov(r->aux, r->aux_size, tail, n, iov), &done);
	r->stats.aux_bytes += done;
	/* The kernel may reuse only what is safely in the file. */
	__atomic_store_n(&r->pc->aux_tail, tail + done, __ATOMIC_RELEASE);
	return ret;
}

int auxring_drain_aux(struct auxring *r, int fd)
{
	return drain_aux(r, fd, UINT64_MAX, false);
}

int auxring_drain_aux_max(struct auxring *r, int fd, uint64_t max)
{
	return drain_aux(r, fd, max, true);
}

/* Copy @n bytes at ring position @pos, across the wrap. */
static void ring_copy(const struct auxring *r, uint64_t pos, void *dst, size_t n)
{
	uint64_t off = pos & (r->data_size - 1), first = r->data_size - off;

	if (first >= n) {
		memcpy(dst, r->data + off, n);
	} else {
		memcpy(dst, r->data + off, first);
		memcpy((uint8_t *)dst + first, r->data, n - first);
	}
}

void auxring_count(struct auxring_stats *st, const struct perf_event_header *h,
		   const uint64_t body[3])
{
	st->records++;
	st->record_bytes += h->size;
	switch (h->type) {
	case PERF_RECORD_AUX:
		/* aux_offset, aux_size, flags */
		if (h->size < sizeof(*h) + 3 * sizeof(uint64_t))
			break;
		st->aux_records++;
		st->aux_record_bytes += body[1];
		st->truncated += !!(body[2] & PERF_AUX_FLAG_TRUNCATED);
		st->overwrite += !!(body[2] & PERF_AUX_FLAG_OVERWRITE);
		st->partial += !!(body[2] & PERF_AUX_FLAG_PARTIAL);
		st->collision += !!(body[2] & PERF_AUX_FLAG_COLLISION);
		break;
	case PERF_RECORD_LOST:
		/* id, lost */
		if (h->size < sizeof(*h) + 2 * sizeof(uint64_t))
			break;
		st->lost++;
		st->lost_events += body[1];
		break;
	case PERF_RECORD_ITRACE_START:
		st->itrace_start++;
		break;
	default:
		break;
	}
}

static void count_record(struct auxring *r, uint64_t pos, const struct perf_event_header *h)
{
	uint64_t body[3] = { 0 };
	size_t n = h->size - sizeof(*h);

	ring_copy(r, pos + sizeof(*h), body, n < sizeof(body) ? n : sizeof(body));
	auxring_count(&r->stats, h, body);
	if (h->type == PERF_RECORD_AUX && n >= sizeof(body) && body[0] + body[1] > r->aux_rec_end)
		r->aux_rec_end = body[0] + body[1];
}

int auxring_read_data(struct auxring *r, int fd)
{
	return auxring_read_data_batched(r, fd, 0);
}

int auxring_read_data_batched(struct auxring *r, int fd, uint64_t min_batch)
{
	uint64_t head, tail, end, done = 0;
	struct perf_event_header h;
	struct iovec iov[2];
	int ret;

	head = __atomic_load_n(&r->pc->data_head, __ATOMIC_ACQUIRE);
	tail = r->pc->data_tail;
	if (r->data_counted < tail)
		r->data_counted = tail;
	/*
	 * Count each record once, as soon as it is seen, resuming where the last
	 * call stopped. Whole records only: the kernel publishes head at record
	 * boundaries.
	 */
	for (end = r->data_counted; end + sizeof(h) <= head; end += h.size) {
		ring_copy(r, end, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - end)
			break;
		count_record(r, end, &h);
	}
	r->data_counted = end;
	if (end == tail || end - tail < min_batch)
		return 0;
	/* One writev for the batch, across the wrap. */
	ret = writev_full(fd, iov, ring_iov(r->data, r->data_size, tail, end - tail, iov), &done);
	/* Release the records that reached the file whole. */
	for (end = tail; end + sizeof(h) <= tail + done; end += h.size) {
		ring_copy(r, end, &h, sizeof(h));
		if (end + h.size > tail + done)
			break;
	}
	if (end < tail + done) {
		/* Cut the file back to the last whole record, so readers never see half a record. */
		off_t pos = lseek(fd, 0, SEEK_CUR);

		if (pos >= 0 && ftruncate(fd, pos - (off_t)(tail + done - end)) == 0)
			lseek(fd, pos - (off_t)(tail + done - end), SEEK_SET);
	}
	r->stats.sideband_bytes += end - tail;
	__atomic_store_n(&r->pc->data_tail, end, __ATOMIC_RELEASE);
	/*
	 * Was the ring too full to take a PERF_RECORD_AUX before this release?
	 * The kernel may have filled it after head was read; data_head read
	 * again after the release (a full fence: the release must be visible
	 * first) is at least the head at the release, so this errs towards yes.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	head = __atomic_load_n(&r->pc->data_head, __ATOMIC_ACQUIRE);
	if (r->data_size - (head - tail) <= AUXRING_AUX_RECORD_MAX)
		r->stats.data_full++;
	return ret;
}

/*
 * Free the room a restart needs: a watermark of free space behind the
 * hardware's head. perf_aux_output_end() writes the stop's PERF_RECORD_AUX
 * before it moves aux_head, so the record's end is that head while aux_head
 * may still be older. Restarting with the room counted from the older one
 * can find the ring full, and perf_aux_output_begin() then disables the
 * event without a record: nothing would ever restart it. The kernel moves
 * aux_head right after the record; waiting for it is bounded all the same.
 */
static int free_for_restart(struct auxring *r, int fd)
{
	uint64_t wm = auxring_watermark(r->aux_size), pg = page_size();
	uint64_t tail = r->pc->aux_tail, head = __atomic_load_n(&r->pc->aux_head, __ATOMIC_ACQUIRE);
	uint64_t target, deadline = 0;

	if (r->aux_rec_end > head && r->aux_rec_end - tail <= r->aux_size)
		head = r->aux_rec_end;
	if (head - tail + wm <= r->aux_size)
		return 0;
	target = tail + ((head - tail + wm - r->aux_size + pg - 1) & ~(pg - 1));
	if (target > head)
		target = head;
	while (r->pc->aux_tail < target) {
		uint64_t before = r->pc->aux_tail;
		/* Exactly the room (file pages stay aligned: target is whole pages from the tail). */
		int ret = drain_aux(r, fd, target - before, false);

		if (ret)
			return ret;
		if (r->pc->aux_tail == before) {
			struct timespec ts = { 0, 20000 };

			if (!deadline)
				deadline = monotime_ns() + r->head_wait_ns;
			else if (monotime_ns() > deadline)
				break;
			nanosleep(&ts, NULL);
		}
	}
	return 0;
}

int auxring_pass(struct auxring *r, int trace_fd, int sb_fd, bool final,
		 auxring_restart_fn *restart, void *arg)
{
	uint64_t stops;
	int ret;

	ret = auxring_read_data_batched(r, sb_fd, final ? 0 : r->data_size / 8);
	/* Overwrite mode: the trace leaves through auxring_snapshot() alone. */
	if (ret || r->overwrite)
		return ret;
	if (final)
		return auxring_drain_aux(r, trace_fd);
	stops = r->stats.truncated + r->stats.lost + r->stats.data_full;
	if (restart && stops != r->stops_seen) {
		r->stops_seen = stops;
		/*
		 * Free no more than the restart needs: the rest is this pass's
		 * work while the hardware refills (room first, then the rest,
		 * would leave nothing to write after a stop that found the
		 * ring already half drained).
		 */
		ret = free_for_restart(r, trace_fd);
		if (ret)
			return ret;
		restart(arg);
		r->stats.restarts++;
	}
	return auxring_drain_aux_max(r, trace_fd, UINT64_MAX);
}

/* ---- snapshots (overwrite mode) ----------------------------------------- */

/*
 * The reference: the last bytes before the previous snapshot's head. They
 * stay as they are until the hardware has written nearly a whole buffer past
 * that head; finding them changed tells a lap that intel_pt's in-buffer head
 * cannot (perf compares such a copy too). Up to 64 KiB, half the buffer at
 * most, so the comparison leaves room to tell.
 */
static uint64_t ref_size(const struct auxring *r)
{
	uint64_t n = r->aux_size / 2;

	return n > AUXRING_SNAP_REF_MAX ? AUXRING_SNAP_REF_MAX : n;
}

/* Copy @n ring bytes ending at buffer index @end (mod the size) to @dst. */
static void ring_copy_before(const struct auxring *r, uint64_t end, uint8_t *dst, uint64_t n)
{
	struct iovec iov[2];
	int k = ring_iov(r->aux, r->aux_size, end - n, n, iov);

	for (int i = 0; i < k; i++) {
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
}

/* The last @n bytes of the reference equal the ring's @n bytes before @end. */
static bool ref_matches(const struct auxring *r, uint64_t end, uint64_t n)
{
	const uint8_t *ref = r->snap_ref + r->snap_ref_len - n;
	struct iovec iov[2];
	int k = n ? ring_iov(r->aux, r->aux_size, end - n, n, iov) : 0;

	for (int i = 0; i < k; i++) {
		if (memcmp(ref, iov[i].iov_base, iov[i].iov_len))
			return false;
		ref += iov[i].iov_len;
	}
	return true;
}

/*
 * How many bytes the hardware wrote since the previous snapshot (or the
 * start), *@lapped when that is a whole buffer or more (then every byte in
 * the buffer is new). A head that grows tells it exactly; intel_pt's head is
 * an offset inside the buffer, so a lap is told by the reference: the bytes
 * a shorter write would have left alone must be unchanged.
 */
static uint64_t new_bytes(struct auxring *r, uint64_t head, bool *lapped)
{
	uint64_t mask = r->aux_size - 1, d, keep;

	/* A head that only grows (not intel_pt's) counts the bytes itself. */
	if (head >= r->aux_size || r->snap_prev >= r->aux_size) {
		d = head - r->snap_prev;
		*lapped = d > r->aux_size;
		return *lapped ? r->aux_size : d;
	}
	d = (head - r->snap_prev) & mask;
	keep = r->aux_size - d < r->snap_ref_len ? r->aux_size - d : r->snap_ref_len;
	*lapped = !ref_matches(r, r->snap_prev, keep);
	return *lapped ? r->aux_size : d;
}

int auxring_snapshot(struct auxring *r, int fd, uint64_t max, struct auxring_window *w)
{
	uint64_t head = __atomic_load_n(&r->pc->aux_head, __ATOMIC_ACQUIRE), avail, done;
	struct iovec iov[2];
	bool lapped;
	int ret = 0, n;

	memset(w, 0, sizeof(*w));
	w->head = head;
	if (!r->snap_ref) {
		/* The buffer starts zeroed: so does the reference of the first snapshot. */
		r->snap_ref = calloc(1, ref_size(r) ? ref_size(r) : 1);
		if (!r->snap_ref)
			return -ENOMEM;
		r->snap_ref_len = ref_size(r);
	}
	avail = new_bytes(r, head, &lapped);
	w->bytes = avail < max ? avail : max;
	w->wrapped = lapped || w->bytes < avail;
	w->lapped = lapped;
	if (w->bytes) {
		n = ring_iov(r->aux, r->aux_size, head - w->bytes, w->bytes, iov);
		ret = writev_full(fd, iov, n, &done);
		w->bytes = done;
	}
	/* The next window begins here whether or not this one reached the file. */
	ring_copy_before(r, head & (r->aux_size - 1), r->snap_ref, r->snap_ref_len);
	r->snap_prev = head;
	r->stats.snapshots++;
	r->stats.aux_bytes += w->bytes;
	return ret;
}
