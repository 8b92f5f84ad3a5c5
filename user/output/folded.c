/* folded.c - see folded.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/atomic_file.h"
#include "base/grow_array.h"
#include "base/log.h"
#include "base/spill_file.h"
#include "base/string_pool.h"
#include "base/strmap.h"
#include "output/flame_tree.h"
#include "output/folded.h"

#define FOLDED_LINE_MAX (1 << 20)

/* A profile's counts take one of two forms, whichever is smaller for
 * how its ids spread.  Ids are handed out in order of first sight across
 * every output sharing the stack table, so the node's and each executor's
 * profiles see most ids: for them an array indexed by id (8 bytes an id)
 * beats a hash table (12 bytes a slot, at most half full).  A stage sees a
 * few ids far apart and keeps the table.  The array is taken when at
 * least a quarter of the ids up to the largest are counted, and left when
 * fewer than an eighth are: the gap keeps the two from flapping. */
struct count_slot {
	uint32_t key;                /* id + 1; 0: empty */
	uint64_t count;
} __attribute__((packed, aligned(4)));

struct folded_profile {
	struct stack_table *stacks;
	struct stack_table *own_stacks; /* when no table was shared */
	struct count_slot *slots;       /* the table: open addressing by id */
	size_t cap;
	uint64_t *by_id;                /* the array (NULL: the table is used) */
	size_t by_id_len;               /* ids it covers, zeroed */
	size_t used;                    /* ids counted */
	uint32_t max_key;               /* largest id + 1 counted */
	uint64_t total;
};

struct folded_profile *folded_profile_new(struct stack_table *stacks)
{
	struct folded_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (!stacks) {
		p->own_stacks = stacks = stack_table_new();
		if (!stacks) {
			free(p);
			errno = ENOMEM;
			return NULL;
		}
	}
	p->stacks = stacks;
	return p;
}

void folded_profile_free(struct folded_profile *p)
{
	if (!p)
		return;
	stack_table_free(p->own_stacks);
	free(p->slots);
	free(p->by_id);
	free(p);
}

static int append_text(char *buf, size_t len, size_t cap, const char *text, int sanitize)
{
	size_t n = strlen(text);

	/* The common case in one copy; near the end of the buffer, byte by
	 * byte below, so that what fits is kept. */
	if (len + n + 1 < cap) {
		char *c = buf + len, *end = c + n;

		memcpy(c, text, n);
		/* ';' separates frames and '\n' ends the line: either inside a
		 * name would corrupt the file. */
		for (; sanitize && c < end; c++)
			if (*c == ';' || *c == '\n' || *c == '\r')
				*c = '_';
		*end = '\0';
		return (int)(len + n);
	}
	for (const char *c = text; *c; c++) {
		if (len + 1 >= cap)
			return -ENOSPC;
		/* ';' separates frames and '\n' ends the line: either inside a
		 * name would corrupt the file. */
		buf[len++] = sanitize && (*c == ';' || *c == '\n' || *c == '\r') ? '_' : *c;
	}
	buf[len] = '\0';
	return (int)len;
}

int folded_frame_text(char *buf, size_t len, size_t cap, const struct frame *frame)
{
	int n = append_text(buf, len, cap, frame->name && *frame->name ? frame->name : "[unknown]", 1);

	if (n >= 0 && frame->type == FRAME_KERNEL)
		n = append_text(buf, (size_t)n, cap, "_[k]", 0);
	return n;
}

static void put_slot(struct count_slot *slots, size_t cap, uint32_t key, uint64_t count)
{
	size_t i;

	for (i = key * 2654435761u & (cap - 1); slots[i].key; i = (i + 1) & (cap - 1))
		;
	slots[i].key = key;
	slots[i].count = count;
}

/* The table, cap slots (a power of two), holding what the profile counts. */
static int make_table(struct folded_profile *p, size_t cap)
{
	struct count_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap; i++)
		if (p->slots[i].key)
			put_slot(slots, cap, p->slots[i].key, p->slots[i].count);
	for (size_t id = 0; id < p->by_id_len; id++)
		if (p->by_id[id])
			put_slot(slots, cap, (uint32_t)id + 1, p->by_id[id]);
	free(p->slots);
	free(p->by_id);
	p->slots = slots;
	p->cap = cap;
	p->by_id = NULL;
	p->by_id_len = 0;
	return 0;
}

/* The array, covering ids below len, holding what the profile counts. */
static int make_array(struct folded_profile *p, size_t len)
{
	uint64_t *by_id;

	if (p->by_id) {
		by_id = realloc(p->by_id, len * sizeof(*by_id));
		if (!by_id)
			return -ENOMEM;
		memset(by_id + p->by_id_len, 0, (len - p->by_id_len) * sizeof(*by_id));
	} else {
		by_id = calloc(len, sizeof(*by_id));
		if (!by_id)
			return -ENOMEM;
		for (size_t i = 0; i < p->cap; i++)
			if (p->slots[i].key)
				by_id[p->slots[i].key - 1] = p->slots[i].count;
		free(p->slots);
		p->slots = NULL;
		p->cap = 0;
	}
	p->by_id = by_id;
	p->by_id_len = len;
	return 0;
}

/* Room for one more id, key - 1, in whichever form now suits.  0 or
 * -ENOMEM (the profile unchanged). */
static int make_room(struct folded_profile *p, uint32_t key)
{
	size_t used = p->used + 1, span = key > p->max_key ? key : p->max_key;

	if (p->by_id) {
		if (key <= p->by_id_len)
			return 0;
		if (used * 8 < span)
			return make_table(p, used * 2 > 256 ? (size_t)1 << (64 - __builtin_clzll(used * 2 - 1))
							    : 256);
		return make_array(p, span + span / 2);
	}
	if (used * 2 <= p->cap)
		return 0;
	if (used * 4 >= span)
		return make_array(p, span > 256 ? span : 256);
	return make_table(p, p->cap ? p->cap * 2 : 256);
}

int folded_profile_add_id(struct folded_profile *p, uint32_t id, uint64_t count)
{
	uint32_t key = id + 1;
	size_t i;

	if (!count)
		return 0;
	if (p->by_id && id < p->by_id_len && p->by_id[id]) {
		p->by_id[id] += count;
		p->total += count;
		return 0;
	}
	if (p->cap) {
		for (i = key * 2654435761u & (p->cap - 1); p->slots[i].key; i = (i + 1) & (p->cap - 1)) {
			if (p->slots[i].key == key) {
				p->slots[i].count += count;
				p->total += count;
				return 0;
			}
		}
	}
	if (make_room(p, key))
		return -ENOMEM;
	if (p->by_id)
		p->by_id[id] = count;
	else
		put_slot(p->slots, p->cap, key, count);
	p->used++;
	if (key > p->max_key)
		p->max_key = key;
	p->total += count;
	return 0;
}

int folded_profile_add(struct folded_profile *p, const char *root, const char *thread,
		       const struct frame *frames, size_t n, uint64_t count)
{
	int64_t id = stack_table_intern(p->stacks, root, thread, frames, n);

	return id < 0 ? (int)id : folded_profile_add_id(p, (uint32_t)id, count);
}

uint64_t folded_profile_total(const struct folded_profile *p)
{
	return p->total;
}

