/* strmap.h - a hash map from strings to pointers.
 *
 * Keys are copied; values belong to the caller. Used to aggregate folded
 * stacks and to find outputs and processes by name.
 */
#ifndef SPARKPROF_STRMAP_H
#define SPARKPROF_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap;

struct strmap *strmap_new(void);
/* Frees the map and its key copies; free_value (if set) is called on each value. */
void strmap_free(struct strmap *map, void (*free_value)(void *value));

/* Returns the slot holding key's value, inserting a NULL value if the key is
 * new (*inserted = 1 then). NULL on allocation failure. The slot stays valid
 * until the next insertion. */
void **strmap_slot(struct strmap *map, const char *key, size_t key_len, int *inserted);
void *strmap_get(const struct strmap *map, const char *key, size_t key_len);
/* Takes key out (its value is returned, NULL if absent); the others keep
 * their order.  O(count): for maps that remove seldom. */
void *strmap_remove(struct strmap *map, const char *key, size_t key_len);
size_t strmap_count(const struct strmap *map);
/* Heap bytes the map holds (its tables and key copies, not the values). */
size_t strmap_memory(const struct strmap *map);
/* The hash the map files key under (FNV-1a), for callers that keep keys'
 * hashes elsewhere. */
uint64_t strmap_hash(const char *key, size_t key_len);

/* Visits entries in insertion order; stops early when fn returns non-zero
 * and returns that value. */
int strmap_foreach(const struct strmap *map,
		   int (*fn)(const char *key, void *value, void *ctx), void *ctx);

#endif
