/* jfr_writer.h - writes profiling samples as a JFR file (Java Flight
 * Recorder format 2.1) that the JDK's `jfr` (17 and 25), JDK Mission Control
 * and async-profiler's converter open.  See docs/jfr.md.
 *
 * Usage (one writer per output file, not shared between threads):
 *
 *	struct jfr_recording_info info = { start_mono, start_real, 1e9/99, 0,
 *					   labels, nlabels };
 *	struct jfr_writer *w = jfr_writer_open("stage-3.jfr", &info, NULL);
 *	for each sample: jfr_writer_add_sample(w, &sample);
 *	jfr_writer_close(w);
 *
 * What lands in the file:
 *   - CPU samples: jdk.ExecutionSample, thread state STATE_DEFAULT (what
 *     async-profiler's converter keeps for --cpu).  A weight above 1 writes
 *     that many events.
 *   - wall samples: profiler.WallClockSample with samples = weight (the
 *     time is weight * wall_interval_ns, the "wall" setting) and the thread state
 *     (STATE_RUNNABLE/PREEMPTED/SLEEPING/UNINTERRUPTIBLE/OTHER; all kept by
 *     the converter's --wall).
 *   - per chunk: one spark.ProfileLabel event per label, a jdk.ActiveSetting
 *     per label and for "interval"/"wall", one jdk.ActiveRecording.
 * The file is written as PATH.tmp in chunks of about options.chunk_bytes
 * and renamed to PATH by jfr_writer_close; memory stays bounded by what one
 * chunk needs, whatever the recording's length.
 *
 * Strings are kept only as pointers until the chunk is written: frame names
 * must stay valid until jfr_writer_close (as struct frame promises); the
 * thread name only during jfr_writer_add_sample.
 */
#ifndef SPARKPROF_JFR_WRITER_H
#define SPARKPROF_JFR_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "output/jfr/jfr_sample.h"

struct jfr_recording_info {
	uint64_t start_monotonic_ns;  /* CLOCK_MONOTONIC at recording start */
	uint64_t start_realtime_ns;   /* CLOCK_REALTIME at the same moment */
	uint64_t cpu_interval_ns;     /* sampling period, e.g. 1e9/99 */
	uint64_t wall_interval_ns;    /* wall sample unit, 0 if no wall samples */
	const struct jfr_label *labels;
	size_t nlabels;
};

struct jfr_writer_options {
	int gzip;             /* gzip the file (JMC reads it; `jfr` does not) */
	size_t chunk_bytes;   /* target chunk size; 0 = JFR_DEFAULT_CHUNK_BYTES */
};

#define JFR_DEFAULT_CHUNK_BYTES (8u << 20)
struct jfr_writer;

/* Creates PATH.tmp.  opts may be NULL (defaults).  NULL with errno set on
 * failure, after an sp_err line naming the path. */
struct jfr_writer *jfr_writer_open(const char *path, const struct jfr_recording_info *info,
				   const struct jfr_writer_options *opts);

/* Adds one sample.  Returns 0; -EINVAL for a sample that cannot be written
 * (weight 0 or too large, negative nframes, unknown frame type or thread
 * state; nothing is written); or -errno of an earlier write or allocation
 * failure, after which the writer only accepts jfr_writer_close. */
int jfr_writer_add_sample(struct jfr_writer *w, const struct jfr_sample *s);

/* For a writer that may get no samples for a long time (a finished Spark
 * stage): writes the samples it holds as a chunk and frees the chunk's
 * buffers, so that an idle writer holds next to no memory.  Samples may
 * still be added afterwards.  0 or -errno, as jfr_writer_add_sample. */
int jfr_writer_idle(struct jfr_writer *w);

/* Writes the last chunk, renames PATH.tmp to PATH and frees w.  Returns 0
 * or -errno (PATH.tmp is then removed, after an sp_err line). */
int jfr_writer_close(struct jfr_writer *w);

/* Removes PATH.tmp and frees w: a file given up unfinished. */
void jfr_writer_discard(struct jfr_writer *w);

/* Figures of a writer, for logs and benchmarks. */
struct jfr_writer_stats {
	uint64_t samples;             /* accepted by jfr_writer_add_sample */
	uint64_t events;              /* sample events written */
	uint64_t chunks;              /* chunks finished so far */
	uint64_t bytes;               /* bytes finished so far (uncompressed) */
	uint64_t truncated_stacks;
	size_t peak_memory;           /* largest heap use of the writer's buffers */
};
void jfr_writer_stats(const struct jfr_writer *w, struct jfr_writer_stats *out);
/* Heap bytes the writer holds now (an idle writer: next to none). */
size_t jfr_writer_memory(const struct jfr_writer *w);
/* jfr_writer_close that also reports the final stats (out may be NULL). */
int jfr_writer_close_stats(struct jfr_writer *w, struct jfr_writer_stats *out);

#endif
