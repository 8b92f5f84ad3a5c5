/* segment_rows.c - see segment_rows.h.
 *
 * Samples are sorted into rows (one per stack, labels, kind and state),
 * each row's levels are interned as texts (equal texts share one pooled
 * copy, so a pointer stands for a text), and the rows are placed in a
 * tree keyed by (parent, text): stacks that read the same meet, whatever
 * frames made them. Siblings are then sorted by text and the tree is
 * written depth first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "base/string_pool.h"
#include "output/folded.h"
#include "output/segment_rows.h"
#include "output/store_file.h"

#define TEXT_MAX 65536
#define NO_ROW UINT32_MAX

struct agg_row {
	uint32_t stack, labels;
	uint8_t ks;             /* kind << 4 | state */
	uint64_t weight, count;
	uint32_t next;          /* the node's next row */
};

struct trie_node {
	const char *text;       /* pooled: a pointer stands for a text */
	uint32_t parent, first_child, next_sibling;
	uint32_t first_row;
	uint8_t types;
};

struct segment_rows {
	uint32_t *order;
	size_t order_cap;
	struct agg_row *rows;
	size_t nrows, rows_cap;
	struct trie_node *nodes;
	size_t nnodes, nodes_cap;
	uint32_t *index;        /* open addressing: (parent, text) -> node */
	size_t index_cap;
	const char **frame_text; /* per stack table node, as found */
	size_t frame_text_cap;
	uint32_t *path;
	size_t path_cap;
	struct string_pool *texts;
	char scratch[TEXT_MAX];
};

struct segment_rows *segment_rows_new(void)
{
	return calloc(1, sizeof(struct segment_rows));
}

void segment_rows_free(struct segment_rows *sr)
{
	if (!sr)
		return;
	free(sr->order);
	free(sr->rows);
	free(sr->nodes);
	free(sr->index);
	free(sr->frame_text);
	free(sr->path);
	string_pool_free(sr->texts);
	free(sr);
}

size_t segment_rows_memory(const struct segment_rows *sr)
{
	return sizeof(*sr) + sr->order_cap * sizeof(*sr->order) + sr->rows_cap * sizeof(*sr->rows) +
	       sr->nodes_cap * sizeof(*sr->nodes) + sr->index_cap * sizeof(*sr->index) +
	       sr->frame_text_cap * sizeof(*sr->frame_text) + sr->path_cap * sizeof(*sr->path);
}

static int by_row_key(const void *a, const void *b, void *ctx)
{
	const struct segment_rec *recs = ctx;
	const struct segment_rec *x = &recs[*(const uint32_t *)a];
	const struct segment_rec *y = &recs[*(const uint32_t *)b];

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (x->labels != y->labels)
		return x->labels < y->labels ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->state > y->state) - (x->state < y->state);
}

