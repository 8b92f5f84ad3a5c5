/* report_tasks.h - what the recordings of one or more nodes know about each
 * Spark stage and task, for the application report: CPU samples summed
 * over every recording (store) given, the executors and hosts that ran
 * them, and each task's first and last moment seen (a start mark from the
 * helper, or a sample), in wall-clock time so that nodes line up.
 *
 * Collected in one pass over each store's samples; memory holds one entry
 * per task and stage, not the samples.
 */
#ifndef SPARKPROF_REPORT_TASKS_H
#define SPARKPROF_REPORT_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/store_file.h"

struct report_task {
	const char *app_id;
	int64_t tid;
	int32_t stage, attempt;       /* -1: unknown (a TID-only thread name) */
	const char *executor_id, *host;
	uint64_t samples;             /* on-CPU */
	uint64_t first_ms, last_ms;   /* Unix time, ms; 0: never seen */
};

struct report_stage {
	const char *app_id;
	int32_t stage, attempt;
	uint64_t samples;             /* on-CPU, every executor and node */
	uint64_t first_ms, last_ms;
	const char *executors[64];    /* distinct "host/executor", the first 64 */
	size_t nexecutors;
};

struct report_tasks;

/* NULL with errno ENOMEM. */
struct report_tasks *report_tasks_new(void);
void report_tasks_free(struct report_tasks *rt);

/* Adds one store's samples. 0, or -errno after a message naming it. */
int report_tasks_add_store(struct report_tasks *rt, struct store_reader *r);

/* Applications, stages (by app, stage, attempt) and tasks (by app, tid)
 * seen; pointers stay valid until the next add or free. */
size_t report_tasks_apps(const struct report_tasks *rt, const char *const **apps);
size_t report_tasks_stages(const struct report_tasks *rt, const struct report_stage **out);
size_t report_tasks_tasks(const struct report_tasks *rt, const struct report_task **out);
/* The task tid of app, NULL when no recording saw it. */
const struct report_task *report_tasks_find(const struct report_tasks *rt, const char *app_id,
					    int64_t tid);
/* Samples of app no stage claimed (outside any task and epoch). */
uint64_t report_tasks_unstaged(const struct report_tasks *rt, const char *app_id);

#endif
