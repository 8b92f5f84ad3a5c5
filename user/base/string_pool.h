/* string_pool.h - interned strings: equal strings share one copy.
 *
 * Copies are packed into large chunks (no malloc per string) and stay at
 * their address until string_pool_free(), so callers can keep them in
 * long-lived records and compare interned strings by pointer.  (strmap keeps
 * a copy of each key but does not hand it out: interning through it would
 * store every string twice.)
 */
#ifndef SPARKPROF_STRING_POOL_H
#define SPARKPROF_STRING_POOL_H

#include <stddef.h>

struct string_pool;

/* NULL with errno ENOMEM. */
struct string_pool *string_pool_new(void);
void string_pool_free(struct string_pool *pool);

/* The pooled copy of the bytes s[0..len), followed by a NUL.  (Bytes are
 * compared, so a NUL inside s makes a copy that reads as a shorter C string
 * but is not equal to it.)  NULL with errno ENOMEM. */
const char *string_pool_intern(struct string_pool *pool, const char *s, size_t len);

/* Heap bytes the pool holds. */
size_t string_pool_memory(const struct string_pool *pool);

#endif