/* recs summed by (stack, labels, kind, state) into sr->rows. */
static int aggregate(struct segment_rows *sr, const struct segment_rec *recs, size_t n)
{
	if (grow_array((void **)&sr->order, &sr->order_cap, n, sizeof(*sr->order)) ||
	    grow_array((void **)&sr->rows, &sr->rows_cap, n, sizeof(*sr->rows)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		sr->order[i] = (uint32_t)i;
	qsort_r(sr->order, n, sizeof(*sr->order), by_row_key, (void *)recs);
	sr->nrows = 0;
	for (size_t i = 0; i < n; i++) {
		const struct segment_rec *r = &recs[sr->order[i]];
		struct agg_row *last = sr->nrows ? &sr->rows[sr->nrows - 1] : NULL;
		uint8_t ks = (uint8_t)(r->kind << 4 | (r->state & 15));

		if (r->kind == SAMPLE_TASK)   /* marks, not counts */
			continue;
		if (last && last->stack == r->stack && last->labels == r->labels && last->ks == ks) {
			last->weight += r->weight;
			last->count++;
			continue;
		}
		sr->rows[sr->nrows++] = (struct agg_row){ r->stack, r->labels, ks, r->weight, 1, NO_ROW };
	}
	return 0;
}

static size_t slot_of(const struct segment_rows *sr, uint32_t parent, const char *text)
{
	uint64_t h = ((uint64_t)parent * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)(uintptr_t)text;
	size_t i;

	h ^= h >> 29;
	i = (size_t)(h * 0xbf58476d1ce4e5b9ULL >> 7) & (sr->index_cap - 1);
	while (sr->index[i]) {
		const struct trie_node *t = &sr->nodes[sr->index[i]];

		if (t->parent == parent && t->text == text)
			break;
		i = (i + 1) & (sr->index_cap - 1);
	}
	return i;
}

static int grow_index(struct segment_rows *sr)
{
	size_t cap = sr->index_cap ? 2 * sr->index_cap : 1024;
	uint32_t *old = sr->index;
	size_t old_cap = sr->index_cap;

	sr->index = calloc(cap, sizeof(*sr->index));
	if (!sr->index) {
		sr->index = old;
		return -ENOMEM;
	}
	sr->index_cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			sr->index[slot_of(sr, sr->nodes[old[i]].parent, sr->nodes[old[i]].text)] = old[i];
	free(old);
	return 0;
}

/* parent's child reading text (types OR'd in); 0 when out of memory. */
static uint32_t child(struct segment_rows *sr, uint32_t parent, const char *text, uint8_t types)
{
	size_t i;
	uint32_t id;

	if (2 * (sr->nnodes + 1) > sr->index_cap && grow_index(sr))
		return 0;
	i = slot_of(sr, parent, text);
	if (sr->index[i]) {
		sr->nodes[sr->index[i]].types |= types;
		return sr->index[i];
	}
	if (sr->nnodes >= UINT32_MAX - 1 ||
	    grow_array((void **)&sr->nodes, &sr->nodes_cap, sr->nnodes + 1, sizeof(*sr->nodes)))
		return 0;
	id = (uint32_t)sr->nnodes++;
	sr->nodes[id] = (struct trie_node){ text, parent, 0, sr->nodes[parent].first_child,
					    NO_ROW, types };
	sr->nodes[parent].first_child = id;
	sr->index[i] = id;
	return id;
}

/* A label level's pooled text: sanitized as a frame's, or fallback when empty. */
static const char *label_text(struct segment_rows *sr, const char *text, const char *fallback)
{
	struct frame f = { *text ? text : fallback, FRAME_NATIVE };
	int len = folded_frame_text(sr->scratch, 0, sizeof(sr->scratch), &f);

	if (len < 0)
		len = (int)strlen(sr->scratch);
	return string_pool_intern(sr->texts, sr->scratch, (size_t)len);
}

/* A stack table node's pooled folded text, made once a segment. */
static const char *frame_text(struct segment_rows *sr, const struct stack_table *stacks,
			      uint32_t node)
{
	struct stack_node sn;
	int len;

	if (sr->frame_text[node])
		return sr->frame_text[node];
	sn = stack_table_node(stacks, node);
	len = folded_frame_text(sr->scratch, 0, sizeof(sr->scratch), &sn.frame);
	if (len < 0)   /* a name over 64 KiB: what fits */
		len = (int)strlen(sr->scratch);
	sr->frame_text[node] = string_pool_intern(sr->texts, sr->scratch, (size_t)len);
	return sr->frame_text[node];
}

/* The trie node row r ends at: its process, its thread (per_thread), then
 * its frames from the outermost in. 0 when out of memory. */
static uint32_t place(struct segment_rows *sr, const struct stack_table *stacks,
		      const struct segment_label_texts *lt, const struct agg_row *r, bool per_thread)
{
	const uint8_t label = 1u << STORE_TYPE_LABEL;
	uint32_t node = 0, depth = 0, n = stack_table_leaf(stacks, r->stack);
	const char *text;

	if (lt->process && *lt->process) {
		if (!(text = label_text(sr, lt->process, "")) || !(node = child(sr, node, text, label)))
			return 0;
	}
	if (per_thread && lt->thread) {
		text = label_text(sr, lt->thread, "[unnamed thread]");
		if (!text || !(node = child(sr, node, text, label)))
			return 0;
	}
	for (; n; n = stack_table_node(stacks, n).parent) {
		if (stack_table_node(stacks, n).kind != STACK_NODE_FRAME)
			continue;   /* the table's own root and thread levels */
		if (grow_array((void **)&sr->path, &sr->path_cap, depth + 1, sizeof(*sr->path)))
			return 0;
		sr->path[depth++] = n;
	}
	while (depth--) {
		uint32_t sn = sr->path[depth];
		uint8_t type = 1u << stack_table_node(stacks, sn).frame.type;

		if (!(text = frame_text(sr, stacks, sn)) || !(node = child(sr, node, text, type)))
			return 0;
	}
	if (!node && (!(text = string_pool_intern(sr->texts, "[no stack]", 10)) ||
		      !(node = child(sr, 0, text, label))))
		return 0;
	return node;
}

static int text_order(const void *a, const void *b, void *ctx)
{
	const struct trie_node *nodes = ctx;

	return strcmp(nodes[*(const uint32_t *)a].text, nodes[*(const uint32_t *)b].text);
}

/* Relinks every node's children in text order. */
static int sort_children(struct segment_rows *sr)
{
	uint32_t *kids = NULL;
	size_t cap = 0;

	for (size_t p = 0; p < sr->nnodes; p++) {
		size_t n = 0;

		for (uint32_t c = sr->nodes[p].first_child; c; c = sr->nodes[c].next_sibling) {
			if (grow_array((void **)&kids, &cap, n + 1, sizeof(*kids))) {
				free(kids);
				return -ENOMEM;
			}
			kids[n++] = c;
		}
		if (n < 2)
			continue;
		qsort_r(kids, n, sizeof(*kids), text_order, sr->nodes);
		sr->nodes[p].first_child = kids[0];
		for (size_t i = 0; i + 1 < n; i++)
			sr->nodes[kids[i]].next_sibling = kids[i + 1];
		sr->nodes[kids[n - 1]].next_sibling = 0;
	}
	free(kids);
	return 0;
}

static void write_node(const struct segment_rows *sr, uint32_t id, uint32_t depth,
		       struct byte_buf *out)
{
	const struct trie_node *t = &sr->nodes[id];
	uint64_t nrows = 0;

	for (uint32_t r = t->first_row; r != NO_ROW; r = sr->rows[r].next)
		nrows++;
	byte_buf_varint(out, depth);
	byte_buf_u8(out, t->types);
	byte_buf_str(out, t->text, strlen(t->text));
	byte_buf_varint(out, nrows);
	for (uint32_t r = t->first_row; r != NO_ROW; r = sr->rows[r].next) {
		byte_buf_varint(out, sr->rows[r].labels);
		byte_buf_u8(out, sr->rows[r].ks);
		byte_buf_varint(out, sr->rows[r].weight);
		byte_buf_varint(out, sr->rows[r].count);
	}
}

/* Depth first, siblings in order; depth is the path's length. */
static int write_tree(struct segment_rows *sr, struct byte_buf *out)
{
	uint32_t depth = 0, node = sr->nodes[0].first_child;

	while (node) {
		write_node(sr, node, ++depth, out);
		if (sr->nodes[node].first_child) {
			node = sr->nodes[node].first_child;
			continue;
		}
		/* Up to the first ancestor with a next sibling. */
		while (node && !sr->nodes[node].next_sibling) {
			node = sr->nodes[node].parent;
			depth--;
		}
		if (node) {
			node = sr->nodes[node].next_sibling;
			depth--;
		}
	}
	byte_buf_varint(out, 0);
	return out->failed ? -ENOMEM : 0;
}

static int reset(struct segment_rows *sr, const struct stack_table *stacks)
{
	size_t nodes = stack_table_node_count(stacks) + 1;

	string_pool_free(sr->texts);
	sr->texts = string_pool_new();
	if (!sr->texts || grow_array((void **)&sr->frame_text, &sr->frame_text_cap, nodes,
				     sizeof(*sr->frame_text)) ||
	    grow_array((void **)&sr->nodes, &sr->nodes_cap, 1, sizeof(*sr->nodes)))
		return -ENOMEM;
	memset(sr->frame_text, 0, nodes * sizeof(*sr->frame_text));
	if (sr->index)
		memset(sr->index, 0, sr->index_cap * sizeof(*sr->index));
	sr->nodes[0] = (struct trie_node){ "", 0, 0, 0, NO_ROW, 0 };
	sr->nnodes = 1;
	return 0;
}

int segment_rows_encode(struct segment_rows *sr, const struct stack_table *stacks,
			const struct segment_label_texts *labels, const struct segment_rec *recs,
			size_t n, bool per_thread, struct byte_buf *out)
{
	if (reset(sr, stacks) || aggregate(sr, recs, n))
		return -ENOMEM;
	for (size_t i = 0; i < sr->nrows; i++) {
		struct agg_row *r = &sr->rows[i];
		uint32_t node = place(sr, stacks, &labels[r->labels], r, per_thread);

		if (!node)
			return -ENOMEM;
		r->next = sr->nodes[node].first_row;
		sr->nodes[node].first_row = (uint32_t)i;
	}
	if (sort_children(sr))
		return -ENOMEM;
	return write_tree(sr, out);
}
