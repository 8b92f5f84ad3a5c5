/* stack_table.c - see stack_table.h.  Stacks are paths in one tree: root
 * label, then thread, then frames from the outermost in, so stacks that
 * share their callers (a deep recursion differs only near its leaf) share
 * their nodes.  A stack is found by its hash and checked at its ends (see
 * same_stack); a new one adds only the nodes its callers' path lacks.  Two
 * open-addressing indexes, at most half full: stacks by hash, and a node's
 * children by (parent, name, type). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/grow_array.h"
#include "base/stack_table.h"
#include "base/string_pool.h"

/* Node types above every frame type: the levels above the frames. */
enum { NODE_ROOT = FRAME_TYPE_MAX + 1, NODE_THREAD };

/* 12 bytes, not 16: the nodes are most of a long recording's memory. */
#define NODE_PARENT_BITS 28
#define NODE_PARENT_MASK ((1u << NODE_PARENT_BITS) - 1)

struct node {
	const char *name;   /* frame name, or a pooled root/thread (NULL: none) */
	uint32_t parent_type; /* parent's node id + 1 (0 for a root label), type above */
} __attribute__((packed, aligned(4)));

struct stack_entry {
	uint64_t hash;
	uint32_t node;      /* its innermost node */
	uint32_t n;         /* frames */
	uint32_t thread_node;
} __attribute__((packed, aligned(4)));

_Static_assert(NODE_THREAD < 1u << (32 - NODE_PARENT_BITS), "a node's type fits above its parent");

static inline uint32_t node_parent(const struct node *nd)
{
	return nd->parent_type & NODE_PARENT_MASK;
}

static inline unsigned node_type(const struct node *nd)
{
	return nd->parent_type >> NODE_PARENT_BITS;
}

struct stack_table {
	struct stack_entry *entries;
	size_t count, entries_cap;
	uint32_t *index;             /* stack id + 1, 0: empty; a power of two */
	size_t index_cap;
	struct node *nodes;
	size_t nnodes, nodes_cap;
	uint32_t *children;          /* node id + 1, 0: empty; a power of two */
	size_t children_cap;
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
	free(t->index);
	free(t->nodes);
	free(t->children);
	string_pool_free(t->names);
	free(t);
}

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* Eight bytes a step: a task thread's name is 60 characters. */
static uint64_t mix_text(uint64_t h, const char *s)
{
	uint64_t word = 0;
	size_t len;

	if (!s)
		return mix(h, 1);
	len = strlen(s);
	h = mix(h, len + 2);
	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&word, s, 8);
		h = mix(h, word);
	}
	word = 0;
	memcpy(&word, s, len);
	return mix(h, word);
}

static inline uint64_t frame_key(const struct frame *f)
{
	return (uint64_t)(uintptr_t)f->name << 3 ^ (uint64_t)f->type;
}

static uint64_t stack_hash(const char *root, const char *thread, const struct frame *frames,
			   size_t n)
{
	/* Four lanes, each a frame in four: one lane's multiply waits for its
	 * previous one, so a single chain cost a multiply's latency a frame. */
	uint64_t lane[4] = { mix_text(mix_text(FNV1A_INIT, root), thread), 1, 2, 3 };
	size_t i = 0;

	for (; i + 4 <= n; i += 4)
		for (int k = 0; k < 4; k++)
			lane[k] = mix(lane[k], frame_key(&frames[i + k]));
	for (; i < n; i++)
		lane[i % 4] = mix(lane[i % 4], frame_key(&frames[i]));
	return mix(mix(mix(mix(lane[0], lane[1]), lane[2]), lane[3]), n);
}

static int same_text(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Whether stack e is root -> thread -> frames[n-1] ... frames[0]: the same
 * 64-bit hash (of every frame, the root and the thread), depth, leaf,
 * thread and root.  The frames between are not read back: that was a
 * dependent load per frame, the largest cost of a sample on deep stacks.
 * Their names are our own pointers, so no process can choose a collision;
 * the texts a process does choose (its thread names) are compared. */
static int same_stack(const struct stack_table *t, const struct stack_entry *e, uint64_t hash,
		      const char *root, const char *thread, const struct frame *frames, size_t n)
{
	const struct node *leaf = &t->nodes[e->node], *th = &t->nodes[e->thread_node];

	return e->hash == hash && e->n == n &&
	       (!n || (leaf->name == frames[0].name && node_type(leaf) == frames[0].type)) &&
	       same_text(th->name, thread) && same_text(t->nodes[node_parent(th) - 1].name, root);
}

/* Doubles an index of ids + 1 whose slots key_of places. */
static int grow_ids(uint32_t **index, size_t *cap, size_t count,
		    uint64_t (*key_of)(const struct stack_table *, uint32_t),
		    const struct stack_table *t)
{
	size_t ncap = *cap ? *cap * 2 : 1024;
	uint32_t *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t id = 0; id < count; id++) {
		size_t i = key_of(t, (uint32_t)id) & (ncap - 1);

		while (n[i])
			i = (i + 1) & (ncap - 1);
		n[i] = (uint32_t)id + 1;
	}
	free(*index);
	*index = n;
	*cap = ncap;
	return 0;
}