int folded_profile_foreach_id(const struct folded_profile *p,
			      int (*fn)(uint32_t id, uint64_t count, void *ctx), void *ctx)
{
	for (size_t i = 0; i < p->cap; i++) {
		int r = p->slots[i].key ? fn(p->slots[i].key - 1, p->slots[i].count, ctx) : 0;

		if (r)
			return r;
	}
	for (size_t id = 0; id < p->by_id_len; id++) {
		int r = p->by_id[id] ? fn((uint32_t)id, p->by_id[id], ctx) : 0;

		if (r)
			return r;
	}
	return 0;
}

size_t folded_profile_memory(const struct folded_profile *p)
{
	return sizeof(*p) + p->cap * sizeof(*p->slots) + p->by_id_len * sizeof(*p->by_id);
}

/* ------------------------------------------------------------------------
 * The text tree (see folded.h).  Node 0 is the root above every stack; a
 * node's caller has a smaller id.  While it is built, three indexes keep
 * each text and node made once: names (by pointer) to texts, (caller,
 * text) to nodes, and the stack table's nodes to the tree's. */

struct text_node {
	uint32_t parent, text;
	uint32_t first_child, next_sibling; /* 0: none; children newest first */
	uint64_t self;
};

struct text_info {
	const char *s;
	uint32_t len;
	uint32_t types;         /* mask of the frame types written as this text */
};

/* Open addressing, at most half full. */
struct name_slot {
	const char *name;
	uint32_t tag;           /* frame type or level (TAG_*) */
	uint32_t text;          /* text id + 1; 0: empty */
};

struct name_index {
	struct name_slot *slots;
	size_t cap, used;
};

/* Where building put each stack table node it passed.  A profile that
 * counts most of the table's stacks (the node's, an executor's) uses an
 * array with a slot per node of the whole table, in fresh pages; one that
 * counts few (a stage's) a hash of the nodes it passes, so that it pays
 * neither for the table's pages (a fault each, with stacks spread over a
 * large table) nor for clearing them. */
struct placed_map {
	uint32_t *by_node;              /* NULL: the hash */
	size_t by_node_bytes;
	uint64_t *slots;                /* stack node << 32 | node + 1; 0: empty */
	size_t cap, used;
};

struct folded_tree {
	struct text_node *nodes;
	size_t nnodes, nodes_cap;
	struct text_info *texts;
	size_t ntexts, texts_cap;
	struct strmap *text_ids;        /* text -> id + 1 */
	struct string_pool *pool;       /* the texts */
	/* While building (children: until folded_tree_built): */
	uint32_t *children;             /* nodes by (parent, text); 0: empty */
	size_t children_cap;
	struct name_index names;        /* (name pointer, tag) -> text */
	struct placed_map placed;       /* stack table node -> node + 1; 0: not yet */
	uint32_t *path;                 /* stack table nodes not yet placed */
	size_t path_cap;
	char *scratch;                  /* one frame's text */
	struct stack_table *stacks;
};

#define NO_TEXT UINT32_MAX
/* Level tags of a name (beside the frame types) */
enum { TAG_ROOT = FRAME_TYPE_MAX, TAG_THREAD };

/* Both words reach the low bits an index uses. */
static uint64_t mix_key(uint64_t a, uint32_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 1) * 0xc2b2ae3d27d4eb4full;

	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	return h ^ h >> 32;
}

/* The slot of (name, tag): its text, or the empty slot to fill.  NULL when
 * out of memory. */
static struct name_slot *name_slot(struct name_index *m, const char *name, uint32_t tag)
{
	size_t i;

