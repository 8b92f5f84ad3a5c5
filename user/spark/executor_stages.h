/* executor_stages.h - which processes are the Spark executors the user
 * selected, and which stage each of their samples belongs to.
 *
 * The stage comes from stage_attribution (docs/stages.md), fed with the
 * thread records the helper publishes. An executor without the helper is
 * fed none: its samples have no stage, and no stage is ever guessed.
 */
#ifndef SPARKPROF_EXECUTOR_STAGES_H
#define SPARKPROF_EXECUTOR_STAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/sample.h"
#include "spark/spark_executor.h"
#include "spark/stage_attribution.h"

struct executor_stages_config {
	const char *executors;         /* selection spec (executor_spec.h) */
	const char *app_id;            /* NULL: any application */
	enum attribution_mode mode;
	uint64_t epoch_interval_ns;
	uint64_t start_ns;             /* the recording's start (epochs) */
};

struct executor_stages;
/* One executor process: its identity, whether it is selected, and its
 * stage state. */
struct executor;

/* NULL (with a message) when the selection spec does not parse. */
struct executor_stages *executor_stages_new(const struct executor_stages_config *cfg);
void executor_stages_free(struct executor_stages *es);

/* Whether pid is an executor (NULL: not one, or out of memory), and whether
 * it is selected. */
struct executor *executor_stages_inspect(struct executor_stages *es, pid_t pid);
void executor_free(struct executor *e);

const struct spark_executor *executor_identity(const struct executor *e);
bool executor_selected(const struct executor *e);
enum attribution_mode executor_attribution_mode(const struct executor *e);
/* stage_attribution_forget_threads for its threads (0 when not selected). */
size_t executor_forget_threads(struct executor *e, uint64_t now_ns);
uint64_t executor_tid_only_tasks(const struct executor *e);
uint64_t executor_late_thread_events(const struct executor *e);
/* Heap bytes of its stage attribution (0 when not selected). */
size_t executor_stages_memory(const struct executor *e);

/* What the helper said about one of the executor's threads, in time order. */
enum thread_event { THREAD_EVENT_NAME, THREAD_EVENT_IDLE, THREAD_EVENT_BUSY, THREAD_EVENT_EXIT };
void executor_thread_event(struct executor *e, enum thread_event event, uint64_t ts, pid_t tid,
			   const char *name, size_t len);

/* Whether a thread named name waits in the task pool: a fresh pool thread,
 * a 4.2+ idle name, or a task thread the helper saw parked in the pool
 * (helper_idle 1; Spark before 4.2 keeps the last task's name on idle
 * threads). */
bool executor_idle_task_thread(const char *name, int helper_idle);
/* Whether a thread named name runs a task (a task name, and not idle). */
bool executor_runs_task(const char *name, int helper_idle);

/* The stage and Spark TID (-1: none) of a sample s of a process serving
 * selected executor e (a Python worker): stage_attribution_served. */
struct stage_attribution_result executor_served_stage(struct executor *e,
						      const struct resolved_sample *s,
						      int64_t *task);

/* The stage of a selected executor's sample s. */
struct stage_attribution_result executor_sample_stage(struct executor *e,
						      const struct resolved_sample *s);

#endif
