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
 * recording, and the stop leaves them out. The first pass can also be fed
 * segments as they close (views_live_new), for the node's and
 * executors' JFR files.
 * Memory holds one segment's samples, and for the rows each segment's
 * labels and current path, and the pages' nodes.
 */
#ifndef SPARKPROF_VIEWS_H
#define SPARKPROF_VIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "output/sample_store.h"
#include "output/store_file.h"
#include "output/view_set.h"

struct views;

/* Writes every view's files from r. NULL (errno set) when the store could
 * not be read at all, after a message; files that failed are in the
 * results (with a message each). */
struct views *views_write(struct store_reader *r, const struct views_settings *s);
void views_free(struct views *v);

/* Live files: the node's and executors' JFR files, written as the
 * store's segments close (record), so that the stop need not write them
 * again (it still reads every sample for the views' counts). The stop's views_write, given them as settings'
 * live_jfr, closes them, or writes them itself if they missed a segment.
 * views_free removes those not closed. NULL: no memory. */
struct views *views_live_new(const struct views_settings *s);
/* Adds a segment just written (sample_store.h; the hook needs
 * segment_samples). 0, or -errno after a message, and the live files are
 * given up. */
int views_live_segment(struct views *v, const struct store_segment_written *seg);

size_t views_count(const struct views *v);
const struct view_result *views_result(const struct views *v, size_t i);
/* The first error of any file, or 0. */
int views_first_error(const struct views *v);


#endif
