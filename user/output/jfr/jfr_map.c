/* jfr_map.c - see jfr_map.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/jfr/jfr_buf.h"
#include "output/jfr/jfr_map.h"

static size_t slot_of(uint64_t key, size_t mask)
{
	/* Keys are pointers with a few low bits of tag: mix every bit into
	 * the low ones (murmur3's finalizer). */
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	key *= 0xc4ceb9fe1a85ec53ULL;
	key ^= key >> 33;
	return key & mask;
}

void jfr_map_init(struct jfr_map *m)
{
	memset(m, 0, sizeof(*m));
}

void jfr_map_free(struct jfr_map *m)
{
	free(m->keys);
	free(m->values);
	jfr_map_init(m);
}

void jfr_map_clear(struct jfr_map *m)
{
	if (m->keys)
		memset(m->keys, 0, m->nslots * sizeof(*m->keys));
	m->count = 0;
}

void jfr_map_release(struct jfr_map *m)
{
	if (m->count == 0) {
		jfr_release_pages(m->keys, m->nslots * sizeof(*m->keys));
		jfr_release_pages(m->values, m->nslots * sizeof(*m->values));
	}
}

uint64_t jfr_map_get(const struct jfr_map *m, uint64_t key)
{
	size_t mask = m->nslots - 1, j;

	if (!m->nslots)
		return 0;
	for (j = slot_of(key, mask); m->keys[j]; j = (j + 1) & mask)
		if (m->keys[j] == key)
			return m->values[j];
	return 0;
}

/* Small first: a Spark stage's writer may hold a map per pool with a key
 * or two in it, and hundreds of them are open at once. */
static int grow(struct jfr_map *m)
{
	size_t n = m->nslots ? m->nslots * 2 : 16, j;
	uint64_t *keys = calloc(n, sizeof(*keys));
	uint64_t *values = malloc(n * sizeof(*values));

	if (!keys || !values) {
		free(keys);
		free(values);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nslots; i++) {
		if (!m->keys[i])
			continue;
		for (j = slot_of(m->keys[i], n - 1); keys[j]; j = (j + 1) & (n - 1))
			;
		keys[j] = m->keys[i];
		values[j] = m->values[i];
	}
	free(m->keys);
	free(m->values);
	m->keys = keys;
	m->values = values;
	m->nslots = n;
	return 0;
}

int jfr_map_put(struct jfr_map *m, uint64_t key, uint64_t value)
{
	size_t mask, j;

	/* At most three quarters full, as the pools: chunks hold a map or
	 * two per distinct stack. */
	if ((m->count + 1) * 4 > m->nslots * 3 && grow(m))
		return -ENOMEM;
	mask = m->nslots - 1;
	for (j = slot_of(key, mask); m->keys[j]; j = (j + 1) & mask)
		if (m->keys[j] == key)
			break;
	if (!m->keys[j])
		m->count++;
	m->keys[j] = key;
	m->values[j] = value;
	return 0;
}

size_t jfr_map_memory(const struct jfr_map *m)
{
	return m->nslots * 2 * sizeof(uint64_t);
}
