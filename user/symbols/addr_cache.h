/* addr_cache.h - answers already given for code addresses, so that each
 * distinct address is symbolized once, not once per sample.
 *
 * Open addressing, at most half full, grown by doubling up to a limit;
 * when full it is emptied and refilled from the addresses still in use
 * (a bound on memory for processes that run through much code).  A lookup
 * allocates nothing.  The owner empties it when what it caches may have
 * changed (a process's maps were read again).
 */
#ifndef SPARKPROF_ADDR_CACHE_H
#define SPARKPROF_ADDR_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "base/frame.h"

struct addr_cache_entry {
	uint64_t addr;       /* key + 1; 0: empty */
	const char *name;
	uint8_t type;        /* enum frame_type */
	uint8_t tag;         /* the owner's: e.g. which kind of answer */
};

struct addr_cache {
	struct addr_cache_entry *slots;
	uint32_t used, cap, max;
};

/* max: most entries kept (rounded up to a power of two). */
void addr_cache_init(struct addr_cache *c, uint32_t max);
void addr_cache_release(struct addr_cache *c);
void addr_cache_clear(struct addr_cache *c);

/* The entry for addr, or NULL. */
const struct addr_cache_entry *addr_cache_find(const struct addr_cache *c, uint64_t addr);

/* Remembers addr's answer; fails silently when out of memory (the next
 * lookup just symbolizes again). */
void addr_cache_put(struct addr_cache *c, uint64_t addr, const char *name,
		    enum frame_type type, uint8_t tag);

/* Heap bytes used. */
size_t addr_cache_memory(const struct addr_cache *c);

#endif
