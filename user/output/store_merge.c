/* store_merge.c - see store_merge.h.
 *
 * A cursor per segment holds its current node's path (a text and its
 * hash per level); a heap orders cursors by path, the shorter of two
 * equal prefixes first (depth first). Each step takes every cursor whose
 * path equals the least, joins their rows, and moves them on at the next
 * step, so that the texts returned stay valid until then.
 *
 * Each node returned gets a number, given to that level of every cursor
 * taken for it: two cursors with the same number at a level have the
 * same path down to it, so comparing them skips those texts.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "base/log.h"
#include "base/strmap.h"
#include "output/store_merge.h"
#include "output/store_segment.h"

/* Rows at one node of one segment: what a hostile file can make a cursor
 * keep. */
#define ROWS_MAX (1u << 24)

struct level {
	char *text;
	size_t len, cap;
	uint64_t hash;
	uint64_t node;                /* the merged node's number; 0: not returned yet */
};

struct cursor {
	struct store_stream *stream;
	struct store_labels labels;
	uint32_t labels_base;         /* label_id of its first labels */
	size_t segment;
	uint32_t depth;               /* of the current node; 0: done */
	struct level *path;           /* path[1..depth] */
	size_t path_cap, path_used;   /* levels made so far: 0..path_used - 1 */
	struct level scratch;         /* the next text, before it takes its level */
	uint8_t types;
	struct store_row *rows;
	size_t nrows, rows_cap;
	uint64_t samples_left;        /* of the segment's, for its rows to come */
};

struct store_merge {
	struct store_reader *r;
	struct cursor *cursors;
	size_t n;
	size_t *heap, nheap;
	size_t *taken, ntaken;        /* cursors of the node returned last */
	size_t nlabels;               /* of the cursors opened */
	uint64_t nodes;               /* returned so far */
	struct store_row *rows;
	size_t rows_cap;
};

static int damaged(struct cursor *c, struct store_merge *m)
{
	sp_err("read segment %zu of %s: its rows are damaged", c->segment,
	       store_reader_path(m->r));
	return -EINVAL;
}

static int read_text(struct cursor *c, struct level *l, bool *failed)
{
	uint64_t len = store_stream_varint(c->stream, failed);

	if (*failed || len > STORE_TEXT_MAX)
		return -EINVAL;
	if (grow_array((void **)&l->text, &l->cap, len + 1, 1))
		return -ENOMEM;
	if (store_stream_read(c->stream, l->text, len) != (long)len)
		return -EINVAL;
	l->text[len] = '\0';
	l->len = len;
	l->hash = strmap_hash(l->text, len);
	return 0;
}

static int read_rows(struct cursor *c, bool *failed)
{
	uint64_t n = store_stream_varint(c->stream, failed);

	if (*failed || n > ROWS_MAX)
		return -EINVAL;
	c->nrows = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t labels = store_stream_varint(c->stream, failed);
		uint8_t ks = store_stream_u8(c->stream, failed);
		struct store_row row = { NULL, 0, ks >> 4, ks & 15, 0, 0 };

		row.weight = store_stream_varint(c->stream, failed);
		row.samples = store_stream_varint(c->stream, failed);
		if (*failed || labels >= c->labels.n || row.kind > SAMPLE_OFF_CPU || !row.samples ||
		    row.samples > c->samples_left || (row.kind == SAMPLE_CPU && row.weight != row.samples))
			return -EINVAL;
		c->samples_left -= row.samples;
		row.labels = &c->labels.labels[labels];
		row.label_id = c->labels_base + (uint32_t)labels;
		if (grow_array((void **)&c->rows, &c->rows_cap, c->nrows + 1, sizeof(row)))
			return -ENOMEM;
		c->rows[c->nrows++] = row;
	}
	return 0;
}

