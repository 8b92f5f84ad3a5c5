/* run_index.h - DIR/index.html, the run at a glance: summary.json
 * (settings, duration, samples, losses, processes, executors and their
 * stages with a timeline) and links to every flame graph in DIR. Built from
 * the folder alone, so `sparkprof report DIR` can write it again.
 */
#ifndef SPARKPROF_RUN_INDEX_H
#define SPARKPROF_RUN_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* Writes DIR/index.html. 0 or -errno after a message. */
int run_index_write(const char *dir);

/* Writes DIR's flame graphs again: X.html beside every X.folded below DIR
 * (the wall unit from summary.json). 0 or the first -errno, after
 * messages; *pages counts the pages written. */
int run_index_write_pages(const char *dir, int *pages);

/* The wall interval a summary.json text states, or 0. */
uint64_t run_index_wall_interval(const char *summary, size_t len);

/* The same, of the summary.json in the folder of a recording's file IN or
 * up to three folders above it (IN may be APP/exec-ID/stage-S.wall.folded). */
uint64_t run_index_wall_unit_near(const char *in);

#endif
