/* offcpu_cost.c - the off-CPU tracer's kernel-side cost per context switch.
 *
 * usage: offcpu_cost PID SECONDS MIN_OFF_CPU_NS
 * Loads the sampler's maps (its perf events stay detached: only the off-CPU
 * program runs) and the off-CPU tracer filtering on PID (0: a filter that
 * matches nothing, to measure the cost for threads that are not profiled),
 * turns on BPF run-time statistics for SECONDS, and prints the sched_switch
 * program's run count and mean run time, and the counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include <bpf/bpf.h>

#include "sampler/bpf_offcpu.h"
#include "sampler/bpf_sampler.h"
#include "sampler/kernel_features.h"

static int count_record(void *ctx, const void *record, size_t size)
{
	(void)record;
	(void)size;
	(*(unsigned long long *)ctx)++;
	return 0;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long long records = 0, end;
	struct bpf_sampler_options sopts = {
		.frequency_hz = 1,
		.filter_tgids = true,
		.ringbuf_bytes = 8 << 20,
		.on_record = count_record,
		.ctx = &records,
	};
	struct kernel_features kernel;
	struct bpf_offcpu_options oopts = { .filter_tgids = true, .ringbuf_bytes = 8 << 20,
					    .kernel = &kernel };
	struct bpf_prog_info before = { 0 }, after = { 0 };
	__u32 len = sizeof(before);
	uint64_t counters[SP_CNT_MAX];
	struct bpf_sampler_fds fds;
	struct bpf_sampler *sampler;
	struct bpf_offcpu *offcpu;
	int pid, seconds, stats_fd, prog_fd;

	if (argc != 4) {
		fprintf(stderr, "usage: offcpu_cost PID SECONDS MIN_OFF_CPU_NS\n");
		return 2;
	}
	pid = atoi(argv[1]);
	seconds = atoi(argv[2]);
	oopts.min_off_cpu_ns = strtoull(argv[3], NULL, 10);
	if (kernel_features_probe(&kernel) || !kernel.has[KERNEL_OFF_CPU]) {
		fprintf(stderr, "offcpu_cost: this kernel (%s) has no off-CPU tracer\n", kernel.release);
		return 1;
	}
	sopts.kernel = &kernel;
	sopts.hotspot_walk = oopts.hotspot_walk = kernel.has[KERNEL_HOTSPOT_WALK];

	sampler = bpf_sampler_open(&sopts);
	if (!sampler)
		return 1;
	if (pid > 0 && (bpf_sampler_add_target(sampler, pid) || bpf_sampler_mark_known(sampler, pid))) {
		fprintf(stderr, "offcpu_cost: add target %d: %s\n", pid, strerror(errno));
		return 1;
	}
	bpf_sampler_shared_fds(sampler, &fds);
	offcpu = bpf_offcpu_open(&fds, &oopts);
	if (!offcpu || bpf_offcpu_start(offcpu))
		return 1;
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "offcpu_cost: enable BPF run-time statistics: %s\n", strerror(errno));
		return 1;
	}
	prog_fd = bpf_offcpu_prog_fd(offcpu);
	bpf_obj_get_info_by_fd(prog_fd, &before, &len);
	end = now_ns() + seconds * 1000000000ULL;
	while (now_ns() < end)
		bpf_sampler_poll(sampler, 100);
	len = sizeof(after);
	bpf_obj_get_info_by_fd(prog_fd, &after, &len);
	close(stats_fd);
	bpf_offcpu_stop(offcpu);
	bpf_sampler_poll(sampler, 0);
	bpf_sampler_counters(sampler, counters);

	unsigned long long runs = after.run_cnt - before.run_cnt;
	unsigned long long ns = after.run_time_ns - before.run_time_ns;

	printf("runs %llu run_time_ns %llu ns_per_run %.1f records %llu offcpu_events %llu "
	       "short %llu lost %llu\n",
	       runs, ns, runs ? (double)ns / runs : 0.0, records,
	       (unsigned long long)counters[SP_CNT_OFFCPU_EVENTS],
	       (unsigned long long)counters[SP_CNT_OFFCPU_SHORT],
	       (unsigned long long)counters[SP_CNT_OFFCPU_LOST]);
	bpf_offcpu_close(offcpu);
	bpf_sampler_close(sampler);
	return 0;
}