static uint64_t stack_key(const struct stack_table *t, uint32_t id)
{
	return t->entries[id].hash;
}

static uint64_t child_hash(uint32_t parent, const char *name, unsigned type)
{
	return mix(mix(parent, (uint64_t)(uintptr_t)name), type);
}

static uint64_t node_key(const struct stack_table *t, uint32_t id)
{
	const struct node *nd = &t->nodes[id];

	return child_hash(node_parent(nd), nd->name, node_type(nd));
}

/* The id + 1 of parent's child (name, type), added if new; 0 when out of
 * memory or ids. */
static uint32_t child(struct stack_table *t, uint32_t parent, const char *name, unsigned type)
{
	uint64_t h = child_hash(parent, name, type);
	uint32_t parent_type = parent | (uint32_t)type << NODE_PARENT_BITS;
	size_t i;

	if (t->children_cap) {
		for (i = h & (t->children_cap - 1); t->children[i];
		     i = (i + 1) & (t->children_cap - 1)) {
			const struct node *nd = &t->nodes[t->children[i] - 1];

			if (nd->parent_type == parent_type && nd->name == name)
				return t->children[i];
		}
	}
	if (t->nnodes >= NODE_PARENT_MASK - 1)
		return 0;
	if ((t->nnodes + 1) * 2 > t->children_cap &&
	    grow_ids(&t->children, &t->children_cap, t->nnodes, node_key, t))
		return 0;
	if (grow_array((void **)&t->nodes, &t->nodes_cap, t->nnodes + 1, sizeof(*t->nodes)))
		return 0;
	t->nodes[t->nnodes] = (struct node){ name, parent_type };
	for (i = h & (t->children_cap - 1); t->children[i]; i = (i + 1) & (t->children_cap - 1))
		;
	t->children[i] = (uint32_t)++t->nnodes;
	return t->children[i];
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
	uint32_t node, thread_node = 0;
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
	if ((t->count + 1) * 2 > t->index_cap &&
	    grow_ids(&t->index, &t->index_cap, t->count, stack_key, t))
		return -ENOMEM;
	if (grow_array((void **)&t->entries, &t->entries_cap, t->count + 1, sizeof(*t->entries)))
		return -ENOMEM;
	root = pooled(t, root, &failed);
	thread = pooled(t, thread, &failed);
	if (failed)
		return -ENOMEM;
	/* Pooled texts are compared by pointer from here on. */
	node = child(t, 0, root, NODE_ROOT);
	if (node)
		node = thread_node = child(t, node, thread, NODE_THREAD);
	for (size_t k = n; k-- > 0 && node;)
		node = child(t, node, frames[k].name, frames[k].type);
	if (!node)
		return -ENOMEM;
	e = &t->entries[t->count];
	*e = (struct stack_entry){ hash, node - 1, (uint32_t)n, thread_node - 1 };
	for (i = hash & (t->index_cap - 1); t->index[i]; i = (i + 1) & (t->index_cap - 1))
		;
	t->index[i] = (uint32_t)t->count + 1;
	return (int64_t)t->count++;
}

size_t stack_table_count(const struct stack_table *t)
{
	return t->count;
}

uint32_t stack_table_leaf(const struct stack_table *t, uint32_t id)
{
	return t->entries[id].node + 1;
}

size_t stack_table_node_count(const struct stack_table *t)
{
	return t->nnodes;
}

struct stack_node stack_table_node(const struct stack_table *t, uint32_t node)
{
	const struct node *nd = &t->nodes[node - 1];
	unsigned type = node_type(nd);

	if (type == NODE_ROOT || type == NODE_THREAD)
		return (struct stack_node){ type == NODE_ROOT ? STACK_NODE_ROOT : STACK_NODE_THREAD,
					    { nd->name, FRAME_NATIVE }, node_parent(nd) };
	return (struct stack_node){ STACK_NODE_FRAME, { nd->name, (enum frame_type)type },
				    node_parent(nd) };
}

size_t stack_table_memory(const struct stack_table *t)
{
	return sizeof(*t) + t->entries_cap * sizeof(*t->entries) +
	       t->index_cap * sizeof(*t->index) + t->nodes_cap * sizeof(*t->nodes) +
	       t->children_cap * sizeof(*t->children);
}
