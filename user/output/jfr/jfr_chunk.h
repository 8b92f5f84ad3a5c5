/* jfr_chunk.h - one JFR chunk being built: constant pools, sample events,
 * and its serialization (68-byte header, events, constant-pool event,
 * metadata event).
 *
 * A chunk is self-contained: its pools hold every constant its events
 * reference.  After jfr_chunk_write the chunk is reset and can be reused.
 */
#ifndef SPARKPROF_JFR_CHUNK_H
#define SPARKPROF_JFR_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/jfr/jfr_out.h"
#include "output/jfr/jfr_sample.h"

#define JFR_HEADER_BYTES 68

struct jfr_chunk;

/* What a chunk's header and per-chunk events need to know. */
struct jfr_chunk_context {
	uint64_t start_monotonic_ns;   /* recording start (ticks = monotonic ns) */
	uint64_t start_realtime_ns;
	uint64_t cpu_interval_ns;
	uint64_t wall_interval_ns;
	const struct jfr_label *labels;
	size_t nlabels;
	const char *destination;       /* the file's final path */
	const struct jfr_buf *metadata_body;
};

/* NULL with errno ENOMEM. */
struct jfr_chunk *jfr_chunk_new(void);
void jfr_chunk_free(struct jfr_chunk *c);

/* Starts an empty chunk whose time range begins at start_ticks. */
void jfr_chunk_begin(struct jfr_chunk *c, uint64_t start_ticks);

/* Frees the buffers and pools an empty chunk (just begun) keeps for reuse:
 * for a writer that may get no more samples for a long time. */
void jfr_chunk_trim(struct jfr_chunk *c);
/* Keeps them, but hands their pages back to the kernel (an empty chunk,
 * just begun): for a writer whose next chunk is on its way. */
void jfr_chunk_release(struct jfr_chunk *c);

/* Adds a sample (checked by the caller); returns 0 or -ENOMEM. */
int jfr_chunk_add_sample(struct jfr_chunk *c, const struct jfr_sample *s);
/* Checks a sample's fields; 0 or -EINVAL. */
int jfr_chunk_check_sample(const struct jfr_sample *s);

/* Events and pool bytes so far: about the chunk's size once written. */
size_t jfr_chunk_bytes(const struct jfr_chunk *c);
/* Heap bytes the chunk holds. */
size_t jfr_chunk_memory(const struct jfr_chunk *c);
uint64_t jfr_chunk_events(const struct jfr_chunk *c);
uint64_t jfr_chunk_truncated(const struct jfr_chunk *c);
/* Appends the per-chunk events, writes the whole chunk to out and resets
 * the chunk.  final marks the file's last chunk.  Returns bytes written
 * (> 0), or -errno. */
long long jfr_chunk_write(struct jfr_chunk *c, struct jfr_out *out,
			  const struct jfr_chunk_context *ctx, bool final);

#endif
