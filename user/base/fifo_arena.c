/* fifo_arena.c - see fifo_arena.h. */
#include <stdint.h>
#include <stdlib.h>

#include "base/fifo_arena.h"

#define SPARES_KEPT 2

/* Each item is preceded by its rounded size. */
struct chunk {
	struct chunk *next;
	size_t cap, used, read;
	max_align_t data[];
};

struct fifo_arena {
	struct chunk *head, *tail;   /* oldest items in head */
	struct chunk *spare;
	size_t nspare, chunk_bytes, made;
	size_t held_bytes;           /* every chunk's allocation, spares too */
};

struct fifo_arena *fifo_arena_new(size_t chunk_bytes)
{
	struct fifo_arena *a = calloc(1, sizeof(*a));

	if (a)
		a->chunk_bytes = chunk_bytes;
	return a;
}

static void free_chain(struct chunk *c)
{
	while (c) {
		struct chunk *next = c->next;

		free(c);
		c = next;
	}
}

void fifo_arena_free(struct fifo_arena *a)
{
	if (!a)
		return;
	free_chain(a->head);
	free_chain(a->spare);
	free(a);
}

static size_t item_bytes(size_t size)
{
	return sizeof(size_t) + ((size + 7) & ~(size_t)7);
}

void *fifo_arena_alloc(struct fifo_arena *a, size_t size)
{
	size_t need = item_bytes(size);
	struct chunk *c = a->tail;

	if (!c || c->cap - c->used < need) {
		if (a->spare && a->spare->cap >= need) {
			c = a->spare;
			a->spare = c->next;
			a->nspare--;
		} else {
			size_t cap = need > a->chunk_bytes ? need : a->chunk_bytes;

			c = malloc(sizeof(*c) + cap);
			if (!c)
				return NULL;
			c->cap = cap;
			a->made++;
			a->held_bytes += sizeof(*c) + cap;
		}
		c->next = NULL;
		c->used = c->read = 0;
		if (a->tail)
			a->tail->next = c;
		else
			a->head = c;
		a->tail = c;
	}
	char *at = (char *)c->data + c->used;

	*(size_t *)at = need;
	c->used += need;
	return at + sizeof(size_t);
}

void fifo_arena_release_oldest(struct fifo_arena *a)
{
	struct chunk *c = a->head;

	if (!c || c->read == c->used)
		return;
	c->read += *(size_t *)((char *)c->data + c->read);
	if (c->read < c->used)
		return;
	if (c == a->tail) {   /* empty: reuse it in place */
		c->used = c->read = 0;
		return;
	}
	a->head = c->next;
	if (a->nspare < SPARES_KEPT && c->cap == a->chunk_bytes) {
		c->next = a->spare;
		a->spare = c;
		a->nspare++;
	} else {
		a->held_bytes -= sizeof(*c) + c->cap;
		free(c);
	}
}

size_t fifo_arena_chunks_made(const struct fifo_arena *a)
{
	return a->made;
}

size_t fifo_arena_memory(const struct fifo_arena *a)
{
	return a->held_bytes;
}
