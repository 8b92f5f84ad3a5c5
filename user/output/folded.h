/* folded.h - one frame as text in the folded format of FlameGraph and
 * async-profiler: stacks are lines of frames, root first, separated by
 * ';', then a space and the count. Kernel frames carry the suffix "_[k]".
 * The store (output/segment_rows.h) and the views (output/views.h) write
 * the lines.
 */
#ifndef SPARKPROF_FOLDED_H
#define SPARKPROF_FOLDED_H

#include <stddef.h>

#include "base/frame.h"

/* Appends one frame's folded text to buf (len bytes used, cap in all):
 * the name with ';' and newlines replaced (they would split the line),
 * "[unknown]" for an empty name, and the "_[k]" suffix for kernel frames.
 * Returns the new length, or -ENOSPC (what fits is kept). */
int folded_frame_text(char *buf, size_t len, size_t cap, const struct frame *frame);

#endif
