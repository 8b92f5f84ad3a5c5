/* segment_rows.h - a segment's counts as the store file's rows part
 * (store_file.h): each distinct stack, labels, kind and state with its
 * weight and sample count, placed in a tree of folded frame texts written
 * depth first, siblings in text order, so that segments merge as sorted
 * streams (store_merge.h).
 *
 * Each node: varint depth (1: a process), u8 types (enum frame_type bits,
 * or 1 << STORE_TYPE_LABEL for a process or thread), the text, varint
 * rows, and each row: varint labels, u8 kind << 4 | state, varint weight,
 * varint samples. A depth of 0 ends the part.
 */
#ifndef SPARKPROF_SEGMENT_ROWS_H
#define SPARKPROF_SEGMENT_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/byte_buf.h"
#include "base/sample.h"
#include "base/stack_table.h"

/* One sample of an open segment. */
struct segment_rec {
	uint64_t timestamp_ns;
	uint64_t weight;      /* 1 on-CPU; off-CPU: its nanoseconds */
	uint32_t stack;       /* the segment's stack table id */
	uint32_t labels;      /* the segment's labels index */
	uint8_t kind, state;  /* enum sample_kind, enum sp_thread_state */
};

/* What a label level reads as: a process's and a thread's text. */
struct segment_label_texts {
	const char *process;  /* "" or NULL: the stack has no process level */
	const char *thread;   /* with per_thread; "" reads "[unnamed thread]" */
};

struct segment_rows;

/* Scratch for closing one segment. NULL with errno ENOMEM. */
struct segment_rows *segment_rows_new(void);
void segment_rows_free(struct segment_rows *sr);

/* Appends to out the rows of recs[0, n) (labels index their texts).
 * 0 or -ENOMEM. */
int segment_rows_encode(struct segment_rows *sr, const struct stack_table *stacks,
			const struct segment_label_texts *labels, const struct segment_rec *recs,
			size_t n, bool per_thread, struct byte_buf *out);

/* Heap bytes the scratch keeps. */
size_t segment_rows_memory(const struct segment_rows *sr);

#endif
