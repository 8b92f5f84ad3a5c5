/* code_table.c - live code blobs in a sorted array (see code_table.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_table.h"

/* Index of the first entry whose start is >= addr. */
static size_t lower_bound(const struct code_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void drop(struct code_table *t, size_t i)
{
	free(t->v[i].name);
	memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(t->v[0]));
	t->n--;
}

int code_table_add(struct code_table *t, uint64_t start, uint64_t size, uint64_t id,
		   const void *method, char *name, struct log_span span)
{
	uint64_t end = start + size;
	/* Live entries never overlap, so only the one before the insertion
	 * point and those starting inside [start, end) can. */
	size_t i = lower_bound(t, start);
	if (i > 0 && t->v[i - 1].start + t->v[i - 1].size > start)
		drop(t, --i);
	while (i < t->n && t->v[i].start < end)
		drop(t, i);
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct code_entry *v = realloc(t->v, cap * sizeof(*v));
		if (!v) {
			free(name);
			return -1;
		}
		t->v = v;
		t->cap = cap;
	}
	memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(t->v[0]));
	t->v[i] = (struct code_entry){ start, size, id, method, name, span };
	t->n++;
	t->generation++;
	return 0;
}

int code_table_has(const struct code_table *t, uint64_t start, uint64_t size, const char *name)
{
	size_t i = lower_bound(t, start);
	return i < t->n && t->v[i].start == start && t->v[i].size == size &&
	       !strcmp(t->v[i].name, name);
}

uint64_t code_table_remove(struct code_table *t, uint64_t addr, const void *method)
{
	size_t i = lower_bound(t, addr + 1);
	if (i == 0)
		return 0;
	struct code_entry *e = &t->v[i - 1];
	if (addr >= e->start + e->size || !e->method || (method && e->method != method))
		return 0;
	uint64_t id = e->id;
	drop(t, i - 1);
	t->generation++;
	return id;
}

long code_table_render_map(const struct code_table *t, char **out)
{
	size_t cap = 4096, len = 0;
	for (size_t i = 0; i < t->n; i++)
		cap += strlen(t->v[i].name) + 40;
	char *buf = malloc(cap);
	if (!buf)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		int n = snprintf(buf + len, cap - len, "%" PRIx64 " %" PRIx64 " %s\n",
				 t->v[i].start, t->v[i].size, t->v[i].name);
		if (n < 0 || (size_t)n >= cap - len)
			break;
		len += n;
	}
	*out = buf;
	return (long)len;
}