	if ((m->used + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 1024;
		struct name_slot *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return NULL;
		for (size_t k = 0; k < m->cap; k++) {
			const struct name_slot *s = &m->slots[k];

			if (!s->text)
				continue;
			for (i = mix_key((uintptr_t)s->name, s->tag) & (cap - 1); slots[i].text;
			     i = (i + 1) & (cap - 1))
				;
			slots[i] = *s;
		}
		free(m->slots);
		m->slots = slots;
		m->cap = cap;
	}
	for (i = mix_key((uintptr_t)name, tag) & (m->cap - 1);
	     m->slots[i].text && (m->slots[i].name != name || m->slots[i].tag != tag);
	     i = (i + 1) & (m->cap - 1))
		;
	return &m->slots[i];
}

static uint32_t intern_text(struct folded_tree *t, const char *s, size_t len)
{
	int inserted;
	void **slot;

	if (len > UINT32_MAX || t->ntexts >= NO_TEXT - 1 ||
	    grow_array((void **)&t->texts, &t->texts_cap, t->ntexts + 1, sizeof(*t->texts)))
		return NO_TEXT;
	slot = strmap_slot(t->text_ids, s, len, &inserted);
	if (!slot)
		return NO_TEXT;
	if (!*slot) {
		const char *copy = string_pool_intern(t->pool, s, len);

		if (!copy)
			return NO_TEXT; /* the key stays without an id: tried again */
		t->texts[t->ntexts] = (struct text_info){ copy, (uint32_t)len, 0 };
		*slot = (void *)(uintptr_t)++t->ntexts;
	}
	return (uint32_t)((uintptr_t)*slot - 1);
}

/* The text id of a stack table node, or NO_TEXT for a level the stack does
 * not have (a missing root or thread).  *err on running out of memory. */
static uint32_t level_text(struct folded_tree *t, const struct stack_node *sn, int *err)
{
	uint32_t tag = sn->kind == STACK_NODE_ROOT     ? TAG_ROOT
		       : sn->kind == STACK_NODE_THREAD ? TAG_THREAD
						       : (uint32_t)sn->frame.type;
	struct name_slot *slot;
	uint32_t text;
	int len;

	if (tag >= TAG_ROOT && (!sn->frame.name || (tag == TAG_ROOT && !*sn->frame.name)))
		return NO_TEXT;
	slot = name_slot(&t->names, sn->frame.name, tag);
	if (!slot)
		goto nomem;
	if (slot->text)
		return slot->text - 1;
	if (tag < TAG_ROOT)
		len = folded_frame_text(t->scratch, 0, FOLDED_LINE_MAX, &sn->frame);
	else
		len = append_text(t->scratch, 0, FOLDED_LINE_MAX,
				  *sn->frame.name ? sn->frame.name : "[unnamed thread]", 1);
	if (len < 0) /* a name over 1 MiB: what fits */
		len = (int)strlen(t->scratch);
	text = intern_text(t, t->scratch, (size_t)len);
	if (text == NO_TEXT)
		goto nomem;
	if (tag < TAG_ROOT)
		t->texts[text].types |= 1u << tag;
	*slot = (struct name_slot){ sn->frame.name, tag, text + 1 };
	t->names.used++;
	return text;
nomem:
	*err = -ENOMEM;
	return NO_TEXT;
}

static size_t child_slot(const struct folded_tree *t, uint32_t parent, uint32_t text)
{
	size_t i = mix_key(parent, text) & (t->children_cap - 1);

	while (t->children[i] &&
	       (t->nodes[t->children[i]].parent != parent || t->nodes[t->children[i]].text != text))
		i = (i + 1) & (t->children_cap - 1);
	return i;
}

/* A node under parent, not in the children index; 0 when out of memory. */
static uint32_t new_node(struct folded_tree *t, uint32_t parent, uint32_t text)
{
	uint32_t id;

	if (t->nnodes >= UINT32_MAX - 1 ||
	    grow_array((void **)&t->nodes, &t->nodes_cap, t->nnodes + 1, sizeof(*t->nodes)))
		return 0;
	id = (uint32_t)t->nnodes++;
	t->nodes[id] = (struct text_node){ parent, text, 0, t->nodes[parent].first_child, 0 };
	t->nodes[parent].first_child = id;
	return id;
}

/* The children index goes; tree_child makes it again from the nodes. */
static void drop_children(struct folded_tree *t)
{
	free(t->children);
	t->children = NULL;
	t->children_cap = 0;
}

/* parent's child with text, added if new; 0 (the root) when out of memory. */
static uint32_t tree_child(struct folded_tree *t, uint32_t parent, uint32_t text)
{
	size_t i;
	uint32_t id;

	if (t->nnodes * 2 > t->children_cap) {
		size_t cap = t->children_cap ? t->children_cap * 2 : 1024;
		uint32_t *old = t->children;

		while (cap < t->nnodes * 2 + 2) /* rebuilt for a tree built in steps */
			cap *= 2;

		if (!(t->children = calloc(cap, sizeof(*t->children)))) {
			t->children = old;
			return 0;
		}
		t->children_cap = cap;
		for (id = 1; id < t->nnodes; id++)
			t->children[child_slot(t, t->nodes[id].parent, t->nodes[id].text)] = id;
		free(old);
	}
	i = child_slot(t, parent, text);
	if (!t->children[i])
		t->children[i] = new_node(t, parent, text);
	return t->children[i];
}

static int placed_init(struct placed_map *m, const struct folded_profile *p)
{
	size_t bytes;
	void *map;

	if (!p->by_id) {
		m->cap = 1024;
		while (m->cap < p->used * 16) /* room for stacks a few frames apart */
			m->cap *= 2;
		return (m->slots = calloc(m->cap, sizeof(*m->slots))) ? 0 : -ENOMEM;
	}
	bytes = (stack_table_node_count(p->stacks) + 1) * sizeof(*m->by_node);
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return -ENOMEM;
	m->by_node = map;
	m->by_node_bytes = bytes;
	return 0;
}

static void placed_free(struct placed_map *m)
{
	if (m->by_node)
		munmap(m->by_node, m->by_node_bytes);
	free(m->slots);
	*m = (struct placed_map){ 0 };
}

/* The slot of stack node n in the hash: its own, or the empty one. */
static size_t placed_slot(const struct placed_map *m, uint32_t n)
{
	size_t i = mix_key(n, 0) & (m->cap - 1);

	while (m->slots[i] && m->slots[i] >> 32 != n)
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* Where n was put (node + 1), or 0. */
static uint32_t placed_get(const struct placed_map *m, uint32_t n)
{
	return m->by_node ? m->by_node[n] : (uint32_t)m->slots[placed_slot(m, n)];
}

/* 0 or -ENOMEM.  Each n is set once, when first placed. */
static int placed_set(struct placed_map *m, uint32_t n, uint32_t node_plus_one)
{
	if (m->by_node) {
		m->by_node[n] = node_plus_one;
		return 0;
	}
	if ((m->used + 1) * 2 > m->cap) {
		struct placed_map grown = { .cap = m->cap * 2 };

		if (!(grown.slots = calloc(grown.cap, sizeof(*grown.slots))))
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i])
				grown.slots[placed_slot(&grown, (uint32_t)(m->slots[i] >> 32))] =
					m->slots[i];
		grown.used = m->used;
		free(m->slots);
		*m = grown;
	}
	m->slots[placed_slot(m, n)] = (uint64_t)n << 32 | node_plus_one;
	m->used++;
	return 0;
}

/* Places one stack: up its path to the first node placed before, then down
 * again adding what is new. */
static int add_stack(struct folded_tree *t, uint32_t id, uint64_t count)
{
	uint32_t n = stack_table_leaf(t->stacks, id), node = 0;
	size_t depth = 0;
	int err = 0;

	while (n) {
		uint32_t at = placed_get(&t->placed, n);

		if (at) {
			node = at - 1;
			break;
		}
		if (grow_array((void **)&t->path, &t->path_cap, depth + 1, sizeof(*t->path)))
			return -ENOMEM;
		t->path[depth++] = n;
		n = stack_table_node(t->stacks, n).parent;
	}
	while (depth--) {
		struct stack_node sn = stack_table_node(t->stacks, t->path[depth]);
		uint32_t text = level_text(t, &sn, &err);

		if (err)
			return err;
		if (text != NO_TEXT && !(node = tree_child(t, node, text)))
			return -ENOMEM;
		if (placed_set(&t->placed, t->path[depth], node + 1))
			return -ENOMEM;
	}
	if (!node) { /* no root, thread or frame */
		uint32_t text = intern_text(t, "[no stack]", 10);

		if (text == NO_TEXT || !(node = tree_child(t, 0, text)))
			return -ENOMEM;
	}
	t->nodes[node].self += count;
	return 0;
}

static int by_key(const void *a, const void *b)
{
	uint32_t x = ((const struct count_slot *)a)->key, y = ((const struct count_slot *)b)->key;

	return x < y ? -1 : x > y;
}

/* In the order they were first seen, so that lines and siblings come in
 * that order: the array is in that order already. */
static int add_stacks(struct folded_tree *t, const struct folded_profile *p)
{
	struct count_slot *sorted;
	size_t n = 0;
	int err = 0;

	for (size_t id = 0; id < p->by_id_len && !err; id++)
		if (p->by_id[id])
			err = add_stack(t, (uint32_t)id, p->by_id[id]);
	if (!p->cap || err)
		return err;
	sorted = malloc((p->used ? p->used : 1) * sizeof(*sorted));
	if (!sorted)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap; i++)
		if (p->slots[i].key)
			sorted[n++] = p->slots[i];
	qsort(sorted, n, sizeof(*sorted), by_key);
	for (size_t i = 0; i < n && !err; i++)
		err = add_stack(t, sorted[i].key - 1, sorted[i].count);
	free(sorted);
	return err;
}

/* What only a step of building needs goes after it.  The children index
 * stays for the next step: made again at each, it cost a tree built from
 * ten steps most of its building time. */
static void end_step(struct folded_tree *t)
{
	free(t->names.slots);
	placed_free(&t->placed);
	free(t->path);
	free(t->scratch);
	t->names = (struct name_index){ 0 };
	t->path = NULL;
	t->scratch = NULL;
	t->stacks = NULL;
}

/* The indexes go, and the nodes are cut to size, as pages are built from
 * them with no room to spare. */
void folded_tree_built(struct folded_tree *t)
{
	struct text_node *exact;

	end_step(t);
	drop_children(t);
	if (t->nnodes && (exact = realloc(t->nodes, t->nnodes * sizeof(*t->nodes)))) {
		t->nodes = exact;
		t->nodes_cap = t->nnodes;
	}
}

void folded_tree_free(struct folded_tree *t)
{
	if (!t)
		return;
	end_step(t);
	free(t->children);
	free(t->nodes);
	free(t->texts);
	strmap_free(t->text_ids, NULL);
	string_pool_free(t->pool);
	free(t);
}

