/* folded.h - stacks aggregated in the folded format of FlameGraph and
 * async-profiler: one line per distinct stack, frames root first separated
 * by ';', a space, the count. Kernel frames carry the suffix "_[k]".
 *
 * A profile counts by stack id (base/stack_table.h): adding a sample of a
 * stack seen before allocates nothing and copies no text; the text of
 * each distinct stack is built once, when the profile is written.
 */
#ifndef SPARKPROF_FOLDED_H
#define SPARKPROF_FOLDED_H

#include <stddef.h>
#include <stdint.h>

#include "base/frame.h"
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

/* Adds `count` to stack id of the profile's stack table. 0 or -ENOMEM. */
int folded_profile_add_id(struct folded_profile *profile, uint32_t id, uint64_t count);

uint64_t folded_profile_total(const struct folded_profile *profile);

/* Visits every (stack id, count) in no set order; stops when fn returns
 * non-zero and returns that.  With folded_profile_add_id, a profile can be
 * parked outside memory and brought back (output/count_spill.h). */
int folded_profile_foreach_id(const struct folded_profile *profile,
			      int (*fn)(uint32_t id, uint64_t count, void *ctx), void *ctx);

/* Writes the profile to path (through a temporary file and rename, so a
 * reader never sees half a file). Returns 0 or -errno, with a message. */
int folded_profile_write(const struct folded_profile *profile, const char *path);

/* Same, with every count divided by unit (rounded to nearest); stacks that
 * round to zero are left out. For profiles accumulated in nanoseconds. */
int folded_profile_write_scaled(const struct folded_profile *profile, const char *path,
				uint64_t unit);

/* Appends one frame's folded text to buf: the name with ';' and newlines
 * replaced (they would split the line) and the "_[k]" suffix for kernel
 * frames. Returns the new length, or -ENOSPC. */
int folded_frame_text(char *buf, size_t len, size_t cap, const struct frame *frame);

/* Heap bytes the profile's counts use (not its shared stack table). */
size_t folded_profile_memory(const struct folded_profile *profile);

/* The type of the frames written as text (e.g. "java/lang/Thread.run"), or
 * -1 if none was. Names seen with several types get the likeliest (JIT
 * before inlined before interpreted). */
int folded_profile_frame_type(const struct folded_profile *profile, const char *text, size_t len);

/* Visits every stack with its count divided by unit (as written); stops
 * when fn returns non-zero and returns that. Stacks whose text reads the
 * same may come as several calls. */
int folded_profile_foreach(const struct folded_profile *profile, uint64_t unit,
			   int (*fn)(const char *stack, size_t len, uint64_t count, void *ctx),
			   void *ctx);

#endif
