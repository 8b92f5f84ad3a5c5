/* addr_cache.c - see addr_cache.h. */
#include <stdlib.h>
#include <string.h>

#include "symbols/addr_cache.h"

#define FIRST_CAP 64u

static inline uint32_t slot_of(uint64_t key, uint32_t cap)
{
	key *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(key >> 32) & (cap - 1);
}

void addr_cache_init(struct addr_cache *c, uint32_t max)
{
	uint32_t m = FIRST_CAP;

	memset(c, 0, sizeof(*c));
	while (m < max && m < (1u << 30))
		m *= 2;
	c->max = m;
}

void addr_cache_release(struct addr_cache *c)
{
	free(c->slots);
	c->slots = NULL;
	c->used = c->cap = 0;
}

void addr_cache_clear(struct addr_cache *c)
{
	if (c->slots)
		memset(c->slots, 0, (size_t)c->cap * sizeof(*c->slots));
	c->used = 0;
}

const struct addr_cache_entry *addr_cache_find(const struct addr_cache *c, uint64_t addr)
{
	uint64_t key = addr + 1;

	if (!c->cap || !key)
		return NULL;
	for (uint32_t i = slot_of(key, c->cap);; i = (i + 1) & (c->cap - 1)) {
		if (c->slots[i].addr == key)
			return &c->slots[i];
		if (!c->slots[i].addr)
			return NULL;
	}
}

static int grow(struct addr_cache *c)
{
	uint32_t cap = c->cap ? c->cap * 2 : FIRST_CAP;
	struct addr_cache_entry *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (uint32_t i = 0; i < c->cap; i++) {
		uint32_t j;

		if (!c->slots[i].addr)
			continue;
		for (j = slot_of(c->slots[i].addr, cap); slots[j].addr; j = (j + 1) & (cap - 1))
			;
		slots[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = slots;
	c->cap = cap;
	return 0;
}

void addr_cache_put(struct addr_cache *c, uint64_t addr, const char *name,
		    enum frame_type type, uint8_t tag)
{
	uint64_t key = addr + 1;
	uint32_t i;

	if (!key) /* the one address that cannot be a key: never cached */
		return;
	if ((c->used + 1) * 2 > c->cap) {
		/* Full at its largest: start over rather than grow without end. */
		if (c->cap >= c->max)
			addr_cache_clear(c);
		else if (grow(c))
			return;
	}
	for (i = slot_of(key, c->cap); c->slots[i].addr; i = (i + 1) & (c->cap - 1))
		if (c->slots[i].addr == key)
			break;
	if (!c->slots[i].addr)
		c->used++;
	c->slots[i].addr = key;
	c->slots[i].name = name;
	c->slots[i].type = (uint8_t)type;
	c->slots[i].tag = tag;
}

size_t addr_cache_memory(const struct addr_cache *c)
{
	return (size_t)c->cap * sizeof(struct addr_cache_entry);
}