struct folded_tree *folded_tree_new(void)
{
	struct folded_tree *t = calloc(1, sizeof(*t));

	if (t && (t->text_ids = strmap_new()) && (t->pool = string_pool_new()) &&
	    !grow_array((void **)&t->nodes, &t->nodes_cap, 1, sizeof(*t->nodes))) {
		t->nodes[0] = (struct text_node){ 0 };
		t->nnodes = 1;
		return t;
	}
	folded_tree_free(t);
	errno = ENOMEM;
	return NULL;
}

int folded_tree_add_profile(struct folded_tree *t, const struct folded_profile *p)
{
	int err = -ENOMEM;

	if ((t->scratch = malloc(FOLDED_LINE_MAX)) && !placed_init(&t->placed, p)) {
		t->stacks = p->stacks;
		err = add_stacks(t, p);
	}
	end_step(t);
	return err;
}

struct folded_tree *folded_tree_build(const struct folded_profile *p)
{
	struct folded_tree *t = folded_tree_new();
	int err = t ? folded_tree_add_profile(t, p) : -ENOMEM;

	if (err) {
		folded_tree_free(t);
		errno = -err;
		return NULL;
	}
	folded_tree_built(t);
	return t;
}

/* ------------------------------------------------------------------------
 * Saved trees.  A saved tree is: the magic; its texts, each (types, length,
 * bytes), in strictly increasing byte order; an end mark (types
 * SAVED_TEXTS_END); then its nodes after the root, each (depth, text,
 * self), callers first (depth first) and each node's children in
 * increasing text order.  Two saved trees are then two sorted streams,
 * and they merge as they are read, holding a few words per text and per
 * level in memory, never either tree: a long recording merges its node's
 * large saved tree at its epochs (output/profile_outputs.c).
 *
 * It is read back only by the process that wrote it, so numbers are in
 * host order; it is still checked as it is read, since a file can come
 * back short. */
#define SAVED_MAGIC 0x32545053u /* "SPT2" */
#define SAVED_TEXTS_END UINT32_MAX
/* Bytes read or written at once through the spill file. */
#define SAVED_IO_BYTES (256u << 10)

struct saved_text {
	uint32_t types, len;
};

struct saved_node {
	uint32_t depth, text;   /* depth 1: a child of the root */
	uint64_t self;
};

/* Where saved bytes go: a growing buffer (spill NULL), or one blob of the
 * spill file, written a buffer at a time.  The first error stays in err. */
struct saved_writer {
	struct spill_file *spill;
	struct spill_ref ref;
	uint8_t *buf;
	size_t len, cap;
	int err;
};

static void writer_flush(struct saved_writer *w)
{
	if (!w->err && w->spill && w->len &&
	    !(w->err = spill_file_append(w->spill, w->buf, w->len, &w->ref)))
		w->len = 0;
}

static void writer_put(struct saved_writer *w, const void *data, size_t n)
{
	if (w->err)
		return;
	if (w->len + n > w->cap) {
		if (!w->spill) {
			w->err = grow_array((void **)&w->buf, &w->cap, w->len + n, 1);
		} else {
			writer_flush(w);
			if (!w->err && n > w->cap) { /* a text longer than the buffer */
				w->err = spill_file_append(w->spill, data, n, &w->ref);
				return;
			}
		}
		if (w->err)
			return;
	}
	memcpy(w->buf + w->len, data, n);
	w->len += n;
}

/* A writer of one new blob of spill, a buffer at a time.  0 or -ENOMEM. */
static int writer_open_spill(struct saved_writer *w, struct spill_file *spill)
{
	*w = (struct saved_writer){ .spill = spill, .buf = malloc(SAVED_IO_BYTES),
				    .cap = SAVED_IO_BYTES };
	return w->buf ? 0 : -ENOMEM;
}

/* Ends a spill writer: its blob in *ref, or, when err (or the writer's
 * own error) says it failed, given back.  The error, or 0. */
static int writer_close_spill(struct saved_writer *w, int err, struct spill_ref *ref)
{
	if (!err) {
		writer_flush(w);
		err = w->err;
	}
	free(w->buf);
	if (err)
		spill_file_discard(w->spill, &w->ref);
	else
		*ref = w->ref;
	return err;
}

static void writer_text(struct saved_writer *w, uint32_t types, const char *s, uint32_t len)
{
	struct saved_text st = { types, len };

	writer_put(w, &st, sizeof(st));
	writer_put(w, s, len);
}

static void writer_node(struct saved_writer *w, uint32_t depth, uint32_t text, uint64_t self)
{
	struct saved_node sn = { depth, text, self };

	writer_put(w, &sn, sizeof(sn));
}

/* Saved bytes, from memory (spill NULL: data holds them all) or from a
 * blob of the spill file, a buffer at a time. */
struct saved_reader {
	struct spill_file *spill;
	uint64_t at, end;               /* the blob's bytes not yet read */
	const uint8_t *data;
	size_t pos, len;
	uint8_t *buf;                   /* spill: data reads into it */
};

static uint64_t reader_left(const struct saved_reader *r)
{
	return r->len - r->pos + (r->end - r->at);
}

/* 0, -EINVAL past the end (a tree cut short), or the read's -errno. */
static int reader_get(struct saved_reader *r, void *out, size_t n)
{
	uint8_t *o = out;

	while (n) {
		size_t k;

		if (r->pos == r->len) {
			uint64_t want = r->end - r->at;
			long got;

			if (!r->spill || !want)
				return -EINVAL;
			got = spill_file_read(r->spill, r->at, r->buf,
					      want < SAVED_IO_BYTES ? (size_t)want : SAVED_IO_BYTES);
			if (got <= 0)
				return got < 0 ? (int)got : -EIO;
			r->at += (uint64_t)got;
			r->data = r->buf;
			r->pos = 0;
			r->len = (size_t)got;
		}
		k = n < r->len - r->pos ? n : r->len - r->pos;
		memcpy(o, r->data + r->pos, k);
		r->pos += k;
		o += k;
		n -= k;
	}
	return 0;
}

/* Opens a saved tree: its magic read and checked.  0 or -errno. */
static int reader_open(struct saved_reader *r, struct spill_file *spill, const void *data,
		       size_t len, const struct spill_ref *ref)
{
	uint32_t magic;
	int err;

	*r = (struct saved_reader){ .spill = spill, .data = data, .len = len };
	if (spill) {
		if (!(r->buf = malloc(SAVED_IO_BYTES)))
			return -ENOMEM;
		r->at = ref->offset;
		r->end = ref->offset + ref->bytes;
	}
	if ((err = reader_get(r, &magic, sizeof(magic))))
		return err;
	return magic == SAVED_MAGIC ? 0 : -EINVAL;
}

static int text_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	return c ? c : (alen > blen) - (alen < blen);
}

/* A saved tree's texts, one at a time, checked to increase. */
struct text_stream {
	struct saved_reader *r;
	char *text, *prev;              /* the text read and the one before */
	size_t text_cap, prev_cap;
	uint32_t len, prev_len, types;
	uint32_t count;                 /* texts read: this one's id is count - 1 */
	bool done;                      /* the end mark was read */
};

