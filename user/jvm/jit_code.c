/* jit_code.c - see jit_code.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "jvm/jit_code.h"
#include "sparkprof_helper_log.h"

struct code_blob {
	uint64_t id;
	uint64_t start, end;
	uint64_t loaded, ended;   /* ended: UINT64_MAX while live */
	const char *name;
	unsigned char is_method; /* L, else D */
	unsigned char implicit_end; /* ended because a newer blob overlapped it */
	unsigned char duplicate; /* same range and name as a live D: ignored */
	unsigned char deferred;  /* its inlined frames wait in the reader's file */
	unsigned char reloadable; /* span still holds them: they may be dropped */
	unsigned char used;      /* a lookup landed in it since the last trim */
	struct {
		uint32_t first, count;   /* into jc->inl; none while deferred */
	} ranges;
	struct {
		uint32_t offset, length; /* where the loader reads them */
	} span;
};

/* PCs [start, end) of a blob, as offsets from its start, and the chain
 * of frames inlined there.  An executor's JIT holds hundreds of thousands
 * of ranges: 12 bytes each. */
struct inline_range {
	uint32_t start, end;
	uint32_t chain;        /* its innermost frame's node in chains */
};

/* Chains of inlined frames as a tree of frames: a node is a method
 * inlined into its parent node's (the root's parent is the compiled
 * method), so a chain is its innermost node.  The ranges of one compiled
 * method differ in their innermost frames and share the outer ones, and
 * methods that inline the same callees share whole chains: each frame
 * costs 12 bytes once, not 8 bytes in every chain that holds it.  Nodes
 * are found by (parent, name) through an open-addressing index of node
 * numbers + 1 (0: empty), at most half full.  A parent's number is below
 * its children's. */
struct chain_store {
	const char **names;          /* by node */
	uint32_t *parents;           /* by node: parent + 1, 0 at the root */
	size_t count, capnames, capparents;
	uint32_t *index;
	size_t capindex;             /* a power of two */
};

struct jit_code {
	struct code_blob *blobs;     /* in id order */
	size_t nblobs, capblobs;
	size_t nended;               /* blobs with an end, live no more */
	size_t *live;                /* indexes of live blobs, sorted by start */
	size_t nlive, caplive;
	/* The address index: every non-duplicate blob by start, with the
	 * starts beside them (a lookup's binary search reads one array, not
	 * a blob per step) and the prefix maximum of their ends. */
	uint32_t *by_start;
	uint64_t *starts;
	uint64_t *max_end;
	size_t nindexed, capindex;
	size_t indexed_blobs;        /* blobs[0..indexed_blobs) are in by_start */

	struct inline_range *inl;
	size_t ninl, capinl;
	struct chain_store chains;

	jit_code_inline_loader loader;
	void *loader_ctx;
	struct code_blob *loading;   /* the method the loader is filling */
};

struct jit_code *jit_code_new(void)
{
	return calloc(1, sizeof(struct jit_code));
}

void jit_code_free(struct jit_code *jc)
{
	if (!jc)
		return;
	free(jc->blobs);
	free(jc->live);
	free(jc->by_start);
	free(jc->starts);
	free(jc->max_end);
	free(jc->inl);
	free(jc->chains.names);
	free(jc->chains.parents);
	free(jc->chains.index);
	free(jc);
}

/* ---- chains of inlined frames ---- */

static size_t node_slot_start(uint32_t parent, const char *name, size_t cap)
{
	uint64_t h = ((uint64_t)parent << 32 ^ (uintptr_t)name) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

static int chain_grow_index(struct chain_store *cs)
{
	size_t cap = cs->capindex ? cs->capindex * 2 : 1024;
	uint32_t *idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t c = 0; c < cs->count; c++) {
		size_t j;

		for (j = node_slot_start(cs->parents[c], cs->names[c], cap); idx[j];
		     j = (j + 1) & (cap - 1))
			;
		idx[j] = (uint32_t)c + 1;
	}
	free(cs->index);
	cs->index = idx;
	cs->capindex = cap;
	return 0;
}

