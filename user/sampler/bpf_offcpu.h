/* bpf_offcpu.h - loads the off-CPU tracer (bpf/offcpu.bpf.c) next to the
 * on-CPU sampler and attaches it to the scheduler tracepoints.
 *
 * The tracer shares the sampler's ring buffer, counters and target sets
 * (bpf_sampler_shared_fds()), so its records arrive through
 * bpf_sampler_poll() with hdr.kind == SP_EVENT_OFF_CPU, as
 * struct sp_off_cpu_event: hdr.timestamp_ns is when the thread left the CPU,
 * off_cpu_ns how long it stayed off, state its enum sp_thread_state, stacks
 * where it left. Counters: SP_CNT_OFFCPU_EVENTS, _SHORT (under the minimum,
 * dropped), _LOST (ring buffer full or no storage).
 *
 * Cuts: a thread already off the CPU at bpf_offcpu_start() (or when its
 * process becomes a target, see bpf_offcpu_seed) gets an interval from that
 * moment, with its state and its user stack read from the blocked thread,
 * where the kernel has KERNEL_SEED_BLOCKED (elsewhere its interval starts
 * at its next switch-out); an interval still open at bpf_offcpu_stop() is
 * sent up to that moment.
 */
#ifndef SPARKPROF_BPF_OFFCPU_H
#define SPARKPROF_BPF_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h> /* sparkprof_events.h uses __u32 and friends */

#include "sampler/bpf_sampler.h"
#include "sampler/kernel_features.h"

struct bpf_offcpu_options {
	bool filter_tgids;        /* same as the sampler's: only its targets */
	bool include_kthreads;    /* kernel threads' waits too (when not filtering) */
	uint64_t min_off_cpu_ns;  /* shorter intervals are counted, not sent */
	size_t ringbuf_bytes;     /* the shared ring buffer's size (wake-up threshold) */
	bool hotspot_walk;        /* walk JVM stacks at switch-out, as the sampler does */
	const struct kernel_features *kernel; /* with KERNEL_OFF_CPU */
};

struct bpf_offcpu;

/* Loads the tracer onto the sampler's maps; attaches nothing yet. Prints the
 * cause and returns NULL (errno set) on failure. */
struct bpf_offcpu *bpf_offcpu_open(const struct bpf_sampler_fds *fds,
				   const struct bpf_offcpu_options *opts);

/* Attaches to sched_switch and opens an interval for every profiled thread
 * already off the CPU. Returns 0, -EALREADY (started already), or -errno.
 * May follow a bpf_offcpu_stop(): what happened in between is not sent. */
int bpf_offcpu_start(struct bpf_offcpu *offcpu);

/* Opens an interval, from now, for every profiled thread that is off the CPU
 * and not followed yet. bpf_offcpu_start() does it once; call it again after
 * adding targets (bpf_sampler_add_target) while running, so that their
 * threads blocked since before count from then, and after describing a JVM
 * (bpf_sampler_set_hotspot): its threads followed so far with a plain
 * frame-pointer stack get theirs walked again. Does nothing on a kernel
 * without KERNEL_SEED_BLOCKED. Returns 0 or -errno (-EINVAL when not
 * started). */
int bpf_offcpu_seed(struct bpf_offcpu *offcpu);

/* Sends the intervals still open (cut now), then detaches. Records stay in
 * the ring buffer for bpf_sampler_poll(). */
void bpf_offcpu_stop(struct bpf_offcpu *offcpu);

void bpf_offcpu_close(struct bpf_offcpu *offcpu);

/* The sched_switch program's fd, for its run-time statistics. */
int bpf_offcpu_prog_fd(const struct bpf_offcpu *offcpu);

#endif
