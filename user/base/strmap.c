/* strmap.c - see strmap.h. Open addressing over an index of entries kept in
 * insertion order, so iteration (and so output) is deterministic. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/strmap.h"

struct strmap_entry {
	char *key;
	size_t key_len;
	uint64_t hash;
	void *value;
};

struct strmap {
	struct strmap_entry *entries; /* insertion order */
	size_t count, capacity;
	uint32_t *index;              /* entry number + 1; 0 = empty */
	size_t index_size;            /* power of two */
};

uint64_t strmap_hash(const char *s, size_t len)
{
	return fnv1a(FNV1A_INIT, s, len);
}

struct strmap *strmap_new(void)
{
	return calloc(1, sizeof(struct strmap));
}

void strmap_free(struct strmap *map, void (*free_value)(void *value))
{
	if (!map)
		return;
	for (size_t i = 0; i < map->count; i++) {
		if (free_value)
			free_value(map->entries[i].value);
		free(map->entries[i].key);
	}
	free(map->entries);
	free(map->index);
	free(map);
}

static size_t find_position(const struct strmap *map, const char *key, size_t len,
			    uint64_t hash, int *found)
{
	size_t mask = map->index_size - 1, pos = hash & mask;

	for (;;) {
		uint32_t slot = map->index[pos];
		const struct strmap_entry *e;

		if (!slot) {
			*found = 0;
			return pos;
		}
		e = &map->entries[slot - 1];
		if (e->hash == hash && e->key_len == len && !memcmp(e->key, key, len)) {
			*found = 1;
			return pos;
		}
		pos = (pos + 1) & mask;
	}
}

/* Files every entry in index (size slots, a power of two, all empty). */
static void fill_index(struct strmap *map, uint32_t *index, size_t size)
{
	for (size_t i = 0; i < map->count; i++) {
		size_t pos = map->entries[i].hash & (size - 1);

		while (index[pos])
			pos = (pos + 1) & (size - 1);
		index[pos] = i + 1;
	}
}

static int grow_index(struct strmap *map)
{
	size_t size = map->index_size ? map->index_size * 2 : 64;
	uint32_t *index = calloc(size, sizeof(*index));

	if (!index)
		return -1;
	free(map->index);
	map->index = index;
	map->index_size = size;
	fill_index(map, index, size);
	return 0;
}

void *strmap_get(const struct strmap *map, const char *key, size_t key_len)
{
	int found;
	size_t pos;

	if (!map->index_size)
		return NULL;
	pos = find_position(map, key, key_len, strmap_hash(key, key_len), &found);
	return found ? map->entries[map->index[pos] - 1].value : NULL;
}

void **strmap_slot(struct strmap *map, const char *key, size_t key_len, int *inserted)
{
	uint64_t hash = strmap_hash(key, key_len);
	struct strmap_entry *e;
	int found;
	size_t pos;

	*inserted = 0;
	if ((map->count + 1) * 2 > map->index_size && grow_index(map))
		return NULL;
	pos = find_position(map, key, key_len, hash, &found);
	if (found)
		return &map->entries[map->index[pos] - 1].value;
	if (map->count == map->capacity) {
		size_t cap = map->capacity ? map->capacity * 2 : 32;
		struct strmap_entry *entries = realloc(map->entries, cap * sizeof(*entries));

		if (!entries)
			return NULL;
		map->entries = entries;
		map->capacity = cap;
	}
	e = &map->entries[map->count];
	e->key = malloc(key_len + 1);
	if (!e->key)
		return NULL;
	memcpy(e->key, key, key_len);
	e->key[key_len] = '\0';
	e->key_len = key_len;
	e->hash = hash;
	e->value = NULL;
	map->index[pos] = ++map->count;
	*inserted = 1;
	return &e->value;
}

void *strmap_remove(struct strmap *map, const char *key, size_t key_len)
{
	int found;
	size_t pos, k;
	void *value;

	if (!map->index_size)
		return NULL;
	pos = find_position(map, key, key_len, strmap_hash(key, key_len), &found);
	if (!found)
		return NULL;
	k = map->index[pos] - 1;
	value = map->entries[k].value;
	free(map->entries[k].key);
	memmove(&map->entries[k], &map->entries[k + 1],
		(map->count - k - 1) * sizeof(*map->entries));
	map->count--;
	/* Entries after k moved down: file them all again (a removal cannot
	 * simply empty a slot of an open-addressing index). */
	memset(map->index, 0, map->index_size * sizeof(*map->index));
	fill_index(map, map->index, map->index_size);
	return value;
}

size_t strmap_count(const struct strmap *map)
{
	return map->count;
}

size_t strmap_memory(const struct strmap *map)
{
	size_t n = sizeof(*map) + map->capacity * sizeof(*map->entries) +
		   map->index_size * sizeof(*map->index);

	/* malloc's header and rounding: 16 bytes a key, about */
	for (size_t i = 0; i < map->count; i++)
		n += (map->entries[i].key_len + 1 + 8 + 15) & ~(size_t)15;
	return n;
}

int strmap_foreach(const struct strmap *map,
		   int (*fn)(const char *key, void *value, void *ctx), void *ctx)
{
	for (size_t i = 0; i < map->count; i++) {
		int ret = fn(map->entries[i].key, map->entries[i].value, ctx);

		if (ret)
			return ret;
	}
	return 0;
}
