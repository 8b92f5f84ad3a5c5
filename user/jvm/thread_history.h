/* thread_history.h - a JVM's threads over time: each thread's names, its
 * idle/busy marks and its end, looked up as of a moment.
 *
 * Thread ids are the JVM's (its pid namespace); an id can be reused once
 * its thread has ended.  Names are the caller's and must stay valid as long
 * as the history.
 */
#ifndef SPARKPROF_THREAD_HISTORY_H
#define SPARKPROF_THREAD_HISTORY_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/string_pool.h"

enum jvm_helper_thread_event_kind {
	JVM_THREAD_NAMED,   /* the thread has this name from ts on (start or rename) */
	JVM_THREAD_ENDED,   /* the thread ended; its tid may be reused */
	JVM_THREAD_IDLE,    /* task thread parked waiting for a task */
	JVM_THREAD_BUSY,    /* task thread running a task */
};

struct jvm_helper_thread_event {
	uint64_t ts;                 /* CLOCK_MONOTONIC ns */
	pid_t tid;                   /* as the JVM sees it (its pid namespace) */
	enum jvm_helper_thread_event_kind kind;
	const char *name;            /* JVM_THREAD_NAMED only */
};

struct thread_history;

/* NULL with errno ENOMEM. */
struct thread_history *thread_history_new(void);
void thread_history_free(struct thread_history *th);

/* Records ev in its thread's history, in time order even if events come
 * out of order.  0, -EINVAL (tid <= 0), or -ENOMEM. */
int thread_history_add(struct thread_history *th, const struct jvm_helper_thread_event *ev);

/* Name of thread tid at ts; NULL if unknown (before its first name, or
 * after it ended). */
const char *thread_history_name(const struct thread_history *th, pid_t tid, uint64_t ts);

/* Task-thread state at ts: 1 idle, 0 busy, -1 unknown (no name at ts, or
 * no mark yet).  A rename counts as busy (Spark renames a task thread when
 * a task starts on it). */
int thread_history_idle(const struct thread_history *th, pid_t tid, uint64_t ts);

/* Forgets what lookups at ts or later do not need, so that a JVM that runs
 * tasks for hours keeps its threads' recent events only: each thread's
 * events before ts except the latest name and the latest mark, and threads
 * that ended before ts.  A lookup before ts may then answer NULL or -1
 * (unknown), never another name.  Returns how many events it dropped. */
size_t thread_history_forget(struct thread_history *th, uint64_t ts);

/* Interns the names of the events kept into pool, so that the caller can
 * free the pool they came from.  0; -ENOMEM leaves every name as it was. */
int thread_history_move_names(struct thread_history *th, struct string_pool *pool);

/* Heap bytes the history holds (not its names). */
size_t thread_history_memory(const struct thread_history *th);

#endif
