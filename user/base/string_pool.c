/* string_pool.c - see string_pool.h.  Open addressing over the copies,
 * at most half full. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/string_pool.h"

#define CHUNK_SIZE 65536

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct slot {
	const char *s;               /* NULL: empty */
	size_t len;                  /* s may hold NULs: compare by length */
};

struct string_pool {
	struct chunk *chunks;        /* newest first; only the newest has room */
	struct slot *slots;          /* capacity a power of two */
	size_t count, cap;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

struct string_pool *string_pool_new(void)
{
	return calloc(1, sizeof(struct string_pool));
}

void string_pool_free(struct string_pool *pool)
{
	if (!pool)
		return;
	while (pool->chunks) {
		struct chunk *c = pool->chunks;
		pool->chunks = c->next;
		free(c);
	}
	free(pool->slots);
	free(pool);
}

static int grow_slots(struct string_pool *pool)
{
	size_t cap = pool->cap ? pool->cap * 2 : 1024;
	struct slot *n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < pool->cap; i++) {
		if (!pool->slots[i].s)
			continue;
		size_t j = hash_bytes(pool->slots[i].s, pool->slots[i].len) & (cap - 1);
		while (n[j].s)
			j = (j + 1) & (cap - 1);
		n[j] = pool->slots[i];
	}
	free(pool->slots);
	pool->slots = n;
	pool->cap = cap;
	return 0;
}

/* Room for len bytes in the newest chunk, or a new chunk. */
static char *reserve(struct string_pool *pool, size_t len)
{
	struct chunk *c = pool->chunks;
	if (!c || c->cap - c->used < len) {
		size_t cap = len > CHUNK_SIZE ? len : CHUNK_SIZE;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = pool->chunks;
		c->used = 0;
		c->cap = cap;
		pool->chunks = c;
	}
	char *p = c->data + c->used;
	c->used += len;
	return p;
}

const char *string_pool_intern(struct string_pool *pool, const char *s, size_t len)
{
	if (pool->count * 2 >= pool->cap && grow_slots(pool) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	size_t j = hash_bytes(s, len) & (pool->cap - 1);
	for (; pool->slots[j].s; j = (j + 1) & (pool->cap - 1))
		if (pool->slots[j].len == len && !memcmp(pool->slots[j].s, s, len))
			return pool->slots[j].s;
	char *p = reserve(pool, len + 1);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(p, s, len);
	p[len] = 0;
	pool->slots[j] = (struct slot){ p, len };
	pool->count++;
	return p;
}

size_t string_pool_memory(const struct string_pool *pool)
{
	size_t n = sizeof(*pool) + pool->cap * sizeof(*pool->slots);

	for (const struct chunk *c = pool->chunks; c; c = c->next)
		n += sizeof(*c) + c->cap;
	return n;
}
