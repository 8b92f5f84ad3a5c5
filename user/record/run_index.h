/* run_index.h - DIR/index.html, the run at a glance: summary.json
 * (settings, duration, samples, losses, processes, executors and their
 * stages with a timeline) and links to every flame graph in DIR. Built from
 * the folder alone, so `sparkprof report DIR` can write it again.
 */
#ifndef SPARKPROF_RUN_INDEX_H
#define SPARKPROF_RUN_INDEX_H

#include <stdint.h>

/* Writes DIR/index.html. 0 or -errno after a message. */
int run_index_write(const char *dir);

/* Writes DIR's flame graphs again: X.html beside every X.folded below DIR
 * (the wall unit from summary.json). 0 or the first -errno, after
 * messages; *pages counts the pages written. */
int run_index_write_pages(const char *dir, int *pages);

/* The wall interval a summary.json text states, or 0. */
uint64_t run_index_wall_interval(const char *summary, size_t len);

#endif
