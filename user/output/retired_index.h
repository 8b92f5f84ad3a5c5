/* retired_index.h - where the outputs that left memory are, for a
 * recording of any length: the place of each output (by creation order,
 * seq) and which outputs may carry a name (by a 32-bit tag of its hash).
 *
 * Both live mostly in the spill file, so memory stays flat however many
 * outputs a run makes (a Spark application starts stages by the ten
 * thousand an hour; in memory they cost 36 bytes each, 60 MB a day):
 *  - places in pages of 4096; the few pages last used stay in memory;
 *  - names in sorted runs, merged as a binary counter carries, with the
 *    first tag of each 4 KiB block in memory (a byte per 128 outputs),
 *    and the newest names in a small table in memory.
 * One thread uses an index.
 */
#ifndef SPARKPROF_RETIRED_INDEX_H
#define SPARKPROF_RETIRED_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "base/spill_file.h"

struct retired_index;

/* spill must outlive the index.  NULL with errno ENOMEM. */
struct retired_index *retired_index_new(struct spill_file *spill);
void retired_index_free(struct retired_index *ix);

/* Sets the place of seq, which must be at most one past the highest seq
 * set so far (a new output).  A place is any value but 0, which reads as
 * "none".  0, or -errno: -ENOMEM, -EIO for a page that does not read back
 * whole, or a failed read's (which the spill file reports once); the
 * caller says what it could not do. */
int retired_index_set_place(struct retired_index *ix, uint32_t seq, uint64_t place);
/* *place: what seq was set to, 0 for none.  0 or -errno as above. */
int retired_index_place(struct retired_index *ix, uint32_t seq, uint64_t *place);

/* Says that output seq may be called by a name of this tag: once per seq. */
int retired_index_add_name(struct retired_index *ix, uint32_t tag, uint32_t seq);
/* Calls fn with each seq added under tag until it returns non-zero, which
 * is returned; 0 when none did, or -errno when the names do not read back. */
int retired_index_find(struct retired_index *ix, uint32_t tag,
		       int (*fn)(uint32_t seq, void *ctx), void *ctx);

/* Heap bytes it holds. */
size_t retired_index_memory(const struct retired_index *ix);

#endif
