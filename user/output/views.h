/* views.h - a recording's files, written from its sample store: for the
 * node, each selected executor and each of its stages (view_set.h),
 * NAME.folded (on-CPU samples), NAME.wall.folded (on-CPU and off-CPU time
 * in units of the wall interval, with --wall), NAME.offcpu.folded
 * (off-CPU milliseconds, with --off-cpu), NAME.jfr (all of them) and a
 * flame graph page beside each folded file.
 *
 * Two passes over the store: the samples in time order write the JFR
 * files and count each view's samples, tasks and times; the merged rows
 * (store_merge.h) write the folded files and pages, a line at a time.
 * Settings can narrow a write to some stages over some segments
 * (view_set.h): stage_writer.h writes ended stages that way while
 * recording, and the stop leaves them out.
 * Memory holds one segment's samples, and for the rows each segment's
 * labels and current path, and the pages' nodes.
 */
#ifndef SPARKPROF_VIEWS_H
#define SPARKPROF_VIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "output/store_file.h"
#include "output/view_set.h"

struct views;

/* Writes every view's files from r. NULL (errno set) when the store could
 * not be read at all, after a message; files that failed are in the
 * results (with a message each). */
struct views *views_write(struct store_reader *r, const struct views_settings *s);
void views_free(struct views *v);

size_t views_count(const struct views *v);
const struct view_result *views_result(const struct views *v, size_t i);
/* The first error of any file, or 0. */
int views_first_error(const struct views *v);


#endif
