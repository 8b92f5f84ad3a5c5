/* method_ids.c - open addressing over jmethodIDs (see method_ids.h). */
#include <stdlib.h>
#include <string.h>

#include "method_ids.h"

static size_t slot_of(const void *method, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)method * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (cap - 1);
}

uint32_t method_ids_find(const struct method_ids *t, const void *method)
{
	if (!t->cap)
		return 0;
	for (size_t j = slot_of(method, t->cap); t->method[j]; j = (j + 1) & (t->cap - 1))
		if (t->method[j] == method)
			return t->number[j];
	return 0;
}

static void put(const void **methods, uint32_t *numbers, size_t cap, const void *method,
		uint32_t number)
{
	size_t j = slot_of(method, cap);

	while (methods[j])
		j = (j + 1) & (cap - 1);
	methods[j] = method;
	numbers[j] = number;
}

static int resize(struct method_ids *t, size_t cap)
{
	const void **m = calloc(cap, sizeof(*m));
	uint32_t *n = malloc(cap * sizeof(*n));

	if (!m || !n) {
		free(m);
		free(n);
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++)
		if (t->method[i])
			put(m, n, cap, t->method[i], t->number[i]);
	free(t->method);
	free(t->number);
	t->method = m;
	t->number = n;
	t->cap = cap;
	return 0;
}

uint32_t method_ids_add(struct method_ids *t, const void *method)
{
	if (!method || t->next == UINT32_MAX)
		return 0;
	if (t->count >= METHOD_IDS_MAX) {
		/* Forget, not grow: a JVM that keeps loading classes would
		 * otherwise grow the table for its whole life. */
		memset(t->method, 0, t->cap * sizeof(*t->method));
		t->count = 0;
	}
	if ((t->count + 1) * 2 > t->cap && resize(t, t->cap ? t->cap * 2 : 1024))
		return 0;
	if (t->count + 1 > t->capspans) {
		size_t cap = t->capspans ? t->capspans * 2 : 1024;
		struct log_span *s = realloc(t->spans, cap * sizeof(*s));

		if (!s)
			return 0;
		t->spans = s;
		t->capspans = cap;
	}
	put(t->method, t->number, t->cap, method, ++t->next);
	t->spans[t->count++] = (struct log_span){ 0, 0 };
	return t->next;
}

void method_ids_set_span(struct method_ids *t, uint32_t number, struct log_span span)
{
	if (t->count && number >= method_ids_first(t) && number <= t->next)
		t->spans[number - method_ids_first(t)] = span;
}
