/* string_pool.c - see string_pool.h.  Open addressing over the copies,
 * at most half full.  A slot is the copy's address alone: its length is
 * kept just before it, so a pool of a JVM's 20k method names costs 8
 * bytes a slot, not 16. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/string_pool.h"

#define CHUNK_SIZE 65536

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct string_pool {
	struct chunk *chunks;        /* newest first; only the newest has room */
	const char **slots;          /* NULL: empty; capacity a power of two */
	size_t count, cap;
};

/* A copy is its length (4 bytes, unaligned) then its bytes and a NUL; it
 * may hold NULs, so copies are compared by length. */
#define LEN_BYTES sizeof(uint32_t)

static size_t copy_len(const char *s)
{
	uint32_t len;

	memcpy(&len, s - LEN_BYTES, LEN_BYTES);
	return len;
}

static uint64_t hash_bytes(const char *s, size_t len)
{
	return fnv1a(FNV1A_INIT, s, len);
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
	const char **n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < pool->cap; i++) {
		const char *s = pool->slots[i];

		if (!s)
			continue;
		size_t j = hash_bytes(s, copy_len(s)) & (cap - 1);
		while (n[j])
			j = (j + 1) & (cap - 1);
		n[j] = s;
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
	if (len > UINT32_MAX - LEN_BYTES - 1) {
		errno = ENOMEM;
		return NULL;
	}
	size_t j = hash_bytes(s, len) & (pool->cap - 1);
	for (const char *o; (o = pool->slots[j]); j = (j + 1) & (pool->cap - 1))
		if (copy_len(o) == len && !memcmp(o, s, len))
			return o;
	char *p = reserve(pool, LEN_BYTES + len + 1);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	uint32_t len32 = (uint32_t)len;
	memcpy(p, &len32, LEN_BYTES);
	p += LEN_BYTES;
	memcpy(p, s, len);
	p[len] = 0;
	pool->slots[j] = p;
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
