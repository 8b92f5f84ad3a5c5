/* store_segment.h - a segment of the sample store read back: its labels,
 * and its samples in time order with their frames (what JFR is written
 * from). The bytes are outside input: store_file.h. */
#ifndef SPARKPROF_STORE_SEGMENT_H
#define SPARKPROF_STORE_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "base/frame.h"
#include "base/sample.h"
#include "output/sample_labels.h"
#include "output/store_file.h"

/* Labels of a segment; their strings live in it. */
struct store_labels {
	struct sample_labels *labels;
	size_t n;
	char *strings;
};

/* Segment i's labels. 0, or -EINVAL/-ENOMEM/-errno after a message. */
int store_labels_read(struct store_reader *r, size_t i, struct store_labels *out);
void store_labels_free(struct store_labels *l);
/* Parses a labels part (n labels) into out. 0 or -EINVAL/-ENOMEM. */
int store_labels_parse(const void *data, size_t len, size_t n, struct store_labels *out);

struct store_sample {
	uint64_t timestamp_ns;
	uint64_t weight;          /* 1 on-CPU; off-CPU: nanoseconds */
	uint32_t leaf;            /* its innermost frame node; 0: no frames */
	uint32_t labels;          /* into the segment's labels */
	uint8_t kind, state;      /* enum sample_kind, enum sp_thread_state */
};

/* When a sample counts in time: an off-CPU interval at its end, the moment
 * the recorder gave it its stage, not when its thread went to sleep (maybe
 * before that stage began). */
static inline uint64_t store_sample_time(const struct store_sample *s)
{
	return s->kind == SAMPLE_OFF_CPU && s->weight ? s->timestamp_ns + s->weight - 1
						      : s->timestamp_ns;
}

struct store_frame_node {
	uint32_t parent;          /* 0: outermost */
	struct frame frame;
};

struct store_samples {
	struct store_sample *samples;
	size_t n;
	struct store_frame_node *nodes;   /* numbered from 1 */
	size_t nnodes;
	char **names;
	size_t nnames;
	void *data;               /* the part's bytes: names point into copies of them */
};

/* Segment i's samples (nlabels: its labels' count, for checking). 0, or
 * -EINVAL/-ENOMEM/-errno after a message. */
int store_samples_read(struct store_reader *r, size_t i, size_t nlabels,
		       struct store_samples *out);
void store_samples_free(struct store_samples *s);
int store_samples_parse(const void *data, size_t len, uint64_t first_ns, size_t nlabels,
			struct store_samples *out);

/* The frames of leaf, leaf first, at most max into out; how many there
 * are (more than max: cut). */
size_t store_sample_frames(const struct store_samples *s, uint32_t leaf, struct frame *out,
			   size_t max);

#endif
