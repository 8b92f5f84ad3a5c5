/* stage_writer.h - each stage's files written during the recording, once
 * the stage has ended, so that the stop writes only what is left: the
 * node's and executors' files, the pages, and stages still running.
 *
 * A stage has ended when STAGE_WRITER_QUIET segments have been written
 * after its last sample. Its folded and JFR files are then written from the
 * store, read over its segments alone: the same files the stop would
 * write. A sample that comes later (a late record) makes the stage due
 * again, and its files are written again, whole. A failure (a write, or
 * a segment that did not read back) leaves that stage and every stage
 * after it to the stop.
 *
 * Memory: at most 75 bytes a stage, for STAGE_WRITER_STAGES stages (any
 * more are written at the stop), and an id per executor.
 */
#ifndef SPARKPROF_STAGE_WRITER_H
#define SPARKPROF_STAGE_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "output/sample_store.h"
#include "output/view_set.h"

#define STAGE_WRITER_QUIET 2
#define STAGE_WRITER_STAGES (1u << 20)
/* Stages written in one go: a tick stays short. */
#define STAGE_WRITER_BATCH 256

struct stage_writer;

/* For the store at store_path, writing as settings s say (s is kept). NULL
 * with errno ENOMEM. */
struct stage_writer *stage_writer_new(const char *store_path, const struct views_settings *s);
void stage_writer_free(struct stage_writer *w);

/* A segment is in the file (sample_store_settings.segment_written): the
 * stages its samples belong to. One that did not read back leaves every
 * stage to the stop. */
void stage_writer_segment(struct stage_writer *w, const struct store_segment_written *seg);

/* Between batches: writes the files of up to STAGE_WRITER_BATCH stages
 * that have ended. 0, or -errno when the store could not be read (said);
 * those stages are written at the stop. */
int stage_writer_tick(struct stage_writer *w);

/* views_settings.stage_wanted for the stop (ctx: the writer): false for a
 * stage whose files were written and have had no sample since. */
bool stage_writer_wanted(void *ctx, const struct view *v);

struct stage_writer_stats {
	uint64_t stages;            /* seen */
	uint64_t written;           /* stages' files written, counting rewrites */
	uint64_t rewritten;         /* of which again, after a late sample */
	uint64_t left_to_stop;      /* due when a write failed (later ones are not counted) */
	uint64_t write_ns;          /* time the writes took */
	size_t memory;
};
void stage_writer_stats(const struct stage_writer *w, struct stage_writer_stats *out);

#endif