/* The next text, or done.  0 or -errno. */
static int next_text(struct text_stream *s)
{
	struct saved_text st;
	char *swap = s->prev;
	size_t swap_cap = s->prev_cap;
	int err;

	if ((err = reader_get(s->r, &st, sizeof(st))))
		return err;
	if (st.types == SAVED_TEXTS_END && !st.len) {
		s->done = true;
		return 0;
	}
	if (st.types >= 1u << FRAME_TYPE_MAX || st.len > FOLDED_LINE_MAX ||
	    st.len > reader_left(s->r) || s->count >= NO_TEXT - 1)
		return -EINVAL;
	s->prev = s->text;
	s->prev_cap = s->text_cap;
	s->prev_len = s->len;
	s->text = swap;
	s->text_cap = swap_cap;
	if (grow_array((void **)&s->text, &s->text_cap, st.len ? st.len : 1, 1))
		return -ENOMEM;
	if ((err = reader_get(s->r, s->text, st.len)))
		return err;
	if (s->count && text_cmp(s->prev, s->prev_len, s->text, st.len) >= 0)
		return -EINVAL;
	s->len = st.len;
	s->types = st.types;
	s->count++;
	return 0;
}

static void text_stream_free(struct text_stream *s)
{
	free(s->text);
	free(s->prev);
}

/* A saved tree's nodes, one at a time, checked: each one level at most
 * below the one before, its text known, and siblings in increasing text
 * order (last[] holds the newest text at each level). */
struct node_stream {
	struct saved_reader *r;
	uint32_t ntexts;
	uint32_t *last;
	size_t last_cap;
	struct saved_node node;         /* the node read, when has */
	bool has;
	int err;                        /* why there are no more nodes */
};

static void next_node(struct node_stream *s)
{
	uint32_t prev = s->has ? s->node.depth : 0;
	struct saved_node sn;

	s->has = false;
	if (s->err || !reader_left(s->r) || (s->err = reader_get(s->r, &sn, sizeof(sn))))
		return;
	if (!sn.depth || sn.depth > prev + 1 || sn.text >= s->ntexts ||
	    (sn.depth <= prev && sn.text <= s->last[sn.depth])) {
		s->err = -EINVAL;
		return;
	}
	if (grow_array((void **)&s->last, &s->last_cap, (size_t)sn.depth + 1, sizeof(*s->last))) {
		s->err = -ENOMEM;
		return;
	}
	s->last[sn.depth] = sn.text;
	s->node = sn;
	s->has = true;
}

