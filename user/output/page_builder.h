/* page_builder.h - a flame graph's tree from stacks that come depth first
 * in order (a sample store's merged rows, store_merge.h), keeping only the
 * nodes a page of min_width_pct shows, with their counts and the number
 * left out: memory holds the page, not every stack the recording saw.
 *
 * The stream's path is shared by many builders (one per view and kind):
 * each level carries a stamp that changes whenever the level is replaced,
 * so a builder that saw no count for a while finds where the path left
 * its own, and closes its nodes from there.
 */
#ifndef SPARKPROF_PAGE_BUILDER_H
#define SPARKPROF_PAGE_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "output/flame_tree.h"

/* The current path: levels 1..depth of each array. */
struct page_path {
	const char *const *text;
	const size_t *len;
	const int *type;          /* enum frame_type, or -1: guessed from the text */
	const uint64_t *stamp;    /* a level's stamp changes when it is replaced */
};

struct page_builder;

/* total: what the page's root will count (the view's total, in units).
 * NULL with errno ENOMEM. */
struct page_builder *page_builder_new(uint64_t total, double min_width_pct);
void page_builder_free(struct page_builder *b);

/* self units at the node path[1..depth] (leaf, when given: a child of it
 * read as that text, as a wall page's thread state). 0, -ENOMEM or
 * -E2BIG (too many nodes). */
int page_builder_add(struct page_builder *b, const struct page_path *path, uint32_t depth,
		     const char *leaf, uint64_t self);

/* Closes what is open and hands over the tree (NULL with *err): the
 * builder then only frees. */
struct flame_tree *page_builder_finish(struct page_builder *b, int *err);

#endif
