/* stage_attribution.h - which Spark stage a sample of one executor belongs to.
 *
 * One tracker per executor JVM.  It is fed, in time order, what the JVMTI
 * helper reports about the executor's threads - full Java thread names per OS
 * tid, optional idle/busy marks, thread exits - and answers, for each CPU
 * sample (time, OS tid, the thread's name at that time), the stage attempt
 * and how it was attributed:
 *
 *   thread mode: a thread running a task (a Spark 3.1+ task name, not marked
 *     idle since) goes to the stage in its name; every other thread (GC, JIT,
 *     shuffle, RPC, idle pool threads, TID-only task names) by the epoch rule
 *     (stage_epoch.h).
 *   epoch mode: every sample by the epoch rule, as the RAPIDS Accelerator.
 *
 * A task runs on a thread from the rename that names it until the thread is
 * renamed again, is marked idle, gets the 4.2+ idle name, or exits.  Spark
 * before 4.2 leaves the last task's name on an idle thread: only an idle
 * mark from the helper tells such a thread apart (docs/stages.md).
 *
 * The tracker also counts, per stage, samples by attribution method and the
 * distinct Spark TIDs seen, for summary.json.
 */
#ifndef SPARKPROF_STAGE_ATTRIBUTION_H
#define SPARKPROF_STAGE_ATTRIBUTION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spark/stage_epoch.h"

enum attribution_mode {
	ATTRIBUTION_THREAD = 0,   /* default */
	ATTRIBUTION_EPOCH,
};

/* "thread" or "epoch" -> 0, else -EINVAL. */
int attribution_mode_parse(const char *s, enum attribution_mode *out);
const char *attribution_mode_name(enum attribution_mode mode);

enum attribution_method {
	ATTRIBUTED_THREAD_NAME = 0, /* the stage in the task thread's name */
	ATTRIBUTED_EPOCH,           /* epoch rule: non-task thread or epoch mode */
	ATTRIBUTED_TID_ONLY,        /* epoch rule: a task thread whose name has only
				     * the TID (Spark 2.2-3.0) */
	ATTRIBUTED_SOLE_TASK,       /* a Python worker: the one task its executor ran */
	ATTRIBUTED_WORKER_EPOCH,    /* a Python worker: epoch rule (none or several ran) */
	ATTRIBUTION_METHOD_MAX,
};

/* "thread-name", "epoch", "tid-only-epoch", "python-sole-task", "python-epoch" */
const char *attribution_method_name(enum attribution_method m);

struct stage_attribution_result {
	struct stage_key stage;     /* stage < 0: no-stage */
	enum attribution_method how;
};

struct stage_attribution;

/* NULL and errno (EINVAL: epoch_interval_ns is 0 or mode unknown). */
struct stage_attribution *stage_attribution_new(enum attribution_mode mode,
						uint64_t start_ns,
						uint64_t epoch_interval_ns);
void stage_attribution_free(struct stage_attribution *sa);

/* Thread `tid` has the full Java name (len bytes, untrusted) from ts on. */
int stage_attribution_thread_name(struct stage_attribution *sa, uint64_t ts, pid_t tid,
				  const char *name, size_t len);
/* The helper saw the thread finish its task (idle) or start one (busy). */
int stage_attribution_thread_idle(struct stage_attribution *sa, uint64_t ts, pid_t tid);
int stage_attribution_thread_busy(struct stage_attribution *sa, uint64_t ts, pid_t tid);
int stage_attribution_thread_exit(struct stage_attribution *sa, uint64_t ts, pid_t tid);

/* The stage of one sample of thread tid at ts.  name/len: the thread's
 * full name at ts as the caller knows it; NULL to use what this tracker
 * was fed.  Samples may lag the thread events (the pipeline delays them
 * ~1 s) but should themselves come roughly in time order; an off-CPU
 * interval is looked up at its end (sample_lookup_time). */
void stage_attribution_sample(struct stage_attribution *sa, uint64_t ts, pid_t tid,
			      const char *name, size_t len,
			      struct stage_attribution_result *out);

/* A sample of a process that serves the executor (a Python worker): the
 * stage and Spark TID of the one task running at ts, how ATTRIBUTED_SOLE_TASK;
 * when none or several run, the epoch rule's stage and task -1, how
 * ATTRIBUTED_WORKER_EPOCH. */
void stage_attribution_served(struct stage_attribution *sa, uint64_t ts,
			      struct stage_attribution_result *out, int64_t *task);

/* Forgets what threads did more than 120 s before now_ns (but the state
 * then in force), and the threads that had ended by then, giving back
 * their room: a thread's own events prune its history only as it gets
 * more, and an executor's pools end threads and start new ones all run
 * long.  Returns how many threads were forgotten. */
size_t stage_attribution_forget_threads(struct stage_attribution *sa, uint64_t now_ns);

/* Distinct TIDs seen with TID-only (Spark 2.2-3.0) names: their stage is
 * unknown, so they appear in no stage's tasks_seen. */
uint64_t stage_attribution_tid_only_tasks(const struct stage_attribution *sa);

/* Heap bytes it holds: threads' recent states. */
size_t stage_attribution_memory(const struct stage_attribution *sa);

/* Thread events that came after the epoch boundary they belong to was
 * already decided (see stage_epoch.h). */
uint64_t stage_attribution_late_events(const struct stage_attribution *sa);

#endif
