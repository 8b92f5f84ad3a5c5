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

/* Stack id's parts (id < stack_table_count()); valid until the table is
 * freed, except frames, which stay valid only until the next get or intern. */
void stack_table_get(struct stack_table *t, uint32_t id, const char **root,
		     const char **thread, const struct frame **frames, size_t *n);

/* Heap bytes the table uses, for summaries and benchmarks. */
size_t stack_table_memory(const struct stack_table *t);

#endif
