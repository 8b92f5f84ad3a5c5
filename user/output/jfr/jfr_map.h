/* jfr_map.h - a hash map from non-zero 64-bit keys to 64-bit values.
 *
 * Used by the chunk writer to remember which pool key a frame name pointer
 * already got, so the common case needs no string work.
 */
#ifndef SPARKPROF_JFR_MAP_H
#define SPARKPROF_JFR_MAP_H

#include <stddef.h>
#include <stdint.h>

struct jfr_map {
	uint64_t *keys;      /* 0 = empty slot */
	uint64_t *values;
	size_t nslots;       /* power of two */
	size_t count;
};

void jfr_map_init(struct jfr_map *m);
void jfr_map_free(struct jfr_map *m);
/* Empties the map, keeps its memory. */
void jfr_map_clear(struct jfr_map *m);
/* After a clear: the memory's pages back to the kernel (jfr_release_pages). */
void jfr_map_release(struct jfr_map *m);
/* The value for key (non-zero), or 0 if absent. */
uint64_t jfr_map_get(const struct jfr_map *m, uint64_t key);
/* Sets key (non-zero) to value; returns 0 or -ENOMEM. */
int jfr_map_put(struct jfr_map *m, uint64_t key, uint64_t value);
size_t jfr_map_memory(const struct jfr_map *m);

#endif
