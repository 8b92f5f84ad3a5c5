/* app_report.h - one report per Spark application from any number of
 * recordings (nodes, --rotate intervals), joined with Spark's own record
 * of it when one is given (an event log or the REST API).
 *
 * Per stage: its name and description, CPU samples summed over every
 * executor and node, wall time, executors, tasks with their durations and
 * spread, and stragglers: tasks at least twice the stage's median duration
 * and a second longer than it. Each straggler (and each stage's longest
 * task) gets a flame graph and a differential graph against the stage's
 * other tasks. Without Spark's record, task times come from what the
 * recordings saw (a task's start mark or first sample to its last), and
 * the page says so.
 *
 * Writes OUT/report.json, OUT/index.html, and under OUT/APP/ each stage's
 * page (stage-S.A.html) and its tasks' (stage-S.A/task-TID.html and
 * task-TID.diff.html).
 */
#ifndef SPARKPROF_APP_REPORT_H
#define SPARKPROF_APP_REPORT_H

#include <stddef.h>

#include "output/store_file.h"
#include "spark/spark_app_record.h"

struct app_report_input {
	struct store_reader **stores;       /* one per recording */
	const char *const *recordings;      /* their folders, as given */
	size_t nstores;
	const struct spark_app_record *spark; /* NULL: none */
	const char *spark_source;           /* what it was read from, for the page */
	const char *out_dir;
};

/* 0, or -errno after a message naming what failed. */
int app_report_write(const struct app_report_input *in);

#endif
