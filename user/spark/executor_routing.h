/* executor_routing.h - sends each sample of a Spark executor to its
 * executor's and its stage's outputs.
 *
 * Outputs: APP/exec-ID/all, APP/exec-ID/stage-S (stage-S.A for attempt
 * A > 0) and APP/exec-ID/no-stage. The stage comes from stage_attribution
 * (thread names published by the helper, and the epoch rule), fed with the
 * helper's thread records as they are read. An executor without the helper
 * cannot be split by stage: its samples go to no-stage and the summary says
 * why; no stage is ever guessed.
 */
#ifndef SPARKPROF_EXECUTOR_ROUTING_H
#define SPARKPROF_EXECUTOR_ROUTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/sample.h"
#include "record/record_options.h"

struct executor_routing;
struct process;
struct profile_outputs;
struct json_writer;

/* NULL (with a message) when --executors does not parse. */
struct executor_routing *executor_routing_new(const struct record_options *opts,
					      struct profile_outputs *outputs,
					      uint64_t start_monotonic_ns);
void executor_routing_free(struct executor_routing *r);

/* Decides whether p is a selected executor, and sets up its stage state. */
void executor_routing_inspect(struct executor_routing *r, struct process *p);
/* Frees what inspect attached to p. */
void executor_routing_release(struct process *p);

/* What the helper said about one of p's threads, in time order. */
enum thread_event { THREAD_EVENT_NAME, THREAD_EVENT_IDLE, THREAD_EVENT_BUSY, THREAD_EVENT_EXIT };
void executor_routing_thread_event(struct process *p, enum thread_event event, uint64_t ts, pid_t tid,
				   const char *name, size_t len);

/* Whether thread tid (as the JVM sees it) of executor p waits in the task
 * pool at ts: a fresh pool thread, a 4.2+ idle name, or a task thread the
 * helper saw parked in the pool (Spark before 4.2 keeps the last task's name
 * on idle threads). */
bool executor_routing_idle_task_thread(const struct process *p, pid_t tid, uint64_t ts,
				       const char *name);

/* Files s under its executor and stage. With --threads tasks, samples of
 * threads that are not running a task are left out. */
void executor_routing_route(struct executor_routing *r, struct process *p,
			    const struct resolved_sample *s);

/* The "executors" array of summary.json. */
void executor_routing_write_summary(struct executor_routing *r, struct json_writer *w);

#endif
