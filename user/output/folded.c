/* folded.c - see folded.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/atomic_file.h"
#include "base/grow_array.h"
#include "base/log.h"
#include "base/string_pool.h"
#include "base/strmap.h"
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

struct folded_tree {
	struct text_node *nodes;
	size_t nnodes, nodes_cap;
	struct text_info *texts;
	size_t ntexts, texts_cap;
	struct strmap *text_ids;        /* text -> id + 1 */
	struct string_pool *pool;       /* the texts */
	/* While building: */
	uint32_t *children;             /* nodes by (parent, text); 0: empty */
	size_t children_cap;
	struct name_index names;        /* (name pointer, tag) -> text */
	uint32_t *placed;               /* stack table node -> node + 1; 0: not yet */
	size_t placed_bytes;
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
	if (t->children[i])
		return t->children[i];
	if (t->nnodes >= UINT32_MAX - 1 ||
	    grow_array((void **)&t->nodes, &t->nodes_cap, t->nnodes + 1, sizeof(*t->nodes)))
		return 0;
	id = (uint32_t)t->nnodes++;
	t->nodes[id] = (struct text_node){ parent, text, 0, t->nodes[parent].first_child, 0 };
	t->nodes[parent].first_child = id;
	t->children[i] = id;
	return id;
}

/* Places one stack: up its path to the first node placed before, then down
 * again adding what is new. */
