/* jit_code.h - a JVM's JIT code blobs over time (load and unload times,
 * inlined frames) and the rule that names an address at a time.
 *
 * Naming rule (why an answer can be "unknown"): the helper learns of
 * compiled code from HotSpot's ServiceThread, after the fact.  A method's
 * load record is stamped after it could first run, and its unload record
 * after it stopped running, when its memory may already hold new code.  So
 * jit_code_resolve() names an address at time ts only when exactly one
 * blob covered it at ts, and answers 0 (unknown) when:
 *   - ts is before the blob's load record (install lag: unknown, not wrong);
 *   - the blob was later unloaded and another blob reused the address, and
 *     ts lies within SPARKPROF_HELPER_REUSE_GUARD_NS before the unload
 *     record (the memory may already have held the newer code);
 *   - the blob's end is known only because a newer blob overlapped it (no
 *     unload record), for any ts: we cannot tell when it died.
 * Names are the caller's, interned (equal names one pointer) and valid as
 * long as the store.
 */
#ifndef SPARKPROF_JIT_CODE_H
#define SPARKPROF_JIT_CODE_H

#include <stdint.h>

#include "base/frame.h"

struct jit_code;

/* NULL with errno ENOMEM. */
struct jit_code *jit_code_new(void);
void jit_code_free(struct jit_code *jc);

/* Blob id (ids increase) covers [start, start + size) from ts on: a
 * compiled method (is_method) or another blob (a stub, the interpreter).
 * It ends the live blobs it overlaps, except that a stub repeating a live
 * stub's range and name is the same stub published again.  0, -EINVAL
 * (empty or wrapping range, id not increasing), or -ENOMEM. */
int jit_code_add(struct jit_code *jc, int is_method, uint64_t ts, uint64_t id,
		 uint64_t start, uint64_t size, const char *name);

/* Blob id was unloaded at ts.  0, or -EINVAL when id is not live, is a
 * repeated stub, or was loaded after ts. */
int jit_code_unload(struct jit_code *jc, uint64_t ts, uint64_t id);

/* The frames inlined at PCs [start, end) of compiled method id, innermost
 * first; id must be the newest blob, ranges added in address order.  0,
 * -EINVAL, or -ENOMEM. */
int jit_code_add_inline(struct jit_code *jc, uint64_t id, uint64_t start, uint64_t end,
			const char *const *names, unsigned depth);

/* The start of compiled method id when it is the newest blob (the one I
 * and J records may follow): 0, or -EINVAL. */
int jit_code_newest_method_start(const struct jit_code *jc, uint64_t id, uint64_t *start);

/* Names addr at ts: fills up to max frames, innermost first (inlined
 * frames FRAME_INLINED, then the method FRAME_JIT; the interpreter is one
 * FRAME_INTERPRETED "Interpreter"; other stubs FRAME_NATIVE).  Returns the
 * number of frames, 0 when unknown (see the rule above).  If max is smaller
 * than the inline depth, the outermost frames are kept. */
int jit_code_resolve(struct jit_code *jc, uint64_t addr, uint64_t ts, struct frame *out, int max);

/* Drops the blobs (and their inlined frames) that ended before ts, except
 * the newest: a sample at ts or later resolves as before, and an older one
 * that would have hit them resolves to 0 (unknown), never to other code
 * (blobs covering one address live at disjoint times).  Returns how many
 * were dropped.  Without it a JVM that keeps compiling and unloading grows
 * the store for as long as it runs. */
size_t jit_code_forget(struct jit_code *jc, uint64_t ts);

/* Blobs held, and how many of them have ended. */
size_t jit_code_blobs(const struct jit_code *jc, size_t *ended);

/* Heap bytes the store holds (not the names: the caller's). */
size_t jit_code_memory(const struct jit_code *jc);

/* Whether any blob ever added covers addr. */
int jit_code_covers(struct jit_code *jc, uint64_t addr);

#endif
