/* folded.h - stacks aggregated in the folded format of FlameGraph and
 * async-profiler: one line per distinct stack, frames root first separated
 * by ';', a space, the count. Kernel frames carry the suffix "_[k]".
 *
 * A profile counts by stack id (base/stack_table.h): adding a sample of a
 * stack seen before allocates nothing and copies no text; the text of
 * each distinct frame is built once, when the profile is written.
 */
#ifndef SPARKPROF_FOLDED_H
#define SPARKPROF_FOLDED_H

#include <stddef.h>
#include <stdint.h>

#include "base/frame.h"
#include "base/spill_file.h"
#include "base/stack_table.h"

struct folded_profile;

/* Counts stacks interned in `stacks`, which profiles may share and which
 * must outlive them; NULL: the profile keeps a table of its own. NULL with
 * errno ENOMEM. */
struct folded_profile *folded_profile_new(struct stack_table *stacks);
void folded_profile_free(struct folded_profile *profile);

/* Adds `count` to the stack root -> thread -> frames[n-1] ... frames[0]
 * (frames are leaf first, as unwound). `root` (e.g. "java-1234") and
 * `thread` (a thread name) are the outermost frames; NULL for none.
 * Returns 0 or -ENOMEM. */
int folded_profile_add(struct folded_profile *profile, const char *root, const char *thread,
		       const struct frame *frames, size_t n, uint64_t count);

/* Adds `count` to stack id of the profile's stack table (a count of 0
 * adds nothing: the stack is not listed).  0 or -ENOMEM. */
int folded_profile_add_id(struct folded_profile *profile, uint32_t id, uint64_t count);

uint64_t folded_profile_total(const struct folded_profile *profile);

/* Visits every (stack id, count) in no set order; stops when fn returns
 * non-zero and returns that. */
int folded_profile_foreach_id(const struct folded_profile *profile,
			      int (*fn)(uint32_t id, uint64_t count, void *ctx), void *ctx);

/* Appends one frame's folded text to buf: the name with ';' and newlines
 * replaced (they would split the line) and the "_[k]" suffix for kernel
 * frames. Returns the new length, or -ENOSPC. */
int folded_frame_text(char *buf, size_t len, size_t cap, const struct frame *frame);

/* Heap bytes the profile's counts use (not its shared stack table). */
size_t folded_profile_memory(const struct folded_profile *profile);

/* A profile's stacks merged by their text into a tree of frame texts: what
 * the folded file and its flame graph page are written from.  Stacks that
 * read the same share one path (two processes with one label, a symbol in
 * two copies of a library), and so do callers they share.  Building it
 * walks each stack only up to the first caller placed before and makes
 * each distinct name's text once; it holds a few words per node. */
struct folded_tree;

/* NULL with errno ENOMEM. */
struct folded_tree *folded_tree_build(const struct folded_profile *profile);
void folded_tree_free(struct folded_tree *tree);

/* A tree can also be built in steps, from saved trees and profiles of
 * different stack tables: what a long recording does once it has started
 * its stack table afresh (output/profile_outputs.h).  Stacks that read the
 * same merge, whichever step brought them.  new: NULL with errno ENOMEM;
 * add_profile: 0 or -ENOMEM.  Between steps the tree keeps an index of its
 * nodes (8 to 16 bytes a node); built gives it back once the steps are
 * done (folded_tree_build does so itself).  A step after built still
 * works: it makes the index again. */
struct folded_tree *folded_tree_new(void);
int folded_tree_add_profile(struct folded_tree *tree, const struct folded_profile *profile);
void folded_tree_built(struct folded_tree *tree);

/* The tree as bytes (*data malloc'd): its texts, each text's frame types
 * and its nodes with their counts, exact (no unit), independent of any
 * stack table, in one order for the same counts however they were added
 * (texts and siblings sorted), so that saved trees merge as streams.
 * 0 or -ENOMEM. */
int folded_tree_save(const struct folded_tree *tree, void **data, size_t *len);
/* Adds what folded_tree_save gave.  0, -ENOMEM, or -EINVAL for bytes that
 * are not a saved tree (cut short, an index out of range, out of order);
 * the tree may then hold part of them. */
int folded_tree_add_saved(struct folded_tree *tree, const void *data, size_t len);

/* The same through a spill file, a buffer at a time: the whole saved tree
 * is never in memory.  save: *ref is where it lies; 0 or -errno (-ENOMEM,
 * or the spill file's error, which it reported).  add: as add_saved, or
 * the read's -errno. */
