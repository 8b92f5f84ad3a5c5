/* jfr_metadata.h - the metadata event of sparkprof's JFR files.
 *
 * The metadata declares every type and event type the files use (layout in
 * docs/jfr.md).  It is the same for every chunk of every file, so it is
 * built once; each chunk then emits it with its own start time.
 */
#ifndef SPARKPROF_JFR_METADATA_H
#define SPARKPROF_JFR_METADATA_H

#include <stdint.h>

#include "output/jfr/jfr_buf.h"

/* The metadata id written into every chunk.  Readers reuse a parsed
 * descriptor when the id repeats, which is right: ours never changes. */
#define JFR_METADATA_ID 1

/* The part of the metadata event after its startTime and duration fields
 * (metadataId, string table, element tree).  Built at the first call and
 * shared by every writer from then on, on any thread: a recording writes
 * many stage files, and building it for each costs CPU for the same bytes.
 * NULL when out of memory (a later call tries again). */
const struct jfr_buf *jfr_metadata_body(void);

/* Appends the whole metadata event (size, type 0, start_ticks, duration 0,
 * body) to out, given the body from jfr_metadata_body. */
void jfr_metadata_event(struct jfr_buf *out, const struct jfr_buf *body,
			uint64_t start_ticks);

#endif
