/* sample_store.h - every sample of a recording with who it belongs to, kept
 * in segments on disk (output/store_file.h): the one place the recording
 * side puts samples. Profiles, JFR files, pages and exports are views that
 * select by labels (output/views.h).
 *
 * Samples are appended to the open segment: a stack table of its own, its
 * labels, and a record per sample. A segment closes when its memory passes
 * the budget or it spans the segment time; sample_store_tick() does that,
 * between batches of samples, never inside an add. Closing writes the
 * segment to the file and empties the table: memory holds one segment,
 * whatever the recording's length. A stack and labels seen before in the
 * segment cost no allocation.
 */
#ifndef SPARKPROF_SAMPLE_STORE_H
#define SPARKPROF_SAMPLE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/sample.h"
#include "output/sample_labels.h"
#include "output/store_file.h"

struct store_labels;
struct store_samples;

/* A segment just written, its parts (still in memory) parsed once for
 * every user of the hook (output/store_segment.h). */
struct store_segment_written {
	const struct store_info *info;  /* the recording's */
	uint64_t first_ns, last_ns;
	uint32_t nlabels, nsamples;
	/* Valid during the call. NULL when they did not read back: read_err
	 * says why (-EINVAL, -ENOMEM). samples: NULL unless segment_samples
	 * is set. */
	const struct store_labels *labels;
	const struct store_samples *samples;
	int read_err;
};

struct sample_store_settings {
	const char *dir;            /* DIR/samples.store */
	struct store_info info;
	size_t segment_bytes;       /* a segment's memory before it closes */
	uint64_t segment_ns;        /* and its longest span of sample time */
	/* Called with each segment once it is in the file, on the thread
	 * that closed it (an export: it must not wait). NULL: none. */
	void (*segment_written)(void *ctx, const struct store_segment_written *seg);
	void *segment_ctx;
	bool segment_samples;       /* the hook reads samples, not only labels */
};

struct sample_store;

/* Creates DIR/samples.store. NULL (errno set) after a message. */
struct sample_store *sample_store_open(const struct sample_store_settings *settings);
/* Closes the open segment (sample_store_finish) if not done yet. */
void sample_store_free(struct sample_store *st);

/* Appends s (its frames, thread state, weight: 1 on-CPU, off_cpu_ns
 * off-CPU) with labels l. 0, or -ENOMEM (nothing added). */
int sample_store_add(struct sample_store *st, const struct resolved_sample *s,
		     const struct sample_labels *l);

/* Closes the open segment when it is due: past its memory budget, or
 * spanning segment_ns of sample time by now_ns. 0, or the write's -errno
 * (with a message): the segment's samples are then lost and counted. */
int sample_store_tick(struct sample_store *st, uint64_t now_ns);

/* Closes the open segment and syncs the file. 0 or -errno. */
int sample_store_finish(struct sample_store *st);

struct sample_store_stats {
	uint64_t segments;          /* written */
	uint64_t samples;           /* added */
	uint64_t samples_lost;      /* in segments that could not be written */
	uint64_t file_bytes;
	size_t memory;              /* heap bytes of the open segment */
	uint64_t close_ns, close_longest_ns; /* time closing segments took */
};
void sample_store_stats(const struct sample_store *st, struct sample_store_stats *out);

#endif
