// SPDX-License-Identifier: GPL-2.0
/*
 * ptsim: a simulated "intel_pt" PMU for testing userspace Intel PT collectors
 * against the real perf core (AUX ring buffer, PERF_RECORD_AUX,
 * PERF_RECORD_ITRACE_START, address filters, snapshot mode) without PT hardware.
 *
 * While an event is active on a CPU, a pinned per-CPU hrtimer plays the role
 * of the trace hardware and its PMI: every period_us it writes `chunk` bytes of
 * a deterministic pattern (a pure function of the absolute AUX offset) into the
 * AUX buffer and publishes them with perf_aux_output_end()/begin().
 *   pattern=0: byte(off) = (u8)(((u32)off * 2654435761u) >> 24)
 *   pattern=1: a valid PT stream: every 4 KiB a PSB (02 82 x8), PSBEND (02 23),
 *              then PAD (00) bytes
 * If the consumer does not free space, the last chunk is cut short, the record
 * gets PERF_AUX_FLAG_TRUNCATED and the perf core disables the event (as with PT).
 *
 * Written against the Linux 6.1 perf API; see README.md for newer kernels.
 */
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/percpu.h>
#include <linux/spinlock.h>
#include <linux/version.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
/* 6.2 removed struct pmu::task_ctx_nr; 6.13 replaced hrtimer_init() */
#error "ptsim targets the Linux 6.1 perf API; see README.md (newer kernels)"
#endif

static char *pmu_name = "intel_pt";
module_param(pmu_name, charp, 0444);
static unsigned int chunk = 512;
module_param(chunk, uint, 0644);
static unsigned int period_us = 1000;
module_param(period_us, uint, 0644);
static unsigned int pattern;
module_param(pattern, uint, 0644);
static unsigned int nr_filters = 2;
module_param(nr_filters, uint, 0444);

#define SIM_MIN_PERIOD_US 10U	/* a shorter period would livelock the CPU */

static ktime_t sim_period(void)
{
	return ns_to_ktime((u64)max(READ_ONCE(period_us), SIM_MIN_PERIOD_US) * 1000);
}

struct sim_buf {
	void **pages;
	int nr_pages;
	unsigned long size;	/* bytes, power of two */
	bool snapshot;
	unsigned long head;	/* absolute write position (snapshot mode) */
};

struct sim_cpu {
	struct perf_output_handle handle;
	struct perf_event *event;	/* active event on this CPU */
	struct hrtimer timer;
};
static DEFINE_PER_CPU(struct sim_cpu, sim_cpu);

/* last synced address filters, for the test to inspect via sysfs */
static DEFINE_SPINLOCK(filt_lock);
static char filt_str[512];

static struct pmu sim_pmu;

/* debug counters, /sys/bus/event_source/devices/<pmu>/sim/stats */
static atomic64_t st_start, st_stop, st_begin_fail, st_ticks, st_bytes, st_trunc;
/* absolute bytes written in snapshot mode, for checkers: the in-buffer head hides it */
static atomic64_t st_snap_head;

static inline u8 pat_byte(unsigned long off)
{
	if (pattern == 1) {
		unsigned int r = off & 4095;

		if (r < 16)
			return (r & 1) ? 0x82 : 0x02;
		if (r == 16)
			return 0x02;
		if (r == 17)
			return 0x23;
		return 0x00;
	}
	return (u8)(((u32)off * 2654435761u) >> 24);
}

static void sim_write(struct sim_buf *buf, unsigned long pos, unsigned long n)
{
	while (n--) {
		unsigned long idx = pos & (buf->size - 1);
		u8 *p = buf->pages[idx >> PAGE_SHIFT];

		p[idx & (PAGE_SIZE - 1)] = pat_byte(pos);
		pos++;
	}
}

