/* view_text.h - views' folded files and pages, from a store's rows
 * (views.h has the files). Counts are summed in their own units (samples,
 * nanoseconds) and divided for a file only once whole, so a file reads
 * the same however its samples were cut into segments.
 *
 * The node's and executors' views last the whole recording: their files
 * and pages are written from every segment's rows merged as one stream
 * (store_merge.h). A stage lasts a few segments: the first pass gives its
 * rows segment by segment (stage_text_segment), a run of lines in text
 * order each, kept in a spool file in the output folder until the stage's
 * last segment, and merged then into its files. Memory holds one
 * segment's runs, and a merge's open files are three a view.
 */
#ifndef SPARKPROF_VIEW_TEXT_H
#define SPARKPROF_VIEW_TEXT_H

#include <stddef.h>

#include "output/store_file.h"
#include "output/view_set.h"

/* The node's and executors' folded files and pages. 0, or -errno when the
 * rows could not be read (files that failed are in results, with a
 * message). */
int view_text_write(struct store_reader *r, struct view_set *vs, const struct views_settings *s,
		    struct view_result *results);

struct stage_text;

/* For the stage views that wanted marks (by view). NULL with errno ENOMEM. */
struct stage_text *stage_text_new(struct view_set *vs, const bool *wanted,
				  const struct views_settings *s, const struct store_info *info,
				  struct view_result *results);
/* Removes the spool. */
void stage_text_free(struct stage_text *t);
/* Segment seg's rows, after the segments before it: the stages that end
 * in it get their folded files. 0 or -errno. */
int stage_text_segment(struct stage_text *t, struct store_reader *r, size_t seg);

#endif
