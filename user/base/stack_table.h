/* stack_table.h - interned stacks: each distinct stack stored once, named
 * by a small id.
 *
 * A stack is a root label (the process), an optional thread name and the
 * frames, leaf first.  Frames are compared by name pointer and type (names
 * are owned by the modules that produced them and live as long as the
 * recording, see frame.h); the root and thread by their text, since the
 * caller's copies may be short-lived (the table keeps its own).  Two stacks
 * with different name pointers can therefore read the same: writers that
 * print text merge them.
 *
 * Interning a stack already seen allocates nothing, so the outputs can add
 * a sample per stack id instead of copying it.  Stacks that share callers
 * share their storage: a new stack costs only the frames where it departs
 * from those seen before (deep recursions differ near their leaves).
 */
#ifndef SPARKPROF_STACK_TABLE_H
#define SPARKPROF_STACK_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/frame.h"

struct stack_table;

/* NULL with errno ENOMEM. */
struct stack_table *stack_table_new(void);
void stack_table_free(struct stack_table *t);

/* The id (0, 1, 2, ... in order of first sight) of the stack root ->
 * thread -> frames[n-1] ... frames[0]; root and thread may be NULL.
 * -ENOMEM when a new stack cannot be stored. */
int64_t stack_table_intern(struct stack_table *t, const char *root, const char *thread,
			   const struct frame *frames, size_t n);

size_t stack_table_count(const struct stack_table *t);

/* The table as a tree, for writers that treat shared callers once.  Each
 * stack is a path of nodes (ids from 1, 0 is above them all): its root
 * label, its thread, then its frames from the outermost in.  A node's
 * parent has a smaller id. */
enum stack_node_kind { STACK_NODE_FRAME, STACK_NODE_ROOT, STACK_NODE_THREAD };

struct stack_node {
	enum stack_node_kind kind;
	struct frame frame; /* the frame; for a root or thread, name is its text
			     * (NULL: the stack has none) and type FRAME_NATIVE */
	uint32_t parent;    /* 0 for a root label */
};

/* Stack id's innermost node (id < stack_table_count()). */
uint32_t stack_table_leaf(const struct stack_table *t, uint32_t id);

/* Nodes are numbered 1 to stack_table_node_count(). */
size_t stack_table_node_count(const struct stack_table *t);

/* Node `node` (from stack_table_leaf or a node's parent). */
struct stack_node stack_table_node(const struct stack_table *t, uint32_t node);

/* Heap bytes the table uses, for summaries and benchmarks. */
size_t stack_table_memory(const struct stack_table *t);

#endif