/* "hardware" writes one chunk; returns false if output had to stop */
static bool sim_emit(struct sim_cpu *sc, bool restart)
{
	struct perf_output_handle *h = &sc->handle;
	struct perf_event *event = sc->event;
	struct sim_buf *buf = perf_get_aux(h);
	unsigned long n = chunk;

	if (!buf)
		return false;
	if (buf->snapshot) {
		/* only the last buf->size bytes of the chunk survive the wrap */
		unsigned long w = min(n, buf->size);

		sim_write(buf, buf->head + n - w, w);
		buf->head += n;
		atomic64_set(&st_snap_head, buf->head);
		if (restart)
			return true;	/* as intel_pt: nothing reaches perf until a stop */
		/*
		 * intel_pt's pt_event_stop() in snapshot mode: aux_head becomes the
		 * offset inside the buffer, and one PERF_RECORD_AUX of the
		 * buffer's size (OVERWRITE) is logged per stop.
		 */
		h->head = buf->head & (buf->size - 1);
		perf_aux_output_end(h, buf->size);
		return true;
	} else {
		if (n > h->size)
			n = h->size;
		sim_write(buf, h->head, n);
		if (n < chunk) {
			perf_aux_output_flag(h, PERF_AUX_FLAG_TRUNCATED);
			atomic64_inc(&st_trunc);
		}
		atomic64_add(n, &st_bytes);
		perf_aux_output_end(h, n);
		if (n < chunk)
			return false;
	}
	if (!restart)
		return true;
	buf = perf_aux_output_begin(h, event);
	if (!buf) {
		atomic64_inc(&st_begin_fail);
		return false;
	}
	return true;
}

static enum hrtimer_restart sim_tick(struct hrtimer *t)
{
	struct sim_cpu *sc = this_cpu_ptr(&sim_cpu);

	atomic64_inc(&st_ticks);
	if (!sc->event || !perf_get_aux(&sc->handle))
		return HRTIMER_NORESTART;
	if (!sim_emit(sc, true)) {
		sc->event->hw.state = PERF_HES_STOPPED;
		sc->event = NULL;
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(t, sim_period());
	return HRTIMER_RESTART;
}

static void sim_start(struct perf_event *event, int flags)
{
	struct sim_cpu *sc = this_cpu_ptr(&sim_cpu);
	struct sim_buf *buf;

	atomic64_inc(&st_start);
	buf = perf_aux_output_begin(&sc->handle, event);
	if (!buf) {
		atomic64_inc(&st_begin_fail);
		event->hw.state = PERF_HES_STOPPED;
		return;
	}
	/* like intel_pt's pt_config(): log ITRACE_START only once per event */
	event->attach_state |= PERF_ATTACH_ITRACE;
	perf_event_addr_filters_sync(event);
	event->hw.state = 0;
	sc->event = event;
	hrtimer_start(&sc->timer, sim_period(), HRTIMER_MODE_REL_PINNED_HARD);
}

static void sim_stop(struct perf_event *event, int flags)
{
	struct sim_cpu *sc = this_cpu_ptr(&sim_cpu);

	if (event->hw.state & PERF_HES_STOPPED)
		return;
	atomic64_inc(&st_stop);
	event->hw.state = PERF_HES_STOPPED;
	/* irqs are off and the timer is pinned here: it cannot be running */
	hrtimer_try_to_cancel(&sc->timer);
	if (sc->event == event) {
		sc->event = NULL;
		if (perf_get_aux(&sc->handle))
			sim_emit(sc, false);	/* flush: ends the handle */
	}
}

static int sim_add(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED;
	if (flags & PERF_EF_START)
		sim_start(event, 0);
	return 0;
}

static void sim_del(struct perf_event *event, int flags)
{
	sim_stop(event, PERF_EF_UPDATE);
}

static void sim_read(struct perf_event *event) { }

#define SIM_CONFIG_MASK (BIT_ULL(0) | BIT_ULL(1) | BIT_ULL(4) | BIT_ULL(5) | \
	GENMASK_ULL(13, 9) | GENMASK_ULL(17, 14) | GENMASK_ULL(22, 19) | \
	GENMASK_ULL(27, 24))

static int sim_event_init(struct perf_event *event)
{
	if (event->attr.type != sim_pmu.type)
		return -ENOENT;
	if (event->attr.config & ~SIM_CONFIG_MASK)
		return -EINVAL;
	return 0;
}

