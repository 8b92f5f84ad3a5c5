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
 * first; id must be the newest blob (or the one the loader is filling),
 * ranges added in address order.  0, -EINVAL, or -ENOMEM. */
int jit_code_add_inline(struct jit_code *jc, uint64_t id, uint64_t start, uint64_t end,
			const char *const *names, unsigned depth);

/* The start of compiled method id when I and J records may go to it (see
 * jit_code_add_inline): 0, or -EINVAL. */
int jit_code_inline_method_start(const struct jit_code *jc, uint64_t id, uint64_t *start);

/* Deferred inlined frames.  An executor publishes hundreds of thousands of
 * inlined ranges, for methods most of which are never sampled.  A reader
 * with a file may note where a method's
 * records lie instead of adding them; the first lookup that lands in the
 * method calls the loader, which reads them back and adds them with
 * jit_code_add_inline (id is then the method being loaded).  Once called,
 * the method is not again unless its frames are trimmed: frames the loader
 * could not add are left out. */
typedef void (*jit_code_inline_loader)(void *ctx, uint64_t id, uint32_t offset,
				       uint32_t length);
void jit_code_set_inline_loader(struct jit_code *jc, jit_code_inline_loader fn, void *ctx);

/* Compiled method id's inlined frames are at [offset, offset + length) of
 * the reader's file; a later call replaces the place (a new file restating
 * live code).  0; -EEXIST when its frames are loaded already (the place is
 * still noted, to read them back after jit_code_trim_inline); -EINVAL when
 * id is no compiled method or there is no loader. */
int jit_code_defer_inline(struct jit_code *jc, uint64_t id, uint32_t offset, uint32_t length);

/* Loads the deferred frames of every method that has ended, before the
 * reader's file changes: a new file restates live code only.  Returns how
 * many methods were loaded. */
size_t jit_code_load_ended(struct jit_code *jc);

/* Frames read back are a cache.  When the inlined frames held take more
 * than budget bytes, those of methods no lookup has landed in since the
 * last call are dropped, to be read back if one does; only methods whose
 * records are still where the loader reads them (the reader's current
 * file).  Returns how many methods were dropped. */
size_t jit_code_trim_inline(struct jit_code *jc, size_t budget);

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

/* The same by part, for -v: where a JIT store's memory goes. */
struct jit_code_usage {
	size_t blobs, ended, ranges;          /* how many */
	size_t frames;                        /* nodes of the inlined frames' tree */
	size_t blob_bytes;                    /* blobs and the live list */
	size_t index_bytes;                   /* the address index */
	size_t inline_bytes;                  /* inlined ranges and their chains */
};
void jit_code_usage(const struct jit_code *jc, struct jit_code_usage *u);

/* Whether any blob ever added covers addr. */
int jit_code_covers(struct jit_code *jc, uint64_t addr);

#endif
