/* profile_outputs.h - the files a recording writes, by name.
 *
 * An output is a relative name such as "all" or
 * "app-20261122-0001/exec-1/stage-3"; samples added to it end up in
 * DIR/NAME.folded (on-CPU samples), DIR/NAME.wall.folded (on-CPU and off-CPU
 * time in units of the wall interval, with --wall), DIR/NAME.offcpu.folded
 * (off-CPU time in milliseconds, with --off-cpu) and DIR/NAME.jfr (all of
 * them, unless JFR is off; NAME.jfr.gz when compressed). In JFR, on-CPU
 * samples are jdk.ExecutionSample events, and off-CPU time (and with --wall
 * on-CPU time too) wall-clock samples weighted in units of the wall
 * interval. A sample usually goes to several outputs (the
 * node, its executor, its stage).  The outputs share one stack table
 * (base/stack_table.h): a stack seen before is counted by id, with no
 * allocation.  An output without samples for 2 s writes its JFR chunk
 * and frees the chunk's buffers; after 5 s it writes all its files and
 * parks its counts in a temporary file (base/spill_file.h) as a saved
 * text tree (folded.h), and then retires: the output itself (name, labels,
 * stats) goes to the same file as a record, so a finished stage holds
 * 8 bytes and an index slot, and stopping writes only the outputs still
 * running.  A late sample makes
 * it run again; its files are then written again from the saved tree and
 * the new counts (the JFR file appended to).
 *
 * Epochs keep a long recording's memory flat: when the stack table, the
 * counts and the JFR chunks pass settings.stack_budget (and the table
 * holds a quarter of it), every running output saves its
 * counts as a text tree in the same file, ends its JFR chunk, and the
 * table starts afresh.  The files written at the end merge each output's
 * trees with what it holds, so they read as if the table had never been
 * dropped.
 * With html, each NAME*.folded gets a flame graph NAME*.html beside it
 * (output/flame_page.h).
 */
#ifndef SPARKPROF_PROFILE_OUTPUTS_H
#define SPARKPROF_PROFILE_OUTPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/sample.h"

#define OUTPUT_MAX_LABELS 16

/* Sample time without samples after which an output ends its JFR chunk,
 * and after which it is parked. */
#define OUTPUT_IDLE_NS (2ULL * 1000000000ULL)
#define OUTPUT_PARK_NS (5ULL * 1000000000ULL)

struct output_settings {
	const char *dir;
	uint64_t start_monotonic_ns, start_realtime_ns;
	uint64_t cpu_period_ns;    /* one on-CPU sample stands for this much time */
	bool wall;                 /* write .wall.folded */
	uint64_t wall_interval_ns; /* the unit of .wall.folded counts */
	bool off_cpu;              /* write .offcpu.folded */
	bool jfr;
	bool compress;
	bool per_thread;           /* a frame for the thread under the process */
	bool html;                 /* a flame graph NAME*.html beside each NAME*.folded */
	size_t stack_budget;       /* heap bytes of stacks, counts and JFR chunks before an epoch
				    * (0: no epochs, the table grows for the whole run) */
};

/* Key/value pairs that say what an output is (in its JFR label). */
struct output_label {
	const char *key;
	const char *value;
};

struct output_stats {
	uint64_t cpu_samples;
	uint64_t off_cpu_events;
	uint64_t off_cpu_ns;
	uint64_t unparked;       /* times a late sample brought it back */
	uint64_t streamed;       /* files the stop wrote from its saved trees as streams */
};

struct profile_outputs;
struct profile_output;

struct profile_outputs *profile_outputs_new(const struct output_settings *settings);
/* Writes nothing: profile_outputs_write() does that. */
void profile_outputs_free(struct profile_outputs *outs);

/* The output called name, created on first use with these labels (copied),
 * or read back into memory if it was retired.  NULL when out of memory,
 * when name is not a safe relative path, or when its record does not read
 * back (an sp_err line).  The pointer stays valid while
 * profile_outputs_generation() stays the same: adding a sample may retire
 * outputs idle for OUTPUT_PARK_NS, though never the one added to. */
struct profile_output *profile_outputs_get(struct profile_outputs *outs, const char *name,
					   const struct output_label *labels, int nlabels);

int profile_output_add(struct profile_outputs *outs, struct profile_output *out,
		       const struct resolved_sample *sample);
/* Changes whenever outputs leave memory. */
uint64_t profile_outputs_generation(const struct profile_outputs *outs);
const struct output_stats *profile_output_stats(const struct profile_output *out);
/* Its labels (*n of them), as given when it was made. */
const struct output_label *profile_output_labels(const struct profile_output *out, int *n);

/* Whether out is parked: its files written, its counts out of memory. */
bool profile_output_parked(const struct profile_output *out);

/* Writes every output's files (creating folders as needed) and closes the
 * JFR files; a parked output's are written already.  Outputs are written
 * on up to one thread per online CPU (at most 4), so nothing may add
 * samples meanwhile.  Continues past a failing output; returns the first
 * error. */
int profile_outputs_write(struct profile_outputs *outs);

/* The files an output writes. */
enum output_file_kind {
	OUTPUT_FOLDED, OUTPUT_WALL_FOLDED, OUTPUT_OFF_CPU_FOLDED, OUTPUT_JFR,
	OUTPUT_FOLDED_HTML, OUTPUT_WALL_HTML, OUTPUT_OFF_CPU_HTML,
	OUTPUT_FILE_KINDS
};

/* Calls fn for each of out's files that could not be written (file: its
 * name in the output folder, err: -errno); stops at fn's first non-zero
 * return, which it returns. */
int profile_output_failures(const struct profile_outputs *outs, const struct profile_output *out,
			    int (*fn)(const char *file, int err, void *ctx), void *ctx);

/* Heap bytes the outputs hold, for the summary: what a long recording's
 * memory goes to. */
struct output_memory {
	size_t stacks;          /* the stack table all outputs share */
	size_t counts;          /* every output's counts by stack */
	size_t jfr;             /* open JFR writers */
	size_t jfr_writers, jfr_largest; /* how many are open, the largest's bytes */
	size_t outputs, parked; /* outputs, and how many are parked (most of them retired) */
	size_t retired_index;   /* what finds those (retired_index_memory) */
	uint64_t epochs;        /* times the stack table was started afresh */
	uint64_t epoch_ns, epoch_longest_ns; /* time they took, all and the longest */
	uint64_t epoch_bytes;   /* trees they wrote to the spill file */
	uint64_t spill_bytes;   /* the spill file's size (a file, not memory) */
	uint64_t spill_disk_bytes; /* the room it takes on disk: less, as the pages of trees
				    * no longer needed are given back */
};
void profile_outputs_memory(const struct profile_outputs *outs, struct output_memory *out);

/* Visits outputs in creation order, retired ones read back for the call
 * (out is valid during it only).  Returns fn's first non-zero return. */
int profile_outputs_foreach(struct profile_outputs *outs,
			    int (*fn)(const char *name, struct profile_output *out, void *ctx),
			    void *ctx);

#endif
