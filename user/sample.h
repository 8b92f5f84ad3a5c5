/* sample.h - one sample after symbolization, as outputs receive it. */
#ifndef SPARKPROF_SAMPLE_H
#define SPARKPROF_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "frame.h"

enum sample_kind {
	SAMPLE_CPU,      /* a cpu-clock sample: the thread was running */
	SAMPLE_OFF_CPU,  /* an interval the thread spent off the CPU */
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

#endif
