/* fifo_arena.h - memory for items that are freed in the order they were
 * made (records waiting to be named): chunks are reused, so a steady stream
 * of items allocates nothing once the arena has grown to its working size.
 */
#ifndef SPARKPROF_FIFO_ARENA_H
#define SPARKPROF_FIFO_ARENA_H

#include <stddef.h>

struct fifo_arena;

/* NULL when out of memory. Items bigger than chunk_bytes get a chunk of
 * their own. */
struct fifo_arena *fifo_arena_new(size_t chunk_bytes);
void fifo_arena_free(struct fifo_arena *a);

/* size bytes, 8-aligned, after every item still held. NULL when out of
 * memory. */
void *fifo_arena_alloc(struct fifo_arena *a, size_t size);

/* Frees the oldest item still held. */
void fifo_arena_release_oldest(struct fifo_arena *a);

/* Bytes of the chunks it holds, spares included. */
size_t fifo_arena_memory(const struct fifo_arena *a);

/* Chunks malloc'd so far (for tests: a steady stream stops adding any). */
size_t fifo_arena_chunks_made(const struct fifo_arena *a);

#endif
