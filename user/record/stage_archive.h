/* stage_archive.h - the counters of stages the executors have left behind,
 * out of memory until summary.json is written.
 *
 * An application that runs stage after stage for hours (streaming
 * micro-batches, a job server) would grow the recorder by every stage's
 * counters.  The recorder hands each executor's idle stages
 * (stage_attribution_take_idle) to the archive, which writes them to a
 * temporary file in the output folder (base/spill_file.h) and keeps 16
 * bytes a batch.  When a write fails, the stages stay in memory and the
 * archive takes no more.
 */
#ifndef SPARKPROF_STAGE_ARCHIVE_H
#define SPARKPROF_STAGE_ARCHIVE_H

#include <stddef.h>

#include "spark/stage_attribution.h"

struct stage_archive;

/* The file is made on the first put.  NULL with errno ENOMEM. */
struct stage_archive *stage_archive_new(const char *dir);
void stage_archive_free(struct stage_archive *a);

/* Files n stages' counters under owner (an executor).  0, or -errno after
 * an sp_err line (the first failure only: then -ENOSPC, quietly; the
 * caller keeps them). */
int stage_archive_put(struct stage_archive *a, const void *owner, const struct stage_stats *stats,
		      size_t n);

/* Every stage of owner: those filed and the n_live still in memory, one
 * entry a stage (stage_stats_combine), in *out (malloc'd; NULL when none).
 * *unreadable counts filed stages that could not be read back (an sp_err
 * line each batch): they are missing from *out.  a may be NULL (none
 * filed).  0, or -ENOMEM with *unreadable the stages filed. */
int stage_archive_get(struct stage_archive *a, const void *owner, const struct stage_stats *live,
		      size_t n_live, struct stage_stats **out, size_t *n, size_t *unreadable);

/* Heap bytes it holds, and (stages) how many stage entries it filed. */
size_t stage_archive_memory(const struct stage_archive *a, size_t *stages);

#endif
