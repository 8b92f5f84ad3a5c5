/* jfr_pool.h - one JFR constant pool: values interned to keys.
 *
 * A pool holds the serialized entries of one type ("key value key value...",
 * exactly the bytes that go into the constant-pool event) and a hash index
 * over the value bytes, so equal values get one key.  Pools are per chunk:
 * jfr_pool_reset() forgets the entries (and keeps the memory) when a new
 * chunk starts.
 *
 * Keys, though, stay unique across the chunks of a file: the JDK's reader
 * keeps constants of earlier chunks and resolves a re-used key to the old
 * value (seen as samples with another chunk's stacks).  Sequential keys
 * keep counting; a wanted key (a thread id) is reused only for the value
 * it had before.
 */
#ifndef SPARKPROF_JFR_POOL_H
#define SPARKPROF_JFR_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "output/jfr/jfr_buf.h"

struct jfr_pool;

/* NULL (errno ENOMEM) on failure. */
struct jfr_pool *jfr_pool_new(uint64_t type_id);
void jfr_pool_free(struct jfr_pool *pool);
void jfr_pool_reset(struct jfr_pool *pool);
/* jfr_pool_reset that also frees the entries and index (for a writer that
 * goes idle); keys still never repeat. */
void jfr_pool_trim(struct jfr_pool *pool);
/* After a reset: the entries' and index's pages back to the kernel, the
 * memory kept (jfr_release_pages). */
void jfr_pool_release(struct jfr_pool *pool);

/* First key handed out in place of a wanted key that is already taken. */
#define JFR_POOL_SPARE_KEYS (1u << 30)
/* Wanted keys a file keeps (a thread pool: distinct thread ids; 16 bytes
 * a slot, at most three quarters full: 2 MiB at most); past them a new
 * wanted key gets a spare key. */
#define JFR_POOL_WANTED_MAX 65536

/* Returns the key of the entry whose value bytes equal (value, len), adding
 * it if new.  want_key 0: keys are 1, 2, 3... over the pool's life;
 * otherwise the new entry gets want_key unless another value had it in this
 * file (or it is not below JFR_POOL_SPARE_KEYS, or the file already holds
 * JFR_POOL_WANTED_MAX wanted keys), then a key counting up from
 * JFR_POOL_SPARE_KEYS.  Returns 0 when out
 * of memory. */
uint64_t jfr_pool_intern(struct jfr_pool *pool, const void *value, size_t len,
			 uint64_t want_key);

size_t jfr_pool_count(const struct jfr_pool *pool);
/* The serialized entries (key varint + value bytes, in insertion order). */
const struct jfr_buf *jfr_pool_entries(const struct jfr_pool *pool);
/* Heap bytes this pool holds (entries and index), for chunk rotation. */
size_t jfr_pool_memory(const struct jfr_pool *pool);

/* A 64-bit hash of (p, len); also used for keys of other tables. */
uint64_t jfr_hash(const void *p, size_t len, uint64_t seed);

#endif
