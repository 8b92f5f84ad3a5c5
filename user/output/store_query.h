/* store_query.h - the samples of a recording's store that match labels,
 * as one flame graph or one pprof file: a task, a stage, an executor or
 * the whole recording, from its merged rows (store_merge.h).
 */
#ifndef SPARKPROF_STORE_QUERY_H
#define SPARKPROF_STORE_QUERY_H

#include <stdbool.h>
#include <stdint.h>

#include "output/flame_tree.h"
#include "output/sample_store.h"
#include "output/store_file.h"

/* Which samples: fields left NULL or unset match any. An executor or a
 * stage selects the samples of its files: with `--threads tasks`, not its
 * other threads' (LABEL_EXECUTOR_VIEWS). */
struct label_filter {
	const char *app_id, *executor_id;
	bool by_stage;
	int32_t stage, attempt;     /* by_stage: stage -1 is no stage */
	int64_t task;               /* -1: any */
};

bool label_filter_match(const struct label_filter *f, const struct sample_labels *l);

enum query_kind { QUERY_CPU, QUERY_WALL, QUERY_OFF_CPU };

/* The flame graph tree of the matching samples' kind (CPU samples, wall
 * time in wall intervals, off-CPU milliseconds), with only the nodes a
 * page of min_width_pct shows. NULL with *err (after a message). */
struct flame_tree *store_query_flame(struct store_reader *r, const struct label_filter *f,
				     enum query_kind kind, double min_width_pct, int *err);

/* Adds the matching on-CPU samples of r, but those of the tasks in
 * except[0..nexcept), to column of t, unpruned and without the process
 * and thread levels: trees of several stores (nodes, executors) add up,
 * and a diff's two columns fill from two filters. 0 or -errno after a
 * message. */
int store_query_tree_add(struct store_reader *r, const struct label_filter *f,
			 const int64_t *except, size_t nexcept, struct flame_tree *t, int column);

/* Writes path: a gzip'd pprof profile of the matching samples, with a
 * value per kind the recording has (samples/count, wall/nanoseconds,
 * offcpu/nanoseconds), frame types kept, and each sample's labels
 * (spark.app.id, spark.executor.id, spark.stage.id, spark.stage.attempt,
 * spark.task.id, thread.name, thread.state, process.pid, process.name).
 * 0 or -errno, after a message. */
int store_query_pprof(struct store_reader *r, const struct label_filter *f, const char *path);

#endif
