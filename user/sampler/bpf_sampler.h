/* bpf_sampler.h - loads the on-CPU sampler (bpf/profile.bpf.c), attaches it
 * to a cpu-clock perf event on every online CPU and delivers its records.
 *
 * Records (include/sparkprof_events.h) arrive through one ring buffer; the
 * callback gets each record as BPF wrote it. Other BPF objects (off-CPU)
 * join the same ring buffer and counters through bpf_sampler_shared_fds().
 */
#ifndef SPARKPROF_BPF_SAMPLER_H
#define SPARKPROF_BPF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler/kernel_features.h"
#include "sparkprof_events.h"

typedef int (*bpf_sampler_record_fn)(void *ctx, const void *record, size_t size);

struct bpf_sampler_options {
	unsigned int frequency_hz;   /* samples per second per CPU */
	bool filter_tgids;           /* only processes added as targets */
	bool follow_children;        /* targets' forked children become targets */
	size_t ringbuf_bytes;        /* power of two, >= 1 MiB */
	bool hotspot_walk;           /* load the HotSpot walker (the kernel must have
				      * KERNEL_HOTSPOT_WALK), else frame pointers alone */
	const struct kernel_features *kernel;
	bpf_sampler_record_fn on_record;
	void *ctx;
};

struct bpf_sampler;

/* Loads and attaches; prints the cause and returns NULL on failure. */
struct bpf_sampler *bpf_sampler_open(const struct bpf_sampler_options *opts);
void bpf_sampler_close(struct bpf_sampler *sampler);

/* Starts sampling (attaches the perf events). Separate from open so that
 * targets can be added first. */
int bpf_sampler_start(struct bpf_sampler *sampler);
/* Detaches the perf events: no new samples, records in flight stay readable. */
void bpf_sampler_stop(struct bpf_sampler *sampler);

int bpf_sampler_add_target(struct bpf_sampler *sampler, pid_t tgid);
/* Tells BPF user space has inspected tgid, so its samples stop forcing an
 * immediate wake-up. */
int bpf_sampler_mark_known(struct bpf_sampler *sampler, pid_t tgid);

/* Describes tgid's JVM to the stack walker (NULL: forget it, e.g. after an
 * exec); its user stacks are walked as HotSpot stacks from then on. */
int bpf_sampler_set_hotspot(struct bpf_sampler *sampler, pid_t tgid,
			    const struct sp_hotspot_info *info);
/* Describes tgid's CPython interpreter (NULL: forget it): its threads'
 * Python frames are walked from then on. */
int bpf_sampler_set_python(struct bpf_sampler *sampler, pid_t tgid,
			   const struct sp_python_info *info);

/* Waits up to timeout_ms for records, then consumes everything available.
 * Returns the number of records handled or -errno (-EINTR is not an error). */
int bpf_sampler_poll(struct bpf_sampler *sampler, int timeout_ms);

/* The ring buffer's size and the most it held when the drain woke, which
 * says whether a smaller one would have done (peak_known: false when its
 * positions could not be mapped). */
struct ring_use {
	size_t bytes, peak_fill;
	bool peak_known;
};
void bpf_sampler_ring_use(const struct bpf_sampler *sampler, struct ring_use *use);

/* Sums the per-CPU counters. */
int bpf_sampler_counters(struct bpf_sampler *sampler, uint64_t counters[SP_CNT_MAX]);

/* Map fds that other BPF objects reuse: ring buffer, counters, targets,
 * known processes, JVM and CPython layouts. */
struct bpf_sampler_fds {
	int events, counters, target_tgids, known_tgids, hotspot_jvms, python_procs;
};
void bpf_sampler_shared_fds(const struct bpf_sampler *sampler, struct bpf_sampler_fds *fds);
#endif