int folded_tree_save_spill(const struct folded_tree *tree, struct spill_file *spill,
			   struct spill_ref *ref);
int folded_tree_add_spilled(struct folded_tree *tree, struct spill_file *spill,
			    const struct spill_ref *ref);

/* Saves in spill the merge of the saved trees at a and b (*out), reading
 * both as streams: it holds a few words per distinct text and per stack
 * level, not the trees, and costs time in proportion to their bytes.  A
 * stack in both has its counts summed, a text its types joined.  0, or
 * -EINVAL (a or b is not a saved tree), -ENOMEM, or a read's or write's
 * -errno; on failure nothing is saved. */
int folded_saved_merge(struct spill_file *spill, const struct spill_ref *a,
		       const struct spill_ref *b, struct spill_ref *out);

/* A saved tree written without building it, as a stop writes a long
 * recording's outputs: memory holds its texts, not its nodes.  All three
 * read it from spill as a stream and give 0, -EINVAL (not a saved tree),
 * -ENOMEM or the read's -errno.
 *
 * total: the sum of its counts, each node's divided by unit (rounded to
 * nearest), as a flame graph's root has them. */
int folded_saved_total(struct spill_file *spill, const struct spill_ref *ref, uint64_t unit,
		       uint64_t *total);
/* Visits, callers first, the nodes whose subtree counts at least min_total
 * (at least 1) in units: depth 1 under the root, each node's own count and
 * its subtree's (the nodes left out included) in units, its type as
 * folded_tree_foreach gives it.  Siblings come in the saved order (by
 * text), not first seen first.  It reads the tree twice and holds two
 * numbers for each node it visits.  *counted (counted may be NULL): the
 * nodes whose subtree counts at least 1, visited or not.  Stops when fn
 * returns non-zero and returns that. */
int folded_saved_foreach(struct spill_file *spill, const struct spill_ref *ref, uint64_t unit,
			 uint64_t min_total,
			 int (*fn)(uint32_t depth, const char *text, size_t len, int type,
				   uint64_t self, uint64_t total, void *ctx),
			 void *ctx, uint64_t *counted);
/* Writes the folded file as folded_tree_write does, lines in the saved
 * order; 0 or -errno, with a message, but for -EINVAL: the caller knows
 * what the tree was and says so (no file is then left). */
int folded_saved_write(struct spill_file *spill, const struct spill_ref *ref, const char *path,
		       uint64_t unit);

/* The flame graph tree a page is written from (output/flame_page.h),
 * frames typed as the recording saw them; NULL with *err.  Of a text tree:
 * every node.  Of a saved tree as it streams: only the nodes a page of
 * min_width_pct shows, with their counts and the number left out, so
 * that the page is the same as from the whole tree, and memory holds the
 * page, not every stack (folded_saved_foreach). */
struct flame_tree;
struct flame_tree *folded_tree_flame(const struct folded_tree *tree, uint64_t unit, int *err);
struct flame_tree *folded_saved_flame(struct spill_file *spill, const struct spill_ref *ref,
				      uint64_t unit, double min_width_pct, int *err);

/* Nodes are numbered 0 (the root, above every stack) to count - 1. */
size_t folded_tree_node_count(const struct folded_tree *tree);

/* Visits the nodes callers first (first seen first), each with its own
 * frame text, the type its frames were recorded with (the likeliest when
 * several: JIT before inlined before interpreted; -1 for root labels and
 * threads) and its own count divided by unit (rounded to nearest).
 * Subtrees whose counts all round to zero are left out.  Stops when fn
 * returns non-zero and returns that; -ENOMEM. */
int folded_tree_foreach(const struct folded_tree *tree, uint64_t unit,
			int (*fn)(uint32_t node, uint32_t parent, const char *text, size_t len,
				  int type, uint64_t self, void *ctx),
			void *ctx);

/* Writes the tree as folded text to path (through a temporary file and
 * rename, so a reader never sees half a file), every count divided by
 * unit; lines that round to zero are left out.  0 or -errno, with a
 * message. */
int folded_tree_write(const struct folded_tree *tree, const char *path, uint64_t unit);

/* Builds the tree and writes it: 0 or -errno, with a message. */
int folded_profile_write(const struct folded_profile *profile, const char *path);
/* Same, with every count divided by unit (rounded to nearest). For
 * profiles accumulated in nanoseconds. */
int folded_profile_write_scaled(const struct folded_profile *profile, const char *path,
				uint64_t unit);

#endif
