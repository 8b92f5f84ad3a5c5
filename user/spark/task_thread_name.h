/* task_thread_name.h - what a Spark executor thread's full Java name says.
 *
 * Spark renames a task pool thread at the start of every task (see
 * docs/stages.md): Spark 3.1+ "Executor task launch worker for task 1.0 in
 * stage 3.0 (TID 17)", Spark 2.2-3.0 "Executor task launch worker for task
 * 17" (TID only), a fresh pool thread "Executor task launch worker-N", and
 * (4.2+) an idle one "Executor task idle worker#N".  Names come from the JVMTI
 * helper's log, i.e. from outside the profiler: the parser takes a buffer and
 * a length, needs no NUL, and accepts only exact forms - anything else is
 * "not a task thread", never a guessed stage.
 */
#ifndef SPARKPROF_TASK_THREAD_NAME_H
#define SPARKPROF_TASK_THREAD_NAME_H

#include <stddef.h>
#include <stdint.h>

enum task_thread_kind {
	TASK_THREAD_NONE = 0,    /* not a task pool thread name */
	TASK_THREAD_TASK,        /* 3.1+: task index.attempt, stage.attempt, TID */
	TASK_THREAD_TASK_TID,    /* 2.2-3.0: TID only, the stage is unknown */
	TASK_THREAD_POOL,        /* "Executor task launch worker-N": no task yet */
	TASK_THREAD_IDLE,        /* "Executor task idle worker#N" (4.2+) */
};

struct task_thread_name {
	enum task_thread_kind kind;
	int64_t task_index;      /* TASK: index in the TaskSet (not the partition) */
	int64_t task_attempt;    /* TASK */
	int64_t stage;           /* TASK */
	int64_t stage_attempt;   /* TASK */
	int64_t tid;             /* TASK, TASK_TID: Spark's task id (TID) */
	int64_t worker;          /* POOL: N of "-N"; IDLE: N of "#N" (Java thread id) */
};

/* Parses one thread name (len bytes at name; a trailing NUL is not needed
 * and embedded NULs make the name not match).  Always fills *out; returns
 * out->kind. */
enum task_thread_kind task_thread_name_parse(const char *name, size_t len,
					     struct task_thread_name *out);

/* What other executor threads do, for the summary (by Java name or by the
 * 15-character comm; see shared/docs/spark-executors.md section 3). */
enum executor_thread_class {
	THREAD_CLASS_OTHER = 0,
	THREAD_CLASS_TASK,        /* task pool thread (running, fresh or idle) */
	THREAD_CLASS_GC,          /* GC workers, G1 marker/refine/service */
	THREAD_CLASS_JIT,         /* C1/C2 compiler threads */
	THREAD_CLASS_JVM,         /* VM Thread, Reference Handler, Finalizer, ... */
	THREAD_CLASS_RPC,         /* dispatcher-*, netty-rpc-*, rpc-client/server */
	THREAD_CLASS_SHUFFLE,     /* shuffle-client/server netty loops */
	THREAD_CLASS_HEARTBEAT,   /* executor-heartbeater / driver-heartbeater */
	THREAD_CLASS_BLOCK_MANAGER, /* block-manager-* */
	THREAD_CLASS_PYTHON,      /* PySpark writer/monitor/reader threads */
	THREAD_CLASS_MAX,
};

enum executor_thread_class executor_thread_classify(const char *name, size_t len);

/* "task", "gc", "jit", "jvm", "rpc", "shuffle", "heartbeat",
 * "block-manager", "python", "other". */
const char *executor_thread_class_name(enum executor_thread_class c);

#endif