/* The node for name inlined under parent (a node + 1, 0: the root), stored
 * if new.  0 or -ENOMEM. */
static int node_intern(struct chain_store *cs, uint32_t parent, const char *name, uint32_t *node)
{
	size_t j;

	if ((cs->count + 1) * 2 > cs->capindex && chain_grow_index(cs))
		return -ENOMEM;
	for (j = node_slot_start(parent, name, cs->capindex); cs->index[j];
	     j = (j + 1) & (cs->capindex - 1)) {
		uint32_t c = cs->index[j] - 1;

		if (cs->parents[c] == parent && cs->names[c] == name) {
			*node = c;
			return 0;
		}
	}
	if (cs->count + 1 >= UINT32_MAX ||
	    grow_array((void **)&cs->names, &cs->capnames, cs->count + 1, sizeof(*cs->names)) ||
	    grow_array((void **)&cs->parents, &cs->capparents, cs->count + 1, sizeof(*cs->parents)))
		return -ENOMEM;
	cs->names[cs->count] = name;
	cs->parents[cs->count] = parent;
	*node = (uint32_t)cs->count;
	cs->index[j] = (uint32_t)++cs->count;
	return 0;
}

/* The innermost node of chain names[0..depth) (innermost first), its
 * frames stored if new.  0 or -ENOMEM. */
static int chain_intern(struct chain_store *cs, const char *const *names, uint32_t depth,
			uint32_t *chain)
{
	uint32_t parent = 0, node = 0;

	for (uint32_t i = depth; i-- > 0; parent = node + 1)
		if (node_intern(cs, parent, names[i], &node))
			return -ENOMEM;
	*chain = node;
	return 0;
}

static void chain_store_free(struct chain_store *cs)
{
	free(cs->names);
	free(cs->parents);
	free(cs->index);
	memset(cs, 0, sizeof(*cs));
}

/* ---- adding ---- */

