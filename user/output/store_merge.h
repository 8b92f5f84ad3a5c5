/* store_merge.h - the rows of many segments as one sorted stream: every
 * distinct stack text of the recording once, depth first with siblings in
 * text order, with the counts of every segment that had it.
 *
 * Each segment's rows part is read as a stream (store_file.h), so memory
 * holds each segment's labels, its current path, its current node's rows
 * and a read buffer, not all its rows: memory grows with the number of
 * segments merged, not with their length.
 */
#ifndef SPARKPROF_STORE_MERGE_H
#define SPARKPROF_STORE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "output/sample_store.h"
#include "output/store_file.h"

struct store_row {
	const struct sample_labels *labels;
	uint32_t label_id;        /* the labels' number in this merge */
	uint8_t kind, state;      /* enum sample_kind, enum sp_thread_state */
	uint64_t weight;          /* samples on-CPU; nanoseconds off-CPU */
	uint64_t samples;
};

/* A node of the merged tree: its depth (1: a process), its text and
 * types (store_file.h), and the rows of the stacks that end there. Valid
 * until the next call. */
struct store_node {
	uint32_t depth;
	const char *text;
	size_t len;
	uint8_t types;
	const struct store_row *rows;
	size_t nrows;
};

struct store_merge;

/* Merges every segment of r. NULL (errno set) after a message. */
struct store_merge *store_merge_open(struct store_reader *r);
/* Merges segments [first, first + n) of r. */
struct store_merge *store_merge_open_range(struct store_reader *r, size_t first, size_t n);
void store_merge_close(struct store_merge *m);

/* The next node: 1, 0 at the end, or -errno (-EINVAL for a damaged
 * segment) after a message. */
int store_merge_next(struct store_merge *m, struct store_node *out);

/* How many labels the merged segments have: rows' label_id is below. */
size_t store_merge_labels(const struct store_merge *m);

#endif