static int by_text_order(const void *a, const void *b, void *ctx)
{
	const struct text_info *texts = ctx, *x = &texts[*(const uint32_t *)a],
				*y = &texts[*(const uint32_t *)b];

	return text_cmp(x->s, x->len, y->s, y->len);
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Writes t as a saved tree: texts sorted (rank: a text's place among
 * them), then nodes depth first, each node's children by rank. */
static int write_tree(const struct folded_tree *t, struct saved_writer *w)
{
	uint32_t magic = SAVED_MAGIC, *order = malloc((t->ntexts + 1) * sizeof(*order));
	uint32_t *rank = malloc((t->ntexts + 1) * sizeof(*rank));
	struct saved_node *todo = malloc(t->nnodes * sizeof(*todo)); /* (depth, node) */
	uint64_t *kids = NULL;  /* rank << 32 | node */
	size_t ntodo = 0, kids_cap = 0;

	if (!order || !rank || !todo) {
		w->err = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < t->ntexts; i++)
		order[i] = i;
	qsort_r(order, t->ntexts, sizeof(*order), by_text_order, t->texts);
	writer_put(w, &magic, sizeof(magic));
	for (uint32_t i = 0; i < t->ntexts; i++) {
		const struct text_info *ti = &t->texts[order[i]];

		rank[order[i]] = i;
		writer_text(w, ti->types, ti->s, ti->len);
	}
	writer_text(w, SAVED_TEXTS_END, "", 0);
	todo[ntodo++] = (struct saved_node){ 0, 0, 0 };
	while (ntodo && !w->err) {
		struct saved_node at = todo[--ntodo];
		const struct text_node *nd = &t->nodes[at.text];
		size_t nkids = 0;

		if (at.text)
			writer_node(w, at.depth, rank[nd->text], nd->self);
		for (uint32_t c = nd->first_child; c; c = t->nodes[c].next_sibling) {
			if (grow_array((void **)&kids, &kids_cap, nkids + 1, sizeof(*kids))) {
				w->err = -ENOMEM;
				goto out;
			}
			kids[nkids++] = (uint64_t)rank[t->nodes[c].text] << 32 | c;
		}
		if (nkids > 1)
			qsort(kids, nkids, sizeof(*kids), by_u64);
		/* the first child on top; every node is pushed once */
		while (nkids--)
			todo[ntodo++] = (struct saved_node){ at.depth + 1, (uint32_t)kids[nkids], 0 };
	}
out:
	free(order);
	free(rank);
	free(todo);
	free(kids);
	return w->err;
}

int folded_tree_save(const struct folded_tree *t, void **data, size_t *len)
{
	struct saved_writer w = { 0 };
	int err = write_tree(t, &w);

	*data = err ? NULL : w.buf;
	*len = err ? 0 : w.len;
	if (err)
		free(w.buf);
	return err;
}

int folded_tree_save_spill(const struct folded_tree *t, struct spill_file *spill,
			   struct spill_ref *ref)
{
	struct saved_writer w;
	int err = writer_open_spill(&w, spill);

	return err ? err : writer_close_spill(&w, write_tree(t, &w), ref);
}

/* parent's child with text, as tree_child, trying guess first.  A tree
 * built from saved trees numbers its nodes in the first one's order, and
 * a saved tree comes in that same order (depth first, siblings sorted):
 * where both hold the same stacks, the node after the one found last is
 * the next one found, read in passing instead of through the index. */
static uint32_t saved_child(struct folded_tree *t, uint32_t parent, uint32_t text,
			    uint32_t guess)
{
	if (guess < t->nnodes && t->nodes[guess].parent == parent && t->nodes[guess].text == text)
		return guess;
	return tree_child(t, parent, text);
}

/* Adds the saved tree r reads to t. */
static int add_saved(struct folded_tree *t, struct saved_reader *r)
{
	struct text_stream ts = { .r = r };
	struct node_stream ns = { .r = r };
	uint32_t *ids = NULL, *at_depth = NULL;  /* saved text -> t's; level -> node */
	uint32_t last = 0;                       /* the node found last */
	bool fresh = t->nnodes == 1;
	size_t ids_cap = 0, at_cap = 0;
	int err;

	while (!(err = next_text(&ts)) && !ts.done) {
		uint32_t id = intern_text(t, ts.text, ts.len);

		if (id == NO_TEXT ||
		    grow_array((void **)&ids, &ids_cap, ts.count, sizeof(*ids))) {
			err = -ENOMEM;
			break;
		}
		t->texts[id].types |= ts.types;
		ids[ts.count - 1] = id;
	}
	ns.ntexts = ts.count;
	/* Into a tree with no nodes, every saved node is new (a saved tree
	 * holds no two siblings with one text: the stream checks they
	 * increase), so they go in as they come; the index is made once, by
	 * the next step that needs it. */
	if (fresh)
		drop_children(t);
	for (next_node(&ns); !err && ns.has; next_node(&ns)) {
		uint32_t d = ns.node.depth, node;

		if (grow_array((void **)&at_depth, &at_cap, (size_t)d + 1, sizeof(*at_depth))) {
			err = -ENOMEM;
			break;
		}
		at_depth[0] = 0;
		node = fresh ? new_node(t, at_depth[d - 1], ids[ns.node.text])
			     : saved_child(t, at_depth[d - 1], ids[ns.node.text], last + 1);
		if (!node) {
			err = -ENOMEM;
			break;
		}
		at_depth[d] = last = node;
		t->nodes[node].self += ns.node.self;
	}
	if (!err)
		err = ns.err;
	text_stream_free(&ts);
	free(ns.last);
	free(ids);
	free(at_depth);
	end_step(t);
	return err;
}

int folded_tree_add_saved(struct folded_tree *t, const void *data, size_t len)
{
	struct saved_reader r;
	int err = reader_open(&r, NULL, data, len, NULL);

	if (!err)
		err = add_saved(t, &r);
	return err;
}

int folded_tree_add_spilled(struct folded_tree *t, struct spill_file *spill,
			    const struct spill_ref *ref)
{
	struct saved_reader r;
	int err = reader_open(&r, spill, NULL, 0, ref);

	err = err ? err : add_saved(t, &r);
	free(r.buf);
	return err;
}

/* One side of a merge: its reader, texts and nodes, and its texts' ids in
 * the merged tree. */
struct merge_side {
	struct saved_reader r;
	struct text_stream texts;
	struct node_stream nodes;
	uint32_t *ids;
	size_t ids_cap;
};

/* Writes the merged texts: both sides' in one increasing order, a text
 * both have once (its types joined).  0 or -errno. */
static int merge_texts(struct merge_side *a, struct merge_side *b, struct saved_writer *w)
{
	uint32_t n = 0;
	int err = next_text(&a->texts);

	if (!err)
		err = next_text(&b->texts);
	while (!err && (!a->texts.done || !b->texts.done)) {
		const struct text_stream *x = &a->texts, *y = &b->texts;
		int c = x->done ? 1 : y->done ? -1 : text_cmp(x->text, x->len, y->text, y->len);
		const struct text_stream *from = c <= 0 ? x : y;

		if (n >= NO_TEXT - 1)
			return -EOVERFLOW;
		writer_text(w, (c <= 0 ? x->types : 0) | (c >= 0 ? y->types : 0), from->text,
			    from->len);
		for (int side = 0; side < 2 && !err; side++) {
			struct merge_side *m = side ? b : a;

			if (side ? c < 0 : c > 0)
				continue;
			if (grow_array((void **)&m->ids, &m->ids_cap, m->texts.count,
				       sizeof(*m->ids)))
				return -ENOMEM;
			m->ids[m->texts.count - 1] = n;
			err = next_text(&m->texts);
		}
		n++;
	}
	writer_text(w, SAVED_TEXTS_END, "", 0);
	return err ? err : w->err;
}

/* Writes side's node and its subtree, and reads on. */
static void copy_subtree(struct merge_side *m, struct saved_writer *w)
{
	uint32_t top = m->nodes.node.depth;

	do {
		writer_node(w, m->nodes.node.depth, m->ids[m->nodes.node.text], m->nodes.node.self);
		next_node(&m->nodes);
	} while (m->nodes.has && m->nodes.node.depth > top && !w->err);
}

/* Both trees depth first at once.  At level d the nodes read on each side
 * are children of one node both have (d - 1 = 0: the root), or a level
 * above: a child one side has alone is copied with its subtree, one both
 * have is written once, its counts summed, and the merge goes down to its
 * children; when neither side has children left, it goes up. */
static void merge_nodes(struct merge_side *a, struct merge_side *b, struct saved_writer *w)
{
	struct node_stream *x = &a->nodes, *y = &b->nodes;
	uint32_t d = 1;

	next_node(x);
	next_node(y);
	while (!w->err) {
		bool hx = x->has && x->node.depth == d, hy = y->has && y->node.depth == d;
		uint32_t tx = hx ? a->ids[x->node.text] : 0, ty = hy ? b->ids[y->node.text] : 0;

		if (hx && hy && tx == ty) {
			writer_node(w, d, tx, x->node.self + y->node.self);
			next_node(x);
			next_node(y);
			d++;
		} else if (hx && (!hy || tx < ty)) {
			copy_subtree(a, w);
		} else if (hy) {
			copy_subtree(b, w);
		} else if (d > 1) {
			d--;
		} else {
			break;
		}
	}
}

static int merge_side_open(struct merge_side *m, struct spill_file *spill,
			   const struct spill_ref *ref)
{
	int err = reader_open(&m->r, spill, NULL, 0, ref);

	m->texts.r = m->nodes.r = &m->r;
	return err;
}

static void merge_side_close(struct merge_side *m)
{
	free(m->r.buf);
	text_stream_free(&m->texts);
	free(m->nodes.last);
	free(m->ids);
}

int folded_saved_merge(struct spill_file *spill, const struct spill_ref *a,
		       const struct spill_ref *b, struct spill_ref *out)
{
	struct merge_side x = { 0 }, y = { 0 };
	struct saved_writer w;
	uint32_t magic = SAVED_MAGIC;
	int err = writer_open_spill(&w, spill);

	if (err)
		return err;
	if (!(err = merge_side_open(&x, spill, a)) && !(err = merge_side_open(&y, spill, b))) {
		writer_put(&w, &magic, sizeof(magic));
		if (!(err = merge_texts(&x, &y, &w))) {
			x.nodes.ntexts = x.texts.count;
			y.nodes.ntexts = y.texts.count;
			merge_nodes(&x, &y, &w);
			err = x.nodes.err ? x.nodes.err : y.nodes.err;
		}
	}
	merge_side_close(&x);
	merge_side_close(&y);
	return writer_close_spill(&w, err, out);
}

size_t folded_tree_node_count(const struct folded_tree *t)
{
	return t->nnodes;
}

static int likeliest_type(uint32_t types)
{
	static const enum frame_type preference[] = { FRAME_JIT, FRAME_INLINED, FRAME_INTERPRETED,
						      FRAME_KERNEL, FRAME_CPP, FRAME_NATIVE };

	for (size_t i = 0; i < sizeof(preference) / sizeof(preference[0]); i++)
		if (types & 1u << preference[i])
			return (int)preference[i];
	return -1;
}

/* self / unit, rounded to nearest (half up), without overflow. */
static uint64_t in_units(uint64_t self, uint64_t unit)
{
	return self / unit + (self % unit >= unit - unit / 2);
}

int folded_tree_foreach(const struct folded_tree *t, uint64_t unit,
			int (*fn)(uint32_t node, uint32_t parent, const char *text, size_t len,
				  int type, uint64_t self, void *ctx),
			void *ctx)
{
	uint8_t *live = calloc(t->nnodes, 1);
	uint32_t *todo = malloc(t->nnodes * sizeof(*todo));
	size_t ntodo = 0;
	int ret = 0;

	if (!live || !todo) {
		free(live);
		free(todo);
		return -ENOMEM;
	}
	if (!unit)
		unit = 1;
	/* Subtrees whose counts all round to zero are left out. */
	for (size_t i = t->nnodes; i-- > 1;) {
		if (in_units(t->nodes[i].self, unit))
			live[i] = 1;
		if (live[i])
			live[t->nodes[i].parent] = 1;
	}
	/* Depth first, callers before callees and the first seen first:
	 * children are listed newest first and taken from the top. */
	for (uint32_t c = t->nodes[0].first_child; c; c = t->nodes[c].next_sibling)
		todo[ntodo++] = c;
	while (ntodo && !ret) {
		uint32_t id = todo[--ntodo];
		const struct text_node *nd = &t->nodes[id];
		const struct text_info *ti = &t->texts[nd->text];

		if (!live[id])
			continue;
		ret = fn(id, nd->parent, ti->s, ti->len, likeliest_type(ti->types),
			 in_units(nd->self, unit), ctx);
		for (uint32_t c = nd->first_child; c; c = t->nodes[c].next_sibling)
			todo[ntodo++] = c;
	}
	free(live);
	free(todo);
	return ret;
}

struct line_writer {
	FILE *file;
	char *line;
	uint32_t *end;          /* per node (a saved tree's: per level): the line's length up to it */
	size_t end_cap;
};

/* Lines share their callers' text: each node's text is copied once, after
 * its caller's line (at bytes; caller false under the root), its length
 * kept in end[slot], and a line is written where a count ends. */
static int put_line(struct line_writer *w, bool caller, size_t at, uint32_t slot,
		    const char *text, size_t len, uint64_t self)
{
	if (caller && at < FOLDED_LINE_MAX)
		w->line[at++] = ';';
	if (len > FOLDED_LINE_MAX - at) /* absurdly deep: keep the sample, cut the line */
		len = FOLDED_LINE_MAX - at;
	memcpy(w->line + at, text, len);
	w->end[slot] = (uint32_t)(at + len);
	if (!self)
		return 0;
	if (fwrite(w->line, 1, at + len, w->file) != at + len ||
	    fprintf(w->file, " %llu\n", (unsigned long long)self) < 0)
		return -EIO;
	return 0;
}

static int write_line(uint32_t node, uint32_t parent, const char *text, size_t len, int type,
		      uint64_t self, void *ctx)
{
	struct line_writer *w = ctx;

	(void)type;
	return put_line(w, parent != 0, parent ? w->end[parent] : 0, node, text, len, self);
}

int folded_tree_write(const struct folded_tree *t, const char *path, uint64_t unit)
{
	struct line_writer w = { .line = malloc(FOLDED_LINE_MAX),
				 .end = calloc(t->nnodes, sizeof(*w.end)) };
	struct atomic_file af;
	int err;

	if (!w.line || !w.end) {
		sp_err("write %s: %s", path, strerror(ENOMEM));
		err = -ENOMEM;
	} else if (!(w.file = atomic_file_open(&af, path))) {
		err = -errno;
	} else {
		err = atomic_file_commit(&af, folded_tree_foreach(t, unit, write_line, &w));
	}
	free(w.line);
	free(w.end);
	return err;
}

int folded_profile_write(const struct folded_profile *p, const char *path)
{
	return folded_profile_write_scaled(p, path, 1);
}

int folded_profile_write_scaled(const struct folded_profile *p, const char *path, uint64_t unit)
{
	struct folded_tree *t = folded_tree_build(p);
	int err;

	if (!t) {
		sp_err("write %s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	err = folded_tree_write(t, path, unit);
	folded_tree_free(t);
	return err;
}

/* ------------------------------------------------------------------------
 * Saved trees read as streams, for what a stop writes from them: the
 * texts are held (by id), the nodes never. */

struct text_table {
	struct text_info *texts;
	size_t n, cap;
	struct string_pool *pool;
};

static void text_table_free(struct text_table *tt)
{
	free(tt->texts);
	string_pool_free(tt->pool);
}

/* Opens the saved tree at ref and reads its texts: into tt when it is not
 * NULL, else past them.  ns is then at the first node's place.  0 or
 * -errno; the caller frees r.buf, ns->last and tt. */
static int open_nodes(struct spill_file *spill, const struct spill_ref *ref,
		      struct saved_reader *r, struct node_stream *ns, struct text_table *tt)
{
	struct text_stream ts = { .r = r };
	int err;

	*ns = (struct node_stream){ .r = r };
	if ((err = reader_open(r, spill, NULL, 0, ref)))
		return err;
	if (tt && !(tt->pool = string_pool_new()))
		return -ENOMEM;
	while (!(err = next_text(&ts)) && !ts.done) {
		const char *s = tt ? string_pool_intern(tt->pool, ts.text, ts.len) : NULL;

		if (!tt)
			continue;
		if (!s || grow_array((void **)&tt->texts, &tt->cap, tt->n + 1, sizeof(*tt->texts))) {
			err = -ENOMEM;
			break;
		}
		tt->texts[tt->n++] = (struct text_info){ s, ts.len, ts.types };
	}
	ns->ntexts = ts.count;
	text_stream_free(&ts);
	return err;
}

/* The first node, unless failed: a stream that did not open is not read. */
static void next_node_if(struct node_stream *ns, int failed)
{
	if (!failed)
		next_node(ns);
}

static void close_nodes(struct saved_reader *r, struct node_stream *ns, struct text_table *tt)
{
	free(r->buf);
	free(ns->last);
	if (tt)
		text_table_free(tt);
}

int folded_saved_total(struct spill_file *spill, const struct spill_ref *ref, uint64_t unit,
		       uint64_t *total)
{
	struct saved_reader r;
	struct node_stream ns;
	int err = open_nodes(spill, ref, &r, &ns, NULL);

	*total = 0;
	if (!unit)
		unit = 1;
	for (next_node_if(&ns, err); !err && ns.has; next_node(&ns))
		*total += in_units(ns.node.self, unit);
	if (!err)
		err = ns.err;
	close_nodes(&r, &ns, NULL);
	return err;
}

/* A subtree while the nodes stream: its node's number in the stream and
 * its count (so far, while it is open). */
struct subtree {
	uint64_t node, total;
};

static int by_number(const void *a, const void *b)
{
	uint64_t x = ((const struct subtree *)a)->node, y = ((const struct subtree *)b)->node;

	return (x > y) - (x < y);
}

/* The nodes kept while the nodes stream, and how many count at all. */
struct kept_nodes {
	struct subtree *node;
	size_t n, cap;
	uint64_t counted;
};

/* Closes the open subtrees at level d and below (open[1..*depth]): those
 * that count min_total or more are kept, each count goes to its caller's. */
static int close_subtrees(struct subtree *open, uint32_t *depth, uint32_t d, uint64_t min_total,
			  struct kept_nodes *kept)
{
	for (; *depth >= d && *depth; --*depth) {
		const struct subtree *o = &open[*depth];

		kept->counted += o->total > 0;
		if (o->total >= min_total) {
			if (grow_array((void **)&kept->node, &kept->cap, kept->n + 1,
				       sizeof(*kept->node)))
				return -ENOMEM;
			kept->node[kept->n++] = *o;
		}
		open[*depth - 1].total += o->total;
	}
	return 0;
}

/* The nodes whose subtree counts at least min_total, with those counts,
 * by their number in stream order: a first read of the nodes. */
static int find_kept(struct spill_file *spill, const struct spill_ref *ref, uint64_t unit,
		     uint64_t min_total, struct kept_nodes *kept)
{
	struct saved_reader r;
	struct node_stream ns;
	struct subtree *open = NULL;
	size_t open_cap = 0;
	uint32_t depth = 0;
	uint64_t number = 0;
	int err = open_nodes(spill, ref, &r, &ns, NULL);

	*kept = (struct kept_nodes){ 0 };
	for (next_node_if(&ns, err); !err && ns.has; next_node(&ns), number++) {
		uint32_t d = ns.node.depth;

		if ((err = close_subtrees(open, &depth, d, min_total, kept)) ||
		    (err = grow_array((void **)&open, &open_cap, (size_t)d + 1, sizeof(*open))))
			break;
		if (d == 1)
			open[0] = (struct subtree){ 0, 0 };
		open[d] = (struct subtree){ number, in_units(ns.node.self, unit) };
		depth = d;
	}
	if (!err)
		err = ns.err;
	if (!err && depth)
		err = close_subtrees(open, &depth, 1, min_total, kept);
	close_nodes(&r, &ns, NULL);
	free(open);
	if (!err)
		qsort(kept->node, kept->n, sizeof(*kept->node), by_number);
	return err;
}

int folded_saved_foreach(struct spill_file *spill, const struct spill_ref *ref, uint64_t unit,
			 uint64_t min_total,
			 int (*fn)(uint32_t depth, const char *text, size_t len, int type,
				   uint64_t self, uint64_t total, void *ctx),
			 void *ctx, uint64_t *counted)
{
	struct saved_reader r = { 0 };
	struct node_stream ns = { 0 };
	struct text_table tt = { 0 };
	struct kept_nodes kept;
	uint64_t number = 0;
	size_t k = 0;
	int err;

	if (!unit)
		unit = 1;
	if (!min_total)
		min_total = 1;
	err = find_kept(spill, ref, unit, min_total, &kept);
	if (!err)
		err = open_nodes(spill, ref, &r, &ns, &tt);
	for (next_node_if(&ns, err); !err && ns.has && k < kept.n; next_node(&ns), number++) {
		const struct text_info *ti = &tt.texts[ns.node.text];

		if (kept.node[k].node != number)
			continue;
		err = fn(ns.node.depth, ti->s, ti->len, likeliest_type(ti->types),
			 in_units(ns.node.self, unit), kept.node[k++].total, ctx);
	}
	if (!err && k < kept.n)
		err = ns.err ? ns.err : -EINVAL;   /* the tree changed between the reads */
	if (counted)
		*counted = kept.counted;
	close_nodes(&r, &ns, &tt);
	free(kept.node);
	return err;
}

int folded_saved_write(struct spill_file *spill, const struct spill_ref *ref, const char *path,
		       uint64_t unit)
{
	struct line_writer w = { .line = malloc(FOLDED_LINE_MAX) };
	struct saved_reader r = { 0 };
	struct node_stream ns = { 0 };
	struct text_table tt = { 0 };
	struct atomic_file af;
	int read_err = w.line ? open_nodes(spill, ref, &r, &ns, &tt) : -ENOMEM, err = 0;

	if (!unit)
		unit = 1;
	if (!read_err && !(w.file = atomic_file_open(&af, path)))
		err = -errno;
	for (next_node_if(&ns, read_err || !w.file); w.file && !err && !read_err && ns.has;
	     next_node(&ns)) {
		uint32_t d = ns.node.depth;
		const struct text_info *ti = &tt.texts[ns.node.text];

		if (grow_array((void **)&w.end, &w.end_cap, (size_t)d + 1, sizeof(*w.end)))
			read_err = -ENOMEM;
		else
			err = put_line(&w, d > 1, d > 1 ? w.end[d - 1] : 0, d, ti->s, ti->len,
				       in_units(ns.node.self, unit));
	}
	if (!read_err && !err)
		read_err = ns.err;
	if (read_err == -ENOMEM)
		sp_err("write %s: %s", path, strerror(ENOMEM));
	if (w.file && read_err)
		atomic_file_abandon(&af);
	else if (w.file)
		err = atomic_file_commit(&af, err);
	close_nodes(&r, &ns, &tt);
	free(w.line);
	free(w.end);
	return read_err ? read_err : err;
}

/* ------------------------------------------------------------------------
 * Flame graph trees (what pages are written from), typed as the recording
 * saw its frames. */

struct whole_flame {
	struct flame_tree *flame;
	uint32_t *at;           /* text tree node -> flame node */
};

static int add_whole(uint32_t node, uint32_t parent, const char *text, size_t len, int type,
		     uint64_t self, void *ctx)
{
	struct whole_flame *wf = ctx;
	int err = flame_tree_child(wf->flame, wf->at[parent], text, len, type, &wf->at[node]);

	return err || !self ? err : flame_tree_add_self(wf->flame, wf->at[node], self, 0);
}

struct flame_tree *folded_tree_flame(const struct folded_tree *t, uint64_t unit, int *err)
{
	struct whole_flame wf = { flame_tree_new(), calloc(t->nnodes, sizeof(*wf.at)) };

	*err = wf.flame && wf.at ? folded_tree_foreach(t, unit, add_whole, &wf) : -ENOMEM;
	free(wf.at);
	if (*err) {
		flame_tree_free(wf.flame);
		return NULL;
	}
	return wf.flame;
}

/* A saved tree's nodes as they stream: at[d] is the flame node at level d
 * of the path being read. */
struct streamed_flame {
	struct flame_tree *flame;
	uint32_t *at;
	size_t cap;
};

static int add_streamed(uint32_t depth, const char *text, size_t len, int type, uint64_t self,
			uint64_t total, void *ctx)
{
	struct streamed_flame *sf = ctx;
	int err;

	if (grow_array((void **)&sf->at, &sf->cap, (size_t)depth + 1, sizeof(*sf->at)))
		return -ENOMEM;
	sf->at[0] = 0;
	err = flame_tree_child(sf->flame, sf->at[depth - 1], text, len, type, &sf->at[depth]);
	return err ? err : flame_tree_add_counts(sf->flame, sf->at[depth], self, total, 0);
}

struct flame_tree *folded_saved_flame(struct spill_file *spill, const struct spill_ref *ref,
				      uint64_t unit, double min_width_pct, int *err)
{
	struct streamed_flame sf = { .flame = flame_tree_new() };
	uint64_t total = 0, counted = 0;
	size_t kept;

	*err = sf.flame ? folded_saved_total(spill, ref, unit, &total) : -ENOMEM;
	if (!*err)
		*err = flame_tree_add_counts(sf.flame, 0, 0, total, 0);
	if (!*err)
		*err = folded_saved_foreach(spill, ref, unit,
					    flame_tree_min_width(total, min_width_pct),
					    add_streamed, &sf, &counted);
	/* the page says how many nodes it left out */
	if (!*err && (flame_tree_nodes(sf.flame, &kept), kept - 1 < counted))
		flame_tree_add_left_out(sf.flame, counted - (kept - 1));
	free(sf.at);
	if (*err) {
		flame_tree_free(sf.flame);
		return NULL;
	}
	return sf.flame;
}