static struct code_blob *blob_by_id(struct jit_code *jc, uint64_t id)
{
	size_t lo = 0, hi = jc->nblobs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (jc->blobs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < jc->nblobs && jc->blobs[lo].id == id ? &jc->blobs[lo] : NULL;
}

static size_t live_lower_bound(struct jit_code *jc, uint64_t addr)
{
	size_t lo = 0, hi = jc->nlive;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (jc->blobs[jc->live[mid]].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void live_remove_at(struct jit_code *jc, size_t i)
{
	memmove(&jc->live[i], &jc->live[i + 1], (jc->nlive - i - 1) * sizeof(jc->live[0]));
	jc->nlive--;
}

static void live_remove_blob(struct jit_code *jc, size_t idx)
{
	size_t i = live_lower_bound(jc, jc->blobs[idx].start);
	for (; i < jc->nlive && jc->blobs[jc->live[i]].start == jc->blobs[idx].start; i++)
		if (jc->live[i] == idx) {
			live_remove_at(jc, i);
			return;
		}
}

int jit_code_add(struct jit_code *jc, int is_method, uint64_t ts, uint64_t id,
		 uint64_t start, uint64_t size, const char *name)
{
	if (size == 0 || start > UINT64_MAX - size)
		return -EINVAL;
	if (jc->nblobs && jc->blobs[jc->nblobs - 1].id >= id)
		return -EINVAL;
	if (jc->nblobs >= UINT32_MAX) /* the index numbers blobs in 32 bits */
		return -ENOMEM;
	if (grow_array((void **)&jc->blobs, &jc->capblobs, jc->nblobs + 1, sizeof(*jc->blobs)) ||
	    grow_array((void **)&jc->live, &jc->caplive, jc->nlive + 1, sizeof(*jc->live)))
		return -ENOMEM;
	struct code_blob b = { .id = id, .start = start, .end = start + size, .loaded = ts,
			       .ended = UINT64_MAX, .name = name, .is_method = is_method };
	size_t idx = jc->nblobs;
	size_t i = live_lower_bound(jc, start);
	/* A repeat of a live stub (replays) is the same blob, not a reuse. */
	if (!is_method && i < jc->nlive) {
		struct code_blob *o = &jc->blobs[jc->live[i]];
		if (o->start == b.start && o->end == b.end && o->name == name && !o->is_method)
			b.duplicate = 1;
	}
	if (!b.duplicate) {
		/* Live blobs never overlap; a new one ends those it covers. */
		if (i > 0 && jc->blobs[jc->live[i - 1]].end > start)
			i--;
		while (i < jc->nlive && jc->blobs[jc->live[i]].start < b.end) {
			struct code_blob *o = &jc->blobs[jc->live[i]];
			if (o->end > start) {
				o->ended = ts;
				o->implicit_end = 1;
				jc->nended++;
				live_remove_at(jc, i);
			} else {
				i++;
			}
		}
		memmove(&jc->live[i + 1], &jc->live[i], (jc->nlive - i) * sizeof(jc->live[0]));
		jc->live[i] = idx;
		jc->nlive++;
	}
	jc->blobs[idx] = b;
	jc->nblobs++;
	return 0;
}

int jit_code_unload(struct jit_code *jc, uint64_t ts, uint64_t id)
{
	struct code_blob *b = blob_by_id(jc, id);
	if (!b || b->duplicate || b->ended != UINT64_MAX || ts < b->loaded)
		return -EINVAL;
	b->ended = ts;
	jc->nended++;
	live_remove_blob(jc, b - jc->blobs);
	return 0;
}

size_t jit_code_blobs(const struct jit_code *jc, size_t *ended)
{
	if (ended)
		*ended = jc->nended;
	return jc->nblobs;
}

/* The inlined frames' part: ranges and their chains. */
static size_t inline_memory(const struct jit_code *jc)
{
	return jc->capinl * sizeof(*jc->inl) +
	       jc->chains.capnames * sizeof(*jc->chains.names) +
	       jc->chains.capparents * sizeof(*jc->chains.parents) +
	       jc->chains.capindex * sizeof(*jc->chains.index);
}

void jit_code_usage(const struct jit_code *jc, struct jit_code_usage *u)
{
	u->blobs = jc->nblobs;
	u->ended = jc->nended;
	u->ranges = jc->ninl;
	u->frames = jc->chains.count;
	u->blob_bytes = jc->capblobs * sizeof(*jc->blobs) + jc->caplive * sizeof(*jc->live);
	u->index_bytes = jc->capindex *
			 (sizeof(*jc->by_start) + sizeof(*jc->starts) + sizeof(*jc->max_end));
	u->inline_bytes = inline_memory(jc);
}

size_t jit_code_memory(const struct jit_code *jc)
{
	struct jit_code_usage u;

	jit_code_usage(jc, &u);
	return sizeof(*jc) + u.blob_bytes + u.index_bytes + u.inline_bytes;
}

/* Whether blob b of jc stays: live, ended at or after ts, or the newest
 * (whose id the next blob must exceed, and whose I and J records may follow). */
static int keeps(const struct jit_code *jc, const struct code_blob *b, uint64_t ts)
{
	return b->ended == UINT64_MAX || b->ended >= ts || b == &jc->blobs[jc->nblobs - 1];
}

/* The ranges a blob holds in jc->inl: none while they are deferred. */
static uint32_t loaded_ranges(const struct code_blob *b)
{
	return b->deferred ? 0 : b->ranges.count;
}

/* The chains of the ranges kept, into a new store (parents are numbered
 * below their children there too), and the ranges with them into inl.
 * 0 or -ENOMEM (kept freed). */
static int copy_chains(const struct jit_code *jc, uint64_t ts, int drop_ended,
		       struct chain_store *kept, struct inline_range *inl)
{
	const struct chain_store *cs = &jc->chains;
	uint32_t *moved = calloc(cs->count ? cs->count : 1, sizeof(*moved)); /* new node + 1 */
	size_t ninl = 0;
	int err = moved ? 0 : -ENOMEM;

	/* Mark the nodes the kept ranges need ... */
	for (size_t i = 0; !err && i < jc->nblobs; i++) {
		const struct code_blob *b = &jc->blobs[i];

		for (size_t k = 0; (!drop_ended || keeps(jc, b, ts)) && k < loaded_ranges(b); k++)
			for (uint32_t c = jc->inl[b->ranges.first + k].chain + 1; c && !moved[c - 1];
			     c = cs->parents[c - 1])
				moved[c - 1] = UINT32_MAX;
	}
	/* ... and copy them, parents first. */
	for (size_t c = 0; !err && c < cs->count; c++) {
		uint32_t node, parent = cs->parents[c];

		if (moved[c] != UINT32_MAX)
			continue;
		err = node_intern(kept, parent ? moved[parent - 1] : 0, cs->names[c], &node);
		if (err)
			break;
		moved[c] = node + 1;
	}
	for (size_t i = 0; !err && i < jc->nblobs; i++) {
		const struct code_blob *b = &jc->blobs[i];

		for (size_t k = 0; (!drop_ended || keeps(jc, b, ts)) && k < loaded_ranges(b); k++) {
			struct inline_range r = jc->inl[b->ranges.first + k];

			r.chain = moved[r.chain] - 1;
			inl[ninl++] = r;
		}
	}
	free(moved);
	if (err)
		chain_store_free(kept);
	return err;
}

/* Drops the blobs that do not keep (all keep when drop_ended is 0) and the
 * ranges of deferred blobs, into new arrays: out of memory, nothing has
 * changed and -ENOMEM.  (Ranges loaded late lie after newer blobs' ranges,
 * so they cannot be moved down in place.)  Sets *dropped. */
static int compact(struct jit_code *jc, uint64_t ts, int drop_ended, size_t *dropped)
{
	struct chain_store kept = { 0 };
	struct inline_range *inl = NULL;
	size_t *new_index, n = 0, ninl = 0;

	*dropped = 0;
	/* live holds indexes into blobs: map old indexes to new ones. */
	new_index = malloc(jc->nblobs * sizeof(*new_index));
	for (size_t i = 0; new_index && i < jc->nblobs; i++)
		if (!drop_ended || keeps(jc, &jc->blobs[i], ts))
			ninl += loaded_ranges(&jc->blobs[i]);
	if (!new_index || (ninl && !(inl = malloc(ninl * sizeof(*inl))))) {
		free(new_index);
		return -ENOMEM;
	}
	if (ninl && copy_chains(jc, ts, drop_ended, &kept, inl)) {
		free(inl);
		free(new_index);
		return -ENOMEM;
	}
	/* From here nothing fails.  The kept ranges lie in blob order. */
	ninl = 0;
	for (size_t i = 0; i < jc->nblobs; i++) {
		struct code_blob b = jc->blobs[i];

		new_index[i] = SIZE_MAX;
		if (drop_ended && !keeps(jc, &jc->blobs[i], ts))
			continue;
		b.ranges.first = (uint32_t)ninl;
		b.ranges.count = loaded_ranges(&b);
		ninl += b.ranges.count;
		new_index[i] = n;
		jc->blobs[n++] = b;
	}
	for (size_t i = 0; i < jc->nlive; i++)
		jc->live[i] = new_index[jc->live[i]];
	free(new_index);
	*dropped = jc->nblobs - n;
	jc->nended -= *dropped;
	jc->nblobs = n;
	free(jc->inl);
	jc->inl = inl;
	jc->ninl = jc->capinl = ninl;
	chain_store_free(&jc->chains);
	jc->chains = kept;
	return 0;
}

size_t jit_code_forget(struct jit_code *jc, uint64_t ts)
{
	size_t dropped;

	if (!jc->nblobs || compact(jc, ts, 1, &dropped))
		return 0;
	jc->indexed_blobs = jc->nindexed = 0; /* renumbered */
	if (jc->capindex > 4 * jc->nblobs) {
		free(jc->by_start);
		free(jc->starts);
		free(jc->max_end);
		jc->by_start = NULL;
		jc->starts = NULL;
		jc->max_end = NULL;
		jc->capindex = 0;
	}
	shrink_array((void **)&jc->blobs, &jc->capblobs, jc->nblobs, sizeof(*jc->blobs));
	return dropped;
}

size_t jit_code_trim_inline(struct jit_code *jc, size_t budget)
{
	size_t evicted = 0, dropped;
	int over = inline_memory(jc) > budget;

	for (size_t i = 0; i < jc->nblobs; i++) {
		struct code_blob *b = &jc->blobs[i];

		if (over && !b->used && !b->deferred && b->reloadable && b->ranges.count) {
			b->deferred = 2;   /* this trim's: undone if it fails */
			evicted++;
		}
		b->used = 0;
	}
	if (!evicted)
		return 0;
	if (compact(jc, 0, 0, &dropped)) {
		for (size_t i = 0; i < jc->nblobs; i++)
			if (jc->blobs[i].deferred == 2)
				jc->blobs[i].deferred = 0;
		return 0;
	}
	for (size_t i = 0; i < jc->nblobs; i++)
		if (jc->blobs[i].deferred == 2)
			jc->blobs[i].deferred = 1;
	return evicted;
}

/* The compiled method I and J records for id go to: the newest blob (they
 * follow its L record), or the one being loaded. */
static struct code_blob *inline_target(const struct jit_code *jc, uint64_t id)
{
	struct code_blob *b = jc->loading;

	if (!b)
		b = jc->nblobs ? &jc->blobs[jc->nblobs - 1] : NULL;
	return b && b->id == id && b->is_method ? b : NULL;
}

int jit_code_add_inline(struct jit_code *jc, uint64_t id, uint64_t start, uint64_t end,
			const char *const *names, unsigned depth)
{
	struct code_blob *b = inline_target(jc, id);

	if (!b || (b->deferred && b != jc->loading) || start >= end || start < b->start ||
	    end > b->end || !depth || b->end - b->start > UINT32_MAX)
		return -EINVAL;
	/* Sorted, disjoint and the last in jc->inl, for the binary search in
	 * inline_at() (another method may have been loaded since). */
	if (b->ranges.count &&
	    (start - b->start < jc->inl[b->ranges.first + b->ranges.count - 1].end ||
	     b->ranges.first + b->ranges.count != jc->ninl))
		return -EINVAL;
	uint32_t chain;
	if (jc->ninl >= UINT32_MAX ||
	    grow_array((void **)&jc->inl, &jc->capinl, jc->ninl + 1, sizeof(*jc->inl)) ||
	    chain_intern(&jc->chains, names, depth, &chain))
		return -ENOMEM;
	if (!b->ranges.count)
		b->ranges.first = (uint32_t)jc->ninl;
	jc->inl[jc->ninl++] = (struct inline_range){ (uint32_t)(start - b->start),
						     (uint32_t)(end - b->start), chain };
	b->ranges.count++;
	return 0;
}

int jit_code_inline_method_start(const struct jit_code *jc, uint64_t id, uint64_t *start)
{
	const struct code_blob *b = inline_target(jc, id);

	if (!b)
		return -EINVAL;
	*start = b->start;
	return 0;
}

void jit_code_set_inline_loader(struct jit_code *jc, jit_code_inline_loader fn, void *ctx)
{
	jc->loader = fn;
	jc->loader_ctx = ctx;
}

int jit_code_defer_inline(struct jit_code *jc, uint64_t id, uint32_t offset, uint32_t length)
{
	struct code_blob *b = inline_target(jc, id);

	if (!b)
		b = blob_by_id(jc, id);   /* a new file restating live code */
	if (!b || !b->is_method || b->duplicate || !jc->loader || b == jc->loading)
		return -EINVAL;
	b->span.offset = offset;
	b->span.length = length;
	b->reloadable = 1;
	if (!b->deferred && b->ranges.count)
		return -EEXIST;
	b->deferred = 1;
	return 0;
}

/* Reads b's deferred inlined frames back through the loader, once: a
 * span that no longer holds them leaves b with none. */
static void load_inline(struct jit_code *jc, struct code_blob *b)
{
	b->deferred = 0;
	b->ranges.first = b->ranges.count = 0;
	jc->loading = b;
	jc->loader(jc->loader_ctx, b->id, b->span.offset, b->span.length);
	jc->loading = NULL;
}

size_t jit_code_load_ended(struct jit_code *jc)
{
	size_t n = 0;

	for (size_t i = 0; i < jc->nblobs; i++) {
		if (jc->blobs[i].deferred && jc->blobs[i].ended != UINT64_MAX) {
			load_inline(jc, &jc->blobs[i]);
			n++;
		}
		/* Spans point into the file being left: live methods' are
		 * pointed again as the new file restates them. */
		jc->blobs[i].reloadable = 0;
	}
	return n;
}

/* ---- lookups ---- */

static int cmp_start(const void *a, const void *b, void *ctx)
{
	const struct code_blob *blobs = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint64_t x = blobs[i].start, y = blobs[j].start;

	/* equal starts: the older blob first */
	return x != y ? (x < y ? -1 : 1) : (i > j) - (i < j);
}

/* by_start and max_end over every blob, brought up to date at a lookup
 * (they come in bursts between polls).  Blobs only come at the end of
 * blobs until a compaction renumbers them, so those added since are
 * sorted alone and merged in: an executor holds about 50,000 blobs, too
 * many to sort again after every poll. */
static int build_index(struct jit_code *jc)
{
	size_t n = jc->nindexed, k = 0, i, j, w;
	uint32_t *fresh;

	if (jc->indexed_blobs == jc->nblobs)
		return 0;
	if (grow_array((void **)&jc->by_start, &jc->capindex, jc->nblobs, sizeof(*jc->by_start)))
		return -ENOMEM;
	void *m = realloc(jc->max_end, jc->capindex * sizeof(*jc->max_end));
	if (!m)
		return -ENOMEM;
	jc->max_end = m;
	m = realloc(jc->starts, jc->capindex * sizeof(*jc->starts));
	if (!m)
		return -ENOMEM;
	jc->starts = m;
	fresh = malloc((jc->nblobs - jc->indexed_blobs) * sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	for (i = jc->indexed_blobs; i < jc->nblobs; i++)
		if (!jc->blobs[i].duplicate)
			fresh[k++] = (uint32_t)i;
	qsort_r(fresh, k, sizeof(*fresh), cmp_start, jc->blobs);
	/* From the back; at equal starts the older blob stays first, as
	 * cmp_start orders them. */
	for (i = n, j = k, w = n + k; j > 0;) {
		uint64_t start = jc->blobs[fresh[j - 1]].start;

		w--;
		if (i > 0 && jc->starts[i - 1] > start) {
			i--;
			jc->by_start[w] = jc->by_start[i];
			jc->starts[w] = jc->starts[i];
		} else {
			jc->by_start[w] = fresh[--j];
			jc->starts[w] = start;
		}
	}
	free(fresh);
	/* by_start[0..i) did not move: their maxima stand. */
	uint64_t mx = i ? jc->max_end[i - 1] : 0;
	for (; i < n + k; i++) {
		if (jc->blobs[jc->by_start[i]].end > mx)
			mx = jc->blobs[jc->by_start[i]].end;
		jc->max_end[i] = mx;
	}
	jc->nindexed = n + k;
	jc->indexed_blobs = jc->nblobs;
	return 0;
}

/* Calls fn for every blob covering addr; stops when fn returns non-zero.
 * 1 if it stopped, 0 if not, -ENOMEM. */
static int for_each_covering(struct jit_code *jc, uint64_t addr,
			     int (*fn)(struct code_blob *b, void *ctx), void *ctx)
{
	if (build_index(jc) < 0)
		return -ENOMEM;
	size_t lo = 0, hi = jc->nindexed;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (jc->starts[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && jc->max_end[i] > addr;) {
		struct code_blob *b = &jc->blobs[jc->by_start[i]];
		if (b->end > addr && fn(b, ctx))
			return 1;
	}
	return 0;
}

static int stop_at_first(struct code_blob *b, void *ctx)
{
	(void)b;
	(void)ctx;
	return 1;
}

int jit_code_covers(struct jit_code *jc, uint64_t addr)
{
	return for_each_covering(jc, addr, stop_at_first, NULL) == 1;
}

struct resolve_ctx {
	uint64_t ts;
	struct code_blob *match;
	int matches;
	uint64_t newest_load;     /* latest load among the blobs covering addr */
};

static int collect(struct code_blob *b, void *ctx)
{
	struct resolve_ctx *r = ctx;
	if (b->loaded > r->newest_load)
		r->newest_load = b->loaded;
	if (b->loaded <= r->ts && r->ts < b->ended) {
		r->match = b;
		r->matches++;
	}
	return 0;
}

static const struct inline_range *inline_at(struct jit_code *jc, const struct code_blob *b,
					    uint64_t addr)
{
	if (!b->ranges.count)
		return NULL;   /* jc->inl may be NULL yet */
	uint64_t off = addr - b->start;   /* addr is inside b */
	size_t lo = 0, hi = b->ranges.count;
	const struct inline_range *v = &jc->inl[b->ranges.first];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].end <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->ranges.count && v[lo].start <= off ? &v[lo] : NULL;
}

int jit_code_resolve(struct jit_code *jc, uint64_t addr, uint64_t ts, struct frame *out, int max)
{
	if (!out || max <= 0)
		return 0;
	struct resolve_ctx r = { .ts = ts };
	if (for_each_covering(jc, addr, collect, &r) < 0 || r.matches != 1)
		return 0;
	struct code_blob *b = r.match;
	if (b->implicit_end)
		return 0;
	/* Reused later: the unload record may trail the reuse. */
	if (b->ended != UINT64_MAX && r.newest_load > b->loaded &&
	    ts + SPARKPROF_HELPER_REUSE_GUARD_NS >= b->ended)
		return 0;
	if (b->deferred)
		load_inline(jc, b);
	b->used = 1;
	if (!b->is_method) {
		int interp = !strcmp(b->name, "Interpreter");
		out[0] = (struct frame){ b->name, interp ? FRAME_INTERPRETED : FRAME_NATIVE };
		return 1;
	}
	const struct inline_range *in = inline_at(jc, b, addr);
	const uint32_t *parents = jc->chains.parents;
	int depth = 0, n = 0;
	for (uint32_t c = in ? in->chain + 1 : 0; c; c = parents[c - 1])
		depth++;
	int skip = depth + 1 > max ? depth + 1 - max : 0;   /* drop innermost first */
	for (uint32_t c = in ? in->chain + 1 : 0; c; c = parents[c - 1])
		if (skip)
			skip--;
		else
			out[n++] = (struct frame){ jc->chains.names[c - 1], FRAME_INLINED };
	out[n++] = (struct frame){ b->name, FRAME_JIT };
	return n;
}
