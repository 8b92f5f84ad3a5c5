/* flame_tree.h - folded stacks merged into a call tree, the data behind the
 * HTML flame graphs, differential graphs and pprof export.
 *
 * A tree has two value columns: column 0 is the profile (or the diff's
 * base), column 1 the diff's new profile (or, for nothing else, zero).
 * Stacks come from folded text (FlameGraph, perf's and async-profiler's
 * collapsed output, sparkprof's own files), which is outside input: lines
 * and depths are bounded and a malformed line is a one-line error naming
 * the line.
 */
#ifndef SPARKPROF_FLAME_TREE_H
#define SPARKPROF_FLAME_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "base/frame.h"

/* Frame types of a node: enum frame_type, plus Java code whose tier the
 * text does not say (a Java-looking name without a _[j]/_[i]/_[0] suffix). */
#define FLAME_JAVA FRAME_TYPE_MAX
#define FLAME_TYPES (FRAME_TYPE_MAX + 1)

#define FLAME_LINE_MAX (1 << 20)   /* bytes of one folded line */
#define FLAME_DEPTH_MAX 8192       /* frames of one stack */
#define FLAME_NODES_MAX (64u << 20) /* nodes of one tree (memory bound) */

struct flame_node {
	uint32_t name;          /* index into the name table */
	uint32_t parent;        /* 0 for the root's children; the root is node 0 */
	uint32_t first_child, next_sibling; /* 0 = none */
	uint8_t type;           /* FLAME_* / enum frame_type */
	uint64_t total[2], self[2];
};

struct flame_tree;

/* Frame type of a frame text, and the length of its name without a type
 * suffix: "_[k]" kernel, "_[j]"/"_[1]" JIT, "_[i]" inlined, "_[0]"
 * interpreted; without one, "a/b/C.m" or "a.b.C.m" is Java, "x::y" C++,
 * anything else native. */
int flame_frame_type(const char *text, size_t len, size_t *name_len);

/* NULL with errno ENOMEM. */
struct flame_tree *flame_tree_new(void);
void flame_tree_free(struct flame_tree *t);

/* Building a tree from stacks already split into frames (a recording's
 * own profiles): parent's child for one frame text, added if new.  The
 * text is named and typed as in folded text, except that a type >= 0 (one
 * the recording saw) replaces the guess.  0, -E2BIG (too many nodes) or
 * -ENOMEM. */
int flame_tree_child(struct flame_tree *t, uint32_t parent, const char *text, size_t len,
		     int type, uint32_t *node);

/* Adds count to node's own column and to the totals of it and its
 * callers.  0 or -EOVERFLOW. */
int flame_tree_add_self(struct flame_tree *t, uint32_t node, uint64_t count, int column);

/* Adds to node's own count and its total in column, and to nothing else:
 * for a tree whose totals are known already (page_builder's, built
 * without the nodes a page leaves out).  0 or -EOVERFLOW. */
int flame_tree_add_counts(struct flame_tree *t, uint32_t node, uint64_t self, uint64_t total,
			  int column);

/* The narrowest node a page of a root this wide keeps (at least 1): a tree
 * built without the nodes narrower than it makes the same page. */
uint64_t flame_tree_min_width(uint64_t total, double min_width_pct);

/* Nodes left out of t while it was built (a page's narrow ones, by
 * page_builder): its page counts them among all the nodes there were. */
void flame_tree_add_left_out(struct flame_tree *t, uint64_t nodes);
uint64_t flame_tree_left_out(const struct flame_tree *t);

/* Adds count to column of one stack text "root;...;leaf" (no count).
 * 0, -E2BIG (too deep, or too many nodes) or -ENOMEM. */
int flame_tree_add_stack(struct flame_tree *t, const char *stack, size_t len, uint64_t count,
			 int column);

/* Parses folded text (lines "frames count", blank lines skipped) into
 * column. On a malformed line returns -EINVAL and writes "line N: why" to
 * err. */
int flame_tree_parse(struct flame_tree *t, const char *buf, size_t len, int column, char *err,
		     size_t err_len);

/* Reads and parses a folded file (at most 4 GiB). 0 or -errno, after one
 * message naming the file (and line). */
int flame_tree_read_file(struct flame_tree *t, const char *path, int column);

/* Node 0 is the root; its total is the sum of all stacks. */
const struct flame_node *flame_tree_nodes(const struct flame_tree *t, size_t *count);
const char *flame_tree_name(const struct flame_tree *t, uint32_t name);
size_t flame_tree_name_count(const struct flame_tree *t);

#endif