static void *sim_setup_aux(struct perf_event *event, void **pages,
			   int nr_pages, bool overwrite)
{
	struct sim_buf *buf;

	if (!nr_pages || !is_power_of_2(nr_pages))
		return NULL;
	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return NULL;
	buf->pages = pages;	/* rb->aux_pages, valid until free_aux */
	buf->nr_pages = nr_pages;
	buf->size = (unsigned long)nr_pages << PAGE_SHIFT;
	buf->snapshot = overwrite;
	return buf;
}

static void sim_free_aux(void *data)
{
	kfree(data);
}

/* the same rules as intel_pt's pt_event_addr_filters_validate() on 6.1 */
static int sim_addr_filters_validate(struct list_head *filters)
{
	struct perf_addr_filter *f;
	unsigned int n = 0;

	list_for_each_entry(f, filters, entry) {
		/* no single-address triggers and no 'start' filters */
		if (!f->size || f->action == PERF_ADDR_FILTER_ACTION_START)
			return -EOPNOTSUPP;
		if (++n > nr_filters)
			return -EOPNOTSUPP;
	}
	return 0;
}

static void sim_addr_filters_sync(struct perf_event *event)
{
	struct perf_addr_filters_head *head = perf_event_addr_filters(event);
	struct perf_addr_filter_range *fr = event->addr_filter_ranges;
	struct perf_addr_filter *f;
	unsigned long flags;
	int i = 0, len = 0;

	spin_lock_irqsave(&filt_lock, flags);
	list_for_each_entry(f, &head->list, entry) {
		len += scnprintf(filt_str + len, sizeof(filt_str) - len,
				 "%d %s 0x%lx 0x%lx\n", i,
				 f->action == PERF_ADDR_FILTER_ACTION_FILTER ? "filter" :
				 f->action == PERF_ADDR_FILTER_ACTION_START ? "start" : "stop",
				 fr[i].start, fr[i].size);
		i++;
	}
	if (!i)
		filt_str[0] = 0;
	spin_unlock_irqrestore(&filt_lock, flags);
}

/* ---- sysfs: format/, caps/, sim/ ---- */
PMU_FORMAT_ATTR(pt, "config:0");
PMU_FORMAT_ATTR(cyc, "config:1");
PMU_FORMAT_ATTR(pwr_evt, "config:4");
PMU_FORMAT_ATTR(fup_on_ptw, "config:5");
PMU_FORMAT_ATTR(mtc, "config:9");
PMU_FORMAT_ATTR(tsc, "config:10");
PMU_FORMAT_ATTR(noretcomp, "config:11");
PMU_FORMAT_ATTR(ptw, "config:12");
PMU_FORMAT_ATTR(branch, "config:13");
PMU_FORMAT_ATTR(mtc_period, "config:14-17");
PMU_FORMAT_ATTR(cyc_thresh, "config:19-22");
PMU_FORMAT_ATTR(psb_period, "config:24-27");

static struct attribute *format_attrs[] = {
	&format_attr_pt.attr, &format_attr_cyc.attr, &format_attr_pwr_evt.attr,
	&format_attr_fup_on_ptw.attr, &format_attr_mtc.attr,
	&format_attr_tsc.attr, &format_attr_noretcomp.attr,
	&format_attr_ptw.attr, &format_attr_branch.attr,
	&format_attr_mtc_period.attr, &format_attr_cyc_thresh.attr,
	&format_attr_psb_period.attr, NULL,
};
static const struct attribute_group format_group = {
	.name = "format", .attrs = format_attrs,
};