static int add_stack(struct folded_tree *t, uint32_t id, uint64_t count)
{
	uint32_t n = stack_table_leaf(t->stacks, id), node = 0;
	size_t depth = 0;
	int err = 0;

	while (n) {
		if (t->placed[n]) {
			node = t->placed[n] - 1;
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
		t->placed[t->path[depth]] = node + 1;
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

/* placed has a slot per node of the whole table: fresh pages, so that a
 * small profile (a stage's) pays only for the pages it touches, not for
 * clearing them all. */
static int alloc_placed(struct folded_tree *t, const struct stack_table *stacks)
{
	size_t bytes = (stack_table_node_count(stacks) + 1) * sizeof(*t->placed);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -ENOMEM;
	t->placed = p;
	t->placed_bytes = bytes;
	return 0;
}

/* What only a step of building needs goes after it (the children index
 * is made again by the next step); the nodes are cut to size, as pages
 * are built from them with no room to spare. */
static void end_step(struct folded_tree *t)
{
	struct text_node *exact;

	free(t->children);
	free(t->names.slots);
	if (t->placed)
		munmap(t->placed, t->placed_bytes);
	free(t->path);
	free(t->scratch);
	t->names = (struct name_index){ 0 };
	t->children = t->path = t->placed = NULL;
	t->children_cap = 0;
	t->scratch = NULL;
	t->stacks = NULL;
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

	if ((t->scratch = malloc(FOLDED_LINE_MAX)) && !alloc_placed(t, p->stacks)) {
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
	return t;
}

/* A saved tree: this header, its texts (types, length, bytes) and its
 * nodes after the root (parent, text, self), callers first.  It is read
 * back only by the process that wrote it, so numbers are in host order;
 * it is still checked as it is read, since a file can come back short. */
#define SAVED_MAGIC 0x31545053u /* "SPT1" */

struct saved_head {
	uint32_t magic, ntexts, nnodes, pad;
};

struct saved_text {
	uint32_t types, len;
};

struct saved_node {
	uint32_t parent, text;
	uint64_t self;
};

int folded_tree_save(const struct folded_tree *t, void **data, size_t *len)
{
	struct saved_head head = { SAVED_MAGIC, (uint32_t)t->ntexts, (uint32_t)t->nnodes - 1, 0 };
	size_t bytes = sizeof(head) + (t->nnodes - 1) * sizeof(struct saved_node);
	uint8_t *out, *at;

	for (size_t i = 0; i < t->ntexts; i++)
		bytes += sizeof(struct saved_text) + t->texts[i].len;
	*data = out = malloc(bytes);
	*len = bytes;
	if (!out)
		return -ENOMEM;
	memcpy(out, &head, sizeof(head));
	at = out + sizeof(head);
	for (size_t i = 0; i < t->ntexts; i++) {
		struct saved_text st = { t->texts[i].types, t->texts[i].len };

		memcpy(at, &st, sizeof(st));
		memcpy(at + sizeof(st), t->texts[i].s, st.len);
		at += sizeof(st) + st.len;
	}
	for (size_t i = 1; i < t->nnodes; i++) {
		struct saved_node sn = { t->nodes[i].parent, t->nodes[i].text, t->nodes[i].self };

		memcpy(at, &sn, sizeof(sn));
		at += sizeof(sn);
	}
	return 0;
}

/* The saved texts' ids in t, types merged.  NULL with *err. */
static uint32_t *add_saved_texts(struct folded_tree *t, const struct saved_head *head,
				 const uint8_t **pos, const uint8_t *end, int *err)
{
	uint32_t *ids = malloc(((size_t)head->ntexts + 1) * sizeof(*ids));
	const uint8_t *at = *pos;

	*err = ids ? 0 : -ENOMEM;
	for (uint32_t i = 0; ids && i < head->ntexts; i++) {
		struct saved_text st;

		if ((size_t)(end - at) < sizeof(st))
			goto bad;
		memcpy(&st, at, sizeof(st));
		at += sizeof(st);
		if (st.len > (size_t)(end - at) || st.len > FOLDED_LINE_MAX ||
		    st.types >= 1u << FRAME_TYPE_MAX)
			goto bad;
		if ((ids[i] = intern_text(t, (const char *)at, st.len)) == NO_TEXT) {
			*err = -ENOMEM;
			break;
		}
		t->texts[ids[i]].types |= st.types;
		at += st.len;
	}
	*pos = at;
	if (!*err)
		return ids;
	free(ids);
	return NULL;
bad:
	free(ids);
	*err = -EINVAL;
	return NULL;
}

int folded_tree_add_saved(struct folded_tree *t, const void *data, size_t len)
{
	const uint8_t *at = data, *end = at + len;
	struct saved_head head;
	uint32_t *texts = NULL, *nodes = NULL;
	int err = -EINVAL;

	if (len < sizeof(head))
		return -EINVAL;
	memcpy(&head, at, sizeof(head));
	at += sizeof(head);
	if (head.magic != SAVED_MAGIC ||
	    head.ntexts > (size_t)(end - at) / sizeof(struct saved_text) ||
	    head.nnodes > (size_t)(end - at) / sizeof(struct saved_node))
		return -EINVAL;
	if (!(texts = add_saved_texts(t, &head, &at, end, &err)))
		goto out;
	err = -EINVAL;
	if ((size_t)(end - at) != (size_t)head.nnodes * sizeof(struct saved_node))
		goto out;
	err = -ENOMEM;
	if (!(nodes = malloc(((size_t)head.nnodes + 1) * sizeof(*nodes))))
		goto out;
	nodes[0] = 0;
	for (uint32_t i = 1; i <= head.nnodes; i++, at += sizeof(struct saved_node)) {
		struct saved_node sn;

		memcpy(&sn, at, sizeof(sn));
		err = -EINVAL;
		if (sn.parent >= i || sn.text >= head.ntexts)
			goto out;
		err = -ENOMEM;
		if (!(nodes[i] = tree_child(t, nodes[sn.parent], texts[sn.text])))
			goto out;
		t->nodes[nodes[i]].self += sn.self;
	}
	err = 0;
out:
	free(texts);
	free(nodes);
	end_step(t);
	return err;
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
		if ((t->nodes[i].self + unit / 2) / unit)
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
			 (nd->self + unit / 2) / unit, ctx);
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
	uint32_t *end;          /* per node: the line's length up to it */
};

/* Lines share their callers' text: each node's text is copied once, after
 * its caller's, and a line is written where a count ends. */
static int write_line(uint32_t node, uint32_t parent, const char *text, size_t len, int type,
		      uint64_t self, void *ctx)
{
	struct line_writer *w = ctx;
	size_t at = w->end[parent];

	(void)type;
	if (parent && at < FOLDED_LINE_MAX)
		w->line[at++] = ';';
	if (len > FOLDED_LINE_MAX - at) /* absurdly deep: keep the sample, cut the line */
		len = FOLDED_LINE_MAX - at;
	memcpy(w->line + at, text, len);
	w->end[node] = (uint32_t)(at + len);
	if (!self)
		return 0;
	if (fwrite(w->line, 1, at + len, w->file) != at + len ||
	    fprintf(w->file, " %llu\n", (unsigned long long)self) < 0)
		return -EIO;
	return 0;
}

int folded_tree_write(const struct folded_tree *t, const char *path, uint64_t unit)
{
	struct line_writer w = { NULL, malloc(FOLDED_LINE_MAX), calloc(t->nnodes, sizeof(*w.end)) };
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
