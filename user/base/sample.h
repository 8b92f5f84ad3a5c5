/* sample.h - one sample after symbolization, as outputs receive it. */
#ifndef SPARKPROF_SAMPLE_H
#define SPARKPROF_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/frame.h"

enum sample_kind {
	SAMPLE_CPU,      /* a cpu-clock sample: the thread was running */
	SAMPLE_OFF_CPU,  /* an interval the thread spent off the CPU */
	SAMPLE_TASK,     /* the thread took a Spark task: a mark, no frames or weight */
};

struct resolved_sample {
	uint64_t timestamp_ns;      /* CLOCK_MONOTONIC; off-CPU: when it left */
	pid_t pid, tid;             /* as the root pid namespace sees them */
	pid_t ns_tid;               /* tid as its process sees it (containers), -1 unknown */
	uint32_t cpu;
	enum sample_kind kind;
	uint32_t thread_state;      /* enum sp_thread_state */
	uint64_t off_cpu_ns;        /* SAMPLE_OFF_CPU: the interval's length */
	const char *thread_name;    /* full Java name where known, else comm */
	const char *root_label;     /* the process: "comm-pid" */
	const struct frame *frames; /* leaf first */
	size_t nframes;
};

/* When to look up the thread's name, stage and idleness for s.  A thread
 * cannot rename itself or pick up a task while off the CPU, so an off-CPU
 * interval is looked up at its last instant: the helper's polls during the
 * interval (an idle mark comes up to one poll after the thread parked) are
 * then already known. */
static inline uint64_t sample_lookup_time(const struct resolved_sample *s)
{
	if (s->kind == SAMPLE_OFF_CPU && s->off_cpu_ns)
		return s->timestamp_ns + s->off_cpu_ns - 1;
	return s->timestamp_ns;
}

#endif
