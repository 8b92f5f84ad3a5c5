/* sample_labels.h - who a sample belongs to: the labels the sample store
 * keeps with each sample (output/sample_store.h) and gives back when a
 * segment is read (output/store_segment.h). */
#ifndef SPARKPROF_SAMPLE_LABELS_H
#define SPARKPROF_SAMPLE_LABELS_H

#include <stdint.h>
#include <sys/types.h>

/* Who a sample belongs to. Strings may be short-lived (the store copies
 * them); "" for none. */
struct sample_labels {
	pid_t pid, tid;
	const char *process;      /* the process's frame in profiles: "comm-pid" */
	const char *thread;       /* full Java name where known, else comm */
	const char *app_id;       /* a Spark executor's application, else "" */
	const char *executor_id;  /* and its id */
	int32_t stage, attempt;   /* the Spark stage attempt, -1: none */
	int64_t task;             /* the Spark task id (TID), -1: none */
	uint8_t attribution;      /* how the stage was found (enum attribution_method) */
	uint8_t flags;            /* LABEL_* */
};

/* The sample goes to its executor's views (a selected executor, and the
 * thread passes --threads). */
#define LABEL_EXECUTOR_VIEWS 1u

#endif
