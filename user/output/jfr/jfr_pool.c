/* jfr_pool.c - see jfr_pool.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/jfr/jfr_map.h"
#include "output/jfr/jfr_pool.h"

struct slot {
	uint64_t hash;      /* 0 = empty (real hashes are forced non-zero) */
	uint64_t key;
	size_t off;         /* value bytes in entries */
	size_t len;
};

struct jfr_pool {
	uint64_t type_id;
	struct jfr_buf entries;
	struct slot *slots;       /* open addressing, linear probing */
	size_t nslots;            /* power of two */
	size_t count;
	uint64_t next_key;        /* sequential keys */
	uint64_t next_spare;      /* keys given when a wanted key is taken */
	/* Wanted keys in use in this file, with the hash of their value:
	 * kept across chunks so a key never means two values in one file. */
	struct jfr_map taken;
};

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

uint64_t jfr_hash(const void *p, size_t len, uint64_t seed)
{
	const unsigned char *s = p;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL), w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, len);
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return mix(h);
}

struct jfr_pool *jfr_pool_new(uint64_t type_id)
{
	struct jfr_pool *pool = calloc(1, sizeof(*pool));

	if (!pool) {
		errno = ENOMEM;
		return NULL;
	}
	pool->type_id = type_id;
	jfr_buf_init(&pool->entries);
	jfr_map_init(&pool->taken);
	pool->next_key = 1;
	pool->next_spare = JFR_POOL_SPARE_KEYS;
	return pool;
}

void jfr_pool_free(struct jfr_pool *pool)
{
	if (!pool)
		return;
	jfr_buf_free(&pool->entries);
	free(pool->slots);
	jfr_map_free(&pool->taken);
	free(pool);
}

void jfr_pool_reset(struct jfr_pool *pool)
{
	jfr_buf_clear(&pool->entries);
	pool->entries.failed = false;
	if (pool->slots)
		memset(pool->slots, 0, pool->nslots * sizeof(*pool->slots));
	pool->count = 0;
	/* Key counters and wanted keys carry on: see jfr_pool.h. */
}

void jfr_pool_trim(struct jfr_pool *pool)
{
	jfr_buf_free(&pool->entries);
	free(pool->slots);
	pool->slots = NULL;
	pool->nslots = 0;
	pool->count = 0;
	/* Key counters and wanted keys carry on, as in jfr_pool_reset. */
}

void jfr_pool_release(struct jfr_pool *pool)
{
	if (pool->count == 0) {
		jfr_buf_release(&pool->entries);
		jfr_release_pages(pool->slots, pool->nslots * sizeof(*pool->slots));
	}
}

/* Small first, as jfr_map's: most stage writers intern a few values. */
static int grow_slots(struct jfr_pool *pool)
{
	size_t n = pool->nslots ? pool->nslots * 2 : 32;
	struct slot *s = calloc(n, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < pool->nslots; i++) {
		struct slot *old = &pool->slots[i];
		size_t j;

		if (!old->hash)
			continue;
		for (j = old->hash & (n - 1); s[j].hash; j = (j + 1) & (n - 1))
			;
		s[j] = *old;
	}
	free(pool->slots);
	pool->slots = s;
	pool->nslots = n;
	return 0;
}

uint64_t jfr_pool_intern(struct jfr_pool *pool, const void *value, size_t len,
			 uint64_t want_key)
{
	uint64_t h = jfr_hash(value, len, pool->type_id) | 1, key;
	size_t m, j, off;

	if ((pool->count + 1) * 4 > pool->nslots * 3 && grow_slots(pool))
		return 0;
	m = pool->nslots - 1;
	for (j = h & m; pool->slots[j].hash; j = (j + 1) & m) {
		struct slot *s = &pool->slots[j];

		if (s->hash == h && s->len == len &&
		    (!len || !memcmp(pool->entries.data + s->off, value, len)))
			return s->key;
	}
	if (want_key) {
		uint64_t owner = want_key < JFR_POOL_SPARE_KEYS ?
				 jfr_map_get(&pool->taken, want_key) : 0;

		/* The key is free, or was given to this same value in an
		 * earlier chunk; otherwise the value gets a spare key.  Spare
		 * keys count up and are never wanted, so taken does not keep
		 * them: a Spark task thread is renamed for every task, and
		 * keeping each name's spare key grew an executor's writer by
		 * a slot a task for the whole run. */
		if (want_key >= JFR_POOL_SPARE_KEYS || (owner && owner != h) ||
		    (!owner && pool->taken.count >= JFR_POOL_WANTED_MAX)) {
			key = pool->next_spare++;
		} else {
			if (!owner && jfr_map_put(&pool->taken, want_key, h))
				return 0;
			key = want_key;
		}
	} else {
		key = pool->next_key++;
	}
	jfr_buf_varint(&pool->entries, key);
	off = pool->entries.len;
	jfr_buf_put(&pool->entries, value, len);
	if (pool->entries.failed)
		return 0;
	pool->slots[j] = (struct slot){ .hash = h, .key = key, .off = off, .len = len };
	pool->count++;
	return key;
}

size_t jfr_pool_count(const struct jfr_pool *pool)
{
	return pool->count;
}

const struct jfr_buf *jfr_pool_entries(const struct jfr_pool *pool)
{
	return &pool->entries;
}

size_t jfr_pool_memory(const struct jfr_pool *pool)
{
	return pool->entries.cap + pool->nslots * sizeof(struct slot) +
	       jfr_map_memory(&pool->taken);
}