static int compare_levels(const struct level *a, const struct level *b)
{
	int c = memcmp(a->text, b->text, a->len < b->len ? a->len : b->len);

	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* Moves c to its next node (depth 0 at the end). 0 or -errno. */
static int advance(struct cursor *c)
{
	bool failed = false;
	uint64_t depth = store_stream_varint(c->stream, &failed);
	struct level swap;
	int err;

	if (failed || depth > (uint64_t)c->depth + 1 || depth > STORE_DEPTH_MAX)
		return -EINVAL;
	if (!depth) {
		c->depth = 0;
		return 0;
	}
	if (grow_array((void **)&c->path, &c->path_cap, depth + 1, sizeof(*c->path)))
		return -ENOMEM;
	for (; c->path_used <= depth; c->path_used++)
		c->path[c->path_used] = (struct level){ 0 };
	c->types = store_stream_u8(c->stream, &failed);
	err = failed ? -EINVAL : read_text(c, &c->scratch, &failed);
	if (err)
		return err;
	/* Siblings come in order, each once: else the merge would be wrong. */
	if (depth <= c->depth && compare_levels(&c->scratch, &c->path[depth]) <= 0)
		return -EINVAL;
	swap = c->path[depth];
	c->path[depth] = c->scratch;
	c->path[depth].node = 0;
	c->scratch = swap;
	c->depth = (uint32_t)depth;
	return read_rows(c, &failed);
}

static bool same_node(const struct level *x, const struct level *y)
{
	return x->node && x->node == y->node;
}

/* Path order: the first level that differs, else the shorter first.
 * Levels of one returned node are a common prefix: most compares are of
 * siblings, so the level above the last is tried first. */
static int compare(const struct cursor *a, const struct cursor *b)
{
	uint32_t d = a->depth < b->depth ? a->depth : b->depth;
	uint32_t i = d > 1 && same_node(&a->path[d - 1], &b->path[d - 1]) ? d : 1;

	for (; i <= d; i++) {
		const struct level *x = &a->path[i], *y = &b->path[i];

		if (same_node(x, y))
			continue;
		if (x->hash != y->hash || x->len != y->len || memcmp(x->text, y->text, x->len))
			return compare_levels(x, y);
	}
	return (a->depth > b->depth) - (a->depth < b->depth);
}

static bool heap_less(const struct store_merge *m, size_t i, size_t j)
{
	return compare(&m->cursors[m->heap[i]], &m->cursors[m->heap[j]]) < 0;
}

static void heap_swap(struct store_merge *m, size_t i, size_t j)
{
	size_t t = m->heap[i];

	m->heap[i] = m->heap[j];
	m->heap[j] = t;
}

static void heap_push(struct store_merge *m, size_t cursor)
{
	size_t i = m->nheap++;

	m->heap[i] = cursor;
	while (i && heap_less(m, i, (i - 1) / 2)) {
		heap_swap(m, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static size_t heap_pop(struct store_merge *m)
{
	size_t top = m->heap[0], i = 0;

	m->heap[0] = m->heap[--m->nheap];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, least = i;

		if (l < m->nheap && heap_less(m, l, least))
			least = l;
		if (r < m->nheap && heap_less(m, r, least))
			least = r;
		if (least == i)
			return top;
		heap_swap(m, i, least);
		i = least;
	}
}

static int open_cursor(struct store_merge *m, size_t i, size_t segment)
{
	struct cursor *c = &m->cursors[i];
	int err;

	c->segment = segment;
	c->samples_left = store_reader_head(m->r, segment)->samples;
	err = store_labels_read(m->r, segment, &c->labels);
	if (err)
		return err;
	if (c->labels.n > UINT32_MAX - m->nlabels)
		return damaged(c, m);
	c->labels_base = (uint32_t)m->nlabels;
	m->nlabels += c->labels.n;
	c->stream = store_stream_open(m->r, segment, STORE_ROWS);
	if (!c->stream)
		return -ENOMEM;
	err = advance(c);
	if (err)
		return err == -EINVAL ? damaged(c, m) : err;
	if (c->depth)
		heap_push(m, i);
	return 0;
}

struct store_merge *store_merge_open(struct store_reader *r)
{
	return store_merge_open_range(r, 0, store_reader_segments(r));
}

struct store_merge *store_merge_open_range(struct store_reader *r, size_t first, size_t n)
{
	struct store_merge *m = calloc(1, sizeof(*m));
	int err = 0;

	if (m) {
		m->r = r;
		m->n = n;
		m->cursors = calloc(n ? n : 1, sizeof(*m->cursors));
		m->heap = calloc(n ? n : 1, sizeof(*m->heap));
		m->taken = calloc(n ? n : 1, sizeof(*m->taken));
	}
	if (!m || !m->cursors || !m->heap || !m->taken) {
		sp_err("merge the segments of %s: %s", store_reader_path(r), strerror(ENOMEM));
		err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < n; i++)
		err = open_cursor(m, i, first + i);
	if (err) {
		store_merge_close(m);
		errno = -err;
		return NULL;
	}
	return m;
}

void store_merge_close(struct store_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; m->cursors && i < m->n; i++) {
		struct cursor *c = &m->cursors[i];

		store_stream_close(c->stream);
		store_labels_free(&c->labels);
		for (size_t d = 0; d < c->path_used; d++)
			free(c->path[d].text);
		free(c->path);
		free(c->scratch.text);
		free(c->rows);
	}
	free(m->cursors);
	free(m->heap);
	free(m->taken);
	free(m->rows);
	free(m);
}

/* The cursors taken last move on, and back into the heap. */
static int move_taken(struct store_merge *m)
{
	for (size_t i = 0; i < m->ntaken; i++) {
		struct cursor *c = &m->cursors[m->taken[i]];
		int err = advance(c);

		if (err)
			return err == -EINVAL ? damaged(c, m) : err;
		if (c->depth)
			heap_push(m, m->taken[i]);
	}
	m->ntaken = 0;
	return 0;
}

int store_merge_next(struct store_merge *m, struct store_node *out)
{
	size_t nrows = 0;
	struct cursor *first;
	int err = move_taken(m);

	if (err)
		return err;
	if (!m->nheap)
		return 0;
	m->taken[m->ntaken++] = heap_pop(m);
	first = &m->cursors[m->taken[0]];
	while (m->nheap && !compare(&m->cursors[m->heap[0]], first))
		m->taken[m->ntaken++] = heap_pop(m);
	*out = (struct store_node){ first->depth, first->path[first->depth].text,
				    first->path[first->depth].len, 0, NULL, 0 };
	m->nodes++;
	for (size_t i = 0; i < m->ntaken; i++) {
		struct cursor *c = &m->cursors[m->taken[i]];

		c->path[c->depth].node = m->nodes;
		out->types |= c->types;
		if (!c->nrows)
			continue;
		if (grow_array((void **)&m->rows, &m->rows_cap, nrows + c->nrows, sizeof(*m->rows)))
			return -ENOMEM;
		memcpy(m->rows + nrows, c->rows, c->nrows * sizeof(*c->rows));
		nrows += c->nrows;
	}
	out->rows = m->rows;
	out->nrows = nrows;
	return 1;
}

size_t store_merge_labels(const struct store_merge *m)
{
	return m->nlabels;
}
