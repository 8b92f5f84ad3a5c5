/* view_set.h - the views of a sample store that get files: the node's,
 * each selected executor's and each of its stages' (docs/design.md "The
 * sample store"), with their names, their JFR labels and which of them a
 * sample goes to.
 *
 * Names are made from labels, which a store read back is outside input
 * to: ids are spelt as safe file names (base/path_util.h).
 */
#ifndef SPARKPROF_VIEW_SET_H
#define SPARKPROF_VIEW_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/sample_labels.h"
#include "output/store_file.h"
#include "spark/stage_attribution.h"

#define VIEW_ID_MAX 128
#define VIEW_NAME_MAX 320

enum view_kind { VIEW_NODE, VIEW_EXECUTOR, VIEW_STAGE };

/* A view's strings live in its view_set; a stage's ids are its
 * executor's (a long run has tens of thousands of stages). */
struct view {
	enum view_kind kind;
	const char *name;                  /* "all", "APP/exec-ID/all", "APP/exec-ID/stage-3.1";
					    * under VIEW_NAME_MAX */
	const char *app_id;                /* as the labels say (not spelt for a file), cut */
	const char *executor_id;           /* to VIEW_ID_MAX - 1 bytes */
	int32_t stage, attempt;            /* VIEW_STAGE; stage -1: no-stage */
	size_t first_segment, last_segment;
};

enum view_file {
	VIEW_FOLDED, VIEW_WALL_FOLDED, VIEW_OFF_CPU_FOLDED, VIEW_JFR,
	VIEW_FOLDED_HTML, VIEW_WALL_HTML, VIEW_OFF_CPU_HTML, VIEW_FILES
};

struct views;

struct views_settings {
	const char *dir;            /* where the files go */
	bool jfr, compress, html;
	const char *attribution;    /* JFR label of executors' views ("thread", "epoch") */
	/* Whether a stage view gets its files (NULL: every one). The stop
	 * leaves out the stages written during the recording
	 * (output/stage_writer.h). */
	bool (*stage_wanted)(void *ctx, const struct view *v);
	void *stage_ctx;
	/* Only the wanted stages' files, read from segments [first_segment,
	 * end_segment), which must hold those stages whole; no node's or
	 * executors' files (they need every segment). */
	bool stages_only;
	size_t first_segment, end_segment;
	/* Writes the node's and executors' JFR files instead (views.h
	 * views_live_new): this write only closes them. NULL: none. */
	struct views *live_jfr;
};

/* What a view holds, for summary.json. */
struct view_result {
	const struct view *view;
	uint64_t cpu_samples;
	uint64_t off_cpu_events, off_cpu_ns;
	uint64_t first_ns, last_ns;     /* its samples' times (0: none) */
	uint64_t tasks;                 /* stages: distinct tasks seen; executors: tasks
					 * whose names had no stage (Spark 2.2-3.0) */
	uint64_t samples_by[ATTRIBUTION_METHOD_MAX]; /* on-CPU samples by enum attribution_method */
	int errors[VIEW_FILES];         /* -errno of each file that failed */
};

/* The name of a view's file of kind f ("stage-3.wall.folded"), for
 * messages and summary.json. */
void view_file_name(const struct view *view, enum view_file f, bool compress, char *buf,
		    size_t size);

struct view_set;
struct store_labels;

/* Reads the labels of segments [first, end). NULL (errno set) after a
 * message. */
struct view_set *view_set_plan(struct store_reader *r, size_t first, size_t end);
/* A set of the node's view alone, starting at segment first, that grows
 * as segments' labels are added; stages: whether stages get views (else a
 * sample goes to the node's and its executor's only). NULL: no memory. */
struct view_set *view_set_new(bool stages, size_t first);
/* Adds the views of segment seg's labels. 0 or -ENOMEM. Views keep their
 * indexes; view_set_get's pointers may move. */
int view_set_add(struct view_set *vs, const struct store_labels *labels, size_t seg);
void view_set_free(struct view_set *vs);

size_t view_set_count(const struct view_set *vs);
/* Views in the order found: the node's first. */
const struct view *view_set_get(const struct view_set *vs, size_t i);

/* The views a sample goes to: the node's, then its executor's and its
 * stage's when its labels have LABEL_EXECUTOR_VIEWS. n: how many (1, 2
 * without stages, or 3), each an index of view_set_get; 0 for labels the
 * set never saw. */
struct view_route {
	uint32_t to[3];
	uint32_t n;
};

/* Routes found once for each labels of a batch (a segment, a merge) and
 * then read: the caller numbers the batch's labels 0..n-1. */
struct view_routes {
	struct view_route *by_id;
	size_t cap;
};

/* A new batch of n labels. 0 or -ENOMEM. */
int view_routes_reset(struct view_routes *rt, size_t n);
/* The route of labels id (< the batch's n), which are l. */
const struct view_route *view_routes_get(struct view_routes *rt, struct view_set *vs,
					 uint32_t id, const struct sample_labels *l);
void view_routes_free(struct view_routes *rt);

/* A page's title from the view's labels: "CPU: APP, executor 1, stage 3"
 * (mode: what the page counts, flame_page_mode_label). */
void view_title(const struct view *v, const char *mode, char *buf, size_t size);

/* The JFR labels of view v (at most VIEW_LABELS, pointing into v, info
 * and scratch); returns how many. */
#define VIEW_LABELS 8
struct jfr_label;
size_t view_labels(const struct view *v, const struct store_info *info, const char *attribution,
		   struct jfr_label *out, char scratch[3][32]);

#endif
