/* stack_table.c - see stack_table.h.  Stacks sit one after another in one
 * frame array (no allocation per stack); an open-addressing index of ids,
 * at most half full, finds them by hash. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "base/stack_table.h"
#include "base/string_pool.h"

struct stack_entry {
	uint64_t hash;
	const char *root, *thread;   /* pooled copies, or NULL */
	size_t first;                /* index of the leaf frame in frames */
	uint32_t n;
};

struct stack_table {
	struct stack_entry *entries;
	size_t count, entries_cap;
	struct frame *frames;
	size_t nframes, frames_cap;
	uint32_t *index;             /* id + 1, 0: empty; capacity a power of two */
	size_t index_cap;
	struct string_pool *names;   /* roots and threads */
};

struct stack_table *stack_table_new(void)
{
	struct stack_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->names = string_pool_new();
	if (!t->names) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

void stack_table_free(struct stack_table *t)
{
	if (!t)
		return;
	free(t->entries);
	free(t->frames);
	free(t->index);
	string_pool_free(t->names);
	free(t);
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static uint64_t mix_text(uint64_t h, const char *s)
{
	if (!s)
		return mix(h, 1);
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return mix(h, 2);
}

static uint64_t stack_hash(const char *root, const char *thread, const struct frame *frames,
			   size_t n)
{
	uint64_t h = mix_text(mix_text(1469598103934665603ull, root), thread);

	for (size_t i = 0; i < n; i++)
		h = mix(h, (uint64_t)(uintptr_t)frames[i].name << 3 ^ (uint64_t)frames[i].type);
	return mix(h, n);
}

static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int same_stack(const struct stack_table *t, const struct stack_entry *e, uint64_t hash,
		      const char *root, const char *thread, const struct frame *frames, size_t n)
{
	const struct frame *f = t->frames + e->first;

	if (e->hash != hash || e->n != n || !same_text(e->root, root) ||
	    !same_text(e->thread, thread))
		return 0;
	/* Field by field: a struct frame's padding is not part of its value. */
	for (size_t i = 0; i < n; i++)
		if (f[i].name != frames[i].name || f[i].type != frames[i].type)
			return 0;
	return 1;
}

static int grow_index(struct stack_table *t)
{
	size_t cap = t->index_cap ? t->index_cap * 2 : 1024;
	uint32_t *index = calloc(cap, sizeof(*index));

	if (!index)
		return -ENOMEM;
	for (size_t id = 0; id < t->count; id++) {
		size_t i = t->entries[id].hash & (cap - 1);

		while (index[i])
			i = (i + 1) & (cap - 1);
		index[i] = (uint32_t)id + 1;
	}
	free(t->index);
	t->index = index;
	t->index_cap = cap;
	return 0;
}

static const char *pooled(struct stack_table *t, const char *s, int *failed)
{
	const char *copy;

	if (!s)
		return NULL;
	copy = string_pool_intern(t->names, s, strlen(s));
	if (!copy)
		*failed = 1;
	return copy;
}

int64_t stack_table_intern(struct stack_table *t, const char *root, const char *thread,
			   const struct frame *frames, size_t n)
{
	uint64_t hash = stack_hash(root, thread, frames, n);
	struct stack_entry *e;
	int failed = 0;
	size_t i;

	if (n > UINT32_MAX || t->count >= UINT32_MAX - 1)
		return -ENOMEM;
	if (t->index_cap) {
		for (i = hash & (t->index_cap - 1); t->index[i]; i = (i + 1) & (t->index_cap - 1)) {
			e = &t->entries[t->index[i] - 1];
			if (same_stack(t, e, hash, root, thread, frames, n))
				return t->index[i] - 1;
		}
	}
	if ((t->count + 1) * 2 > t->index_cap && grow_index(t))
		return -ENOMEM;
	if (grow_array((void **)&t->entries, &t->entries_cap, t->count + 1, sizeof(*t->entries)) ||
	    grow_array((void **)&t->frames, &t->frames_cap, t->nframes + n, sizeof(*t->frames)))
		return -ENOMEM;
	e = &t->entries[t->count];
	e->hash = hash;
	e->root = pooled(t, root, &failed);
	e->thread = pooled(t, thread, &failed);
	if (failed)
		return -ENOMEM;
	e->first = t->nframes;
	e->n = (uint32_t)n;
	for (size_t k = 0; k < n; k++)
		t->frames[t->nframes + k] = frames[k];
	t->nframes += n;
	for (i = hash & (t->index_cap - 1); t->index[i]; i = (i + 1) & (t->index_cap - 1))
		;
	t->index[i] = (uint32_t)t->count + 1;
	return (int64_t)t->count++;
}

size_t stack_table_count(const struct stack_table *t)
{
	return t->count;
}

void stack_table_get(const struct stack_table *t, uint32_t id, const char **root,
		     const char **thread, const struct frame **frames, size_t *n)
{
	const struct stack_entry *e = &t->entries[id];

	*root = e->root;
	*thread = e->thread;
	*frames = t->frames + e->first;
	*n = e->n;
}

size_t stack_table_memory(const struct stack_table *t)
{
	return sizeof(*t) + t->entries_cap * sizeof(*t->entries) +
	       t->frames_cap * sizeof(*t->frames) + t->index_cap * sizeof(*t->index);
}
