/* row_walk.h - walks a store's merged rows (store_merge.h) as folded
 * lines: the path to each node as text, and each view's counts there,
 * summed over the rows of its labels.
 *
 * A view counts on-CPU samples, wall time (an on-CPU sample weighs the
 * sampling period) split by thread state, and off-CPU time, all in their
 * own units: the writer divides, once per line.
 */
#ifndef SPARKPROF_ROW_WALK_H
#define SPARKPROF_ROW_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/page_builder.h"
#include "output/store_merge.h"
#include "output/view_set.h"
#include "sparkprof_events.h"

#define ROW_STATES (SP_STATE_OTHER + 1)

struct row_counts {
	uint64_t cpu;                  /* samples */
	uint64_t wall_ns;              /* on-CPU and off-CPU */
	uint64_t off_ns;
	uint64_t state_ns[ROW_STATES]; /* wall_ns by thread state */
};

/* Called for each view with counts at the node just walked to. */
typedef int (*row_walk_fn)(void *ctx, uint32_t view, const char *line, size_t len,
			   uint32_t depth, const struct row_counts *c);

/* The path of a merged stream's current node: as a folded line, and as
 * page builders read it. */
struct row_path {
	char *line;                    /* "process;...;frame" */
	size_t line_cap;
	size_t *ends;                  /* the line's length at each depth */
	const char **texts;
	size_t *lens;
	int *types;                    /* -1 for the process and thread levels */
	uint64_t *stamps, stamp;
	size_t depth_cap;
	uint32_t depth;
	struct page_path path;
};

/* The path becomes n's. 0 or -ENOMEM. */
int row_path_enter(struct row_path *p, const struct store_node *n);
void row_path_free(struct row_path *p);
/* Whether level d is a frame (not a process, thread or "[no stack]"). */
bool row_path_is_frame(const struct row_path *p, uint32_t d);

struct row_walk;

/* Views for which wanted is true are counted; cpu_period_ns is what an
 * on-CPU sample weighs in wall time. NULL with errno ENOMEM. */
struct row_walk *row_walk_new(struct view_set *vs, const bool *wanted, uint64_t cpu_period_ns);
void row_walk_free(struct row_walk *w);

/* Walks every node of m, calling fn for every wanted view with counts at
 * it. 0, fn's first non-zero return, -ENOMEM, or the merge's -errno. */
int row_walk_run(struct row_walk *w, struct store_merge *m, row_walk_fn fn, void *ctx);

/* The path of the node fn was called for, as page builders read it. */
const struct page_path *row_walk_path(const struct row_walk *w);

#endif
