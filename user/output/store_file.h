/* store_file.h - the sample store's file, DIR/samples.store: how the
 * recording was made, then segments in time order, each what the recorder
 * held for up to a minute (output/sample_store.h writes them).
 *
 * A segment has a head and three parts, each a zlib stream:
 *  - labels: who its samples belong to (struct sample_labels);
 *  - rows: its counts as a tree of folded frame texts in depth-first
 *    order, siblings sorted by text (a process's label, its thread's name
 *    with -t, then its frames from the outermost in), each node with the
 *    counts of the stacks that end there, by labels, kind and state:
 *    segments merge as sorted streams (store_merge.h);
 *  - samples: every sample in time order with its exact frames (JFR).
 *
 * The file is outside input to its readers (a folder copied from another
 * node): every count, index and length is checked, and a bad segment is an
 * error naming the file, never a crash or a wrong answer.
 */
#ifndef SPARKPROF_STORE_FILE_H
#define SPARKPROF_STORE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/byte_buf.h"

#define STORE_FILE_NAME "samples.store"

/* Bounds a reader holds the file to. */
#define STORE_TEXT_MAX (64u << 10)       /* one frame text or label */
#define STORE_FRAMES_MAX 8192            /* frames of one sample */
#define STORE_DEPTH_MAX (STORE_FRAMES_MAX + 2) /* levels of a row: process, thread, frames */
#define STORE_PART_MAX (1u << 30)        /* one part, uncompressed */

/* Flags of the recording. */
#define STORE_PER_THREAD 1u   /* rows have the thread's name under the process */
#define STORE_WALL 2u         /* --wall */
#define STORE_OFF_CPU 4u      /* --off-cpu */
#define STORE_NO_JFR 8u       /* --no-jfr: its views have no JFR files */
#define STORE_GZIP_JFR 16u    /* --compress */
#define STORE_EPOCH 32u       /* --attribution epoch */
#define STORE_NO_HTML 64u     /* --no-html */

struct store_info {
	uint32_t flags;
	uint64_t start_monotonic_ns, start_realtime_ns;
	uint64_t cpu_period_ns;       /* what one on-CPU sample stands for */
	uint64_t wall_interval_ns;    /* the unit of wall counts */
	uint32_t frequency_hz;
	char host[256];
};

enum store_part { STORE_LABELS, STORE_ROWS, STORE_SAMPLES, STORE_PARTS };

/* Row node types: enum frame_type bits, and this one for the process and
 * thread levels above the frames. */
#define STORE_TYPE_LABEL 7

struct store_segment_head {
	uint32_t seq;
	uint64_t first_ns, last_ns;     /* its samples' times */
	uint32_t labels, samples;
	uint64_t part_len[STORE_PARTS];   /* uncompressed */
	uint64_t part_zlen[STORE_PARTS];  /* in the file */
	uint64_t part_offset[STORE_PARTS];
};

/* Writing: create writes the header; a segment is appended whole or not
 * at all (a failed write is cut off again). 0 or -errno, with a message. */
int store_file_create(const char *path, const struct store_info *info, int *fd);
int store_file_append(int fd, const char *path, uint32_t seq, uint64_t first_ns,
		      uint64_t last_ns, uint32_t labels, uint32_t samples,
		      const struct byte_buf parts[STORE_PARTS]);

struct store_reader;

/* Opens path and reads its header and every segment's head. NULL with
 * errno, after one message naming the file. A file cut off in the middle
 * of a segment (a recording killed while writing it) keeps the segments
 * before it, and says so. */
struct store_reader *store_reader_open(const char *path);
void store_reader_close(struct store_reader *r);
const struct store_info *store_reader_info(const struct store_reader *r);
size_t store_reader_segments(const struct store_reader *r);
const struct store_segment_head *store_reader_head(const struct store_reader *r, size_t i);
const char *store_reader_path(const struct store_reader *r);

/* A whole part of segment i, uncompressed (*data malloc'd). 0, -EINVAL
 * (not what the head says), or -errno of the read; a message either way. */
int store_reader_part(struct store_reader *r, size_t i, enum store_part part, void **data,
		      size_t *len);

/* A part read as a stream, a buffer at a time. */
struct store_stream;
struct store_stream *store_stream_open(struct store_reader *r, size_t i, enum store_part part);
void store_stream_close(struct store_stream *s);
/* Up to n bytes into out: the count read (fewer only at the part's end);
 * -EINVAL or -errno, with a message. */
long store_stream_read(struct store_stream *s, void *out, size_t n);
uint8_t store_stream_u8(struct store_stream *s, bool *failed);
uint64_t store_stream_varint(struct store_stream *s, bool *failed);

/* store_reader_open for an open file (fuzzers give a memfd); name is for
 * messages. fd is the reader's from then on, closed with it, even on
 * failure. */
struct store_reader *store_reader_open_fd(int fd, const char *name);

#endif