#define SIM_CAP(_name, _fmt, ...)					\
static ssize_t cap_##_name##_show(struct device *d,			\
		struct device_attribute *a, char *buf)			\
{ return sprintf(buf, _fmt "\n", ##__VA_ARGS__); }			\
static struct device_attribute cap_attr_##_name =			\
	__ATTR(_name, 0444, cap_##_name##_show, NULL)

SIM_CAP(topa_output, "1");
SIM_CAP(topa_multiple_entries, "1");
SIM_CAP(single_range_output, "1");
SIM_CAP(psb_cyc, "1");
SIM_CAP(ip_filtering, "1");
SIM_CAP(mtc, "1");
SIM_CAP(ptwrite, "0");
SIM_CAP(power_event_trace, "0");
SIM_CAP(num_address_ranges, "%u", nr_filters);
SIM_CAP(mtc_periods, "249");
SIM_CAP(cycle_thresholds, "3fff");
SIM_CAP(psb_periods, "3f");

static struct attribute *caps_attrs[] = {
	&cap_attr_topa_output.attr, &cap_attr_topa_multiple_entries.attr,
	&cap_attr_single_range_output.attr, &cap_attr_psb_cyc.attr,
	&cap_attr_ip_filtering.attr, &cap_attr_mtc.attr, &cap_attr_ptwrite.attr,
	&cap_attr_power_event_trace.attr, &cap_attr_num_address_ranges.attr,
	&cap_attr_mtc_periods.attr, &cap_attr_cycle_thresholds.attr,
	&cap_attr_psb_periods.attr, NULL,
};
static const struct attribute_group caps_group = {
	.name = "caps", .attrs = caps_attrs,
};

static ssize_t filters_show(struct device *d, struct device_attribute *a,
			    char *buf)
{
	unsigned long flags;
	ssize_t n;

	spin_lock_irqsave(&filt_lock, flags);
	n = sysfs_emit(buf, "%s", filt_str);
	spin_unlock_irqrestore(&filt_lock, flags);
	return n;
}
static DEVICE_ATTR_RO(filters);

static ssize_t stats_show(struct device *d, struct device_attribute *a,
			  char *buf)
{
	return sysfs_emit(buf, "start %lld stop %lld begin_fail %lld ticks %lld bytes %lld truncated %lld snap_head %lld\n",
		atomic64_read(&st_start), atomic64_read(&st_stop),
		atomic64_read(&st_begin_fail), atomic64_read(&st_ticks),
		atomic64_read(&st_bytes), atomic64_read(&st_trunc), atomic64_read(&st_snap_head));
}
static DEVICE_ATTR_RO(stats);
static struct attribute *sim_attrs[] = { &dev_attr_filters.attr,
					 &dev_attr_stats.attr, NULL };
static const struct attribute_group sim_group = {
	.name = "sim", .attrs = sim_attrs,
};

static const struct attribute_group *attr_groups[] = {
	&format_group, &caps_group, &sim_group, NULL,
};

static int __init sim_init(void)
{
	int cpu, ret;

	for_each_possible_cpu(cpu) {
		struct sim_cpu *sc = per_cpu_ptr(&sim_cpu, cpu);

		hrtimer_init(&sc->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		sc->timer.function = sim_tick;
	}
	sim_pmu = (struct pmu) {
		.module			= THIS_MODULE,
		.capabilities		= PERF_PMU_CAP_EXCLUSIVE |
					  PERF_PMU_CAP_ITRACE |
					  PERF_PMU_CAP_AUX_OUTPUT,
		.attr_groups		= attr_groups,
		.task_ctx_nr		= perf_sw_context,
		.event_init		= sim_event_init,
		.add			= sim_add,
		.del			= sim_del,
		.start			= sim_start,
		.stop			= sim_stop,
		.read			= sim_read,
		.setup_aux		= sim_setup_aux,
		.free_aux		= sim_free_aux,
		.nr_addr_filters	= nr_filters,
		.addr_filters_validate	= sim_addr_filters_validate,
		.addr_filters_sync	= sim_addr_filters_sync,
	};
	ret = perf_pmu_register(&sim_pmu, pmu_name, -1);
	if (!ret)
		pr_info("ptsim: registered PMU '%s' type %d\n", pmu_name,
			sim_pmu.type);
	return ret;
}

static void __exit sim_exit(void)
{
	perf_pmu_unregister(&sim_pmu);
}

module_init(sim_init);
module_exit(sim_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Simulated Intel PT PMU (AUX) for collector testing");
