/* python_procs.h - what the recorder does for CPython processes: find the
 * ones the Python walker can walk, and tie PySpark's Python workers (and
 * their daemon) to the executor they serve.
 *
 * A worker is a process whose parent chain (three steps at most: worker,
 * pyspark.daemon, executor) reaches a Spark executor the recording knows.
 * Its samples take the executor's application and id, go into the
 * executor's views under a root frame "[python worker PID]", and take the
 * stage and task of the one task the executor runs at that instant; when
 * it runs several or none, the epoch rule's stage and no task.
 */
#ifndef SPARKPROF_PYTHON_PROCS_H
#define SPARKPROF_PYTHON_PROCS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/sample.h"
#include "output/sample_store.h"
#include "record/process_table.h"
#include "sparkprof_events.h"

typedef void (*python_found_fn)(void *ctx, pid_t pid, const struct sp_python_info *info);

/* Looks at p for CPython if it may be one and is due (a starting
 * interpreter sets itself up after its first samples): p->python then
 * describes it, and found (if not NULL) is told. */
void python_procs_look(struct process *p, uint64_t now_ns, python_found_fn found, void *ctx);

/* Looks for the executor p serves, once a second until found (before its
 * sample at ts is named: the root frame says what it is). */
void python_procs_find_served(struct process_table *table, struct process *p, uint64_t ts);

/* Whether p serves an executor of table: then l gets the executor's
 * labels, stage and task for sample s. */
bool python_procs_label(struct process_table *table, struct process *p,
			const struct resolved_sample *s, struct sample_labels *l);

#endif
