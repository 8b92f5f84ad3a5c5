/* page_builder.c - see page_builder.h.
 *
 * Open levels hold their text, self and total. A level closing with a
 * total under the page's narrowest node is left out; one at least that
 * wide goes into the tree, with its callers first (they are at least as
 * wide, and get their own counts when they close). Children are added in
 * the order they close, which is the stream's: by text.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "output/page_builder.h"

struct open_level {
	uint64_t stamp;
	char *text;
	size_t len, cap;
	int type;
	uint64_t self, total;
	uint32_t node;          /* in the tree; 0: not yet */
};

struct page_builder {
	struct flame_tree *tree;
	uint64_t min_width, root_total, left_out;
	struct open_level *open;   /* open[1..depth] */
	size_t depth, cap;
	int err;
};

struct page_builder *page_builder_new(uint64_t total, double min_width_pct)
{
	struct page_builder *b = calloc(1, sizeof(*b));

	if (!b || !(b->tree = flame_tree_new())) {
		free(b);
		errno = ENOMEM;
		return NULL;
	}
	b->min_width = flame_tree_min_width(total, min_width_pct);
	return b;
}

void page_builder_free(struct page_builder *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->cap; i++)
		free(b->open[i].text);
	flame_tree_free(b->tree);
	free(b->open);
	free(b);
}

/* Level i's node in the tree, with its callers'. */
static int place(struct page_builder *b, size_t i)
{
	struct open_level *l = &b->open[i];
	int err;

	if (l->node)
		return 0;
	if (i > 1 && (err = place(b, i - 1)))
		return err;
	return flame_tree_child(b->tree, i > 1 ? b->open[i - 1].node : 0, l->text, l->len, l->type,
				&l->node);
}

static int close_top(struct page_builder *b)
{
	struct open_level *l = &b->open[b->depth];
	int err = 0;

	if (l->total >= b->min_width) {
		err = place(b, b->depth);
		if (!err)
			err = flame_tree_add_counts(b->tree, l->node, l->self, l->total, 0);
	} else {
		b->left_out++;
	}
	if (b->depth > 1)
		b->open[b->depth - 1].total += l->total;
	else
		b->root_total += l->total;
	b->depth--;
	return err;
}

static int open_level(struct page_builder *b, uint64_t stamp, const char *text, size_t len,
		      int type)
{
	struct open_level *l;
	size_t old = b->cap;

	if (grow_array((void **)&b->open, &b->cap, b->depth + 2, sizeof(*b->open)))
		return -ENOMEM;
	memset(b->open + old, 0, (b->cap - old) * sizeof(*b->open));
	l = &b->open[++b->depth];
	if (grow_array((void **)&l->text, &l->cap, len + 1, 1))
		return -ENOMEM;
	memcpy(l->text, text, len);
	l->text[len] = '\0';
	l->len = len;
	l->type = type;
	l->stamp = stamp;
	l->self = l->total = 0;
	l->node = 0;
	return 0;
}

/* Closes the levels the path left, opens the path's own below them. */
static int sync(struct page_builder *b, const struct page_path *p, uint32_t depth)
{
	size_t keep = 0;
	int err;

	while (keep < b->depth && keep < depth && b->open[keep + 1].stamp == p->stamp[keep + 1])
		keep++;
	while (b->depth > keep)
		if ((err = close_top(b)))
			return err;
	for (size_t i = keep + 1; i <= depth; i++)
		if ((err = open_level(b, p->stamp[i], p->text[i], p->len[i], p->type[i])))
			return err;
	return 0;
}

int page_builder_add(struct page_builder *b, const struct page_path *path, uint32_t depth,
		     const char *leaf, uint64_t self)
{
	int err = b->err;

	if (!err && !self)
		return 0;
	if (!err)
		err = sync(b, path, depth);
	if (!err && leaf && !(err = open_level(b, 0, leaf, strlen(leaf), -1))) {
		b->open[b->depth].self = b->open[b->depth].total = self;
		err = close_top(b);
	} else if (!err) {
		b->open[b->depth].self += self;
		b->open[b->depth].total += self;
	}
	b->err = err;
	return err;
}

struct flame_tree *page_builder_finish(struct page_builder *b, int *err)
{
	struct flame_tree *t;

	*err = b->err;
	while (!*err && b->depth)
		*err = close_top(b);
	if (!*err)
		*err = flame_tree_add_counts(b->tree, 0, 0, b->root_total, 0);
	if (*err)
		return NULL;
	flame_tree_add_left_out(b->tree, b->left_out);
	t = b->tree;
	b->tree = NULL;
	return t;
}
