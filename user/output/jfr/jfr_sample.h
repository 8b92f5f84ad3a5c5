/* jfr_sample.h - what one JFR event is made of: a sample (time, thread,
 * state, weight, stack) and the labels that say what a file is. Shared by
 * the writer and the chunk it fills.
 */
#ifndef SPARKPROF_JFR_SAMPLE_H
#define SPARKPROF_JFR_SAMPLE_H

#include <stdint.h>

#include "base/frame.h"

/* A key/value saying what the file is: application id, executor id, stage,
 * attempt, host, sparkprof version, settings.  Copied at open. */
struct jfr_label {
	const char *key;
	const char *value;
};

/* Deeper stacks keep their JFR_MAX_FRAMES leaf-most frames and are marked
 * truncated. */
#define JFR_MAX_FRAMES 4096
/* Largest weight of a CPU sample (written as that many events). */
#define JFR_MAX_CPU_WEIGHT 65536

enum jfr_sample_kind { JFR_SAMPLE_CPU, JFR_SAMPLE_WALL };

struct jfr_sample {
	uint64_t timestamp_ns;        /* CLOCK_MONOTONIC */
	uint32_t os_tid;
	const char *thread_name;      /* full Java name where known, else comm */
	uint32_t pid;                 /* not written: JFR threads have no pid */
	enum jfr_sample_kind kind;
	int thread_state;             /* enum sp_thread_state (RUNNING for CPU) */
	uint64_t weight;              /* samples represented, >= 1 */
	const struct frame *frames;   /* leaf first */
	int nframes;
};

#endif
