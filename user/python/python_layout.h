/* python_layout.h - where CPython 3.10 to 3.13 keep what a profiler reads:
 * the interpreter's threads and frames (for the BPF walker) and code
 * objects and strings (for naming frames in user space).
 *
 * Default x86-64 builds (GIL, release). The offsets differ between minor
 * versions and, before 3.13, are published nowhere in the process: they are
 * tables here (docs/python.md gives their sources). 3.13 publishes its own
 * (_Py_DebugOffsets); python_layout_check_313 compares them with the table.
 */
#ifndef SPARKPROF_PYTHON_LAYOUT_H
#define SPARKPROF_PYTHON_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sparkprof_events.h"

struct python_layout {
	int minor;                      /* 3.minor */
	uint16_t runtime_interpreters;  /* _PyRuntime.interpreters.head */
	struct sp_python_info walk;     /* the walker's offsets (addresses unset) */
	/* code objects */
	uint16_t co_firstlineno, co_filename, co_name, co_qualname, co_linetable;
	bool linetable_pairs;           /* 3.10's (bytes, line delta) pairs, else 3.11's entries */
	/* strings: compact ASCII data, compact non-ASCII data */
	uint16_t str_ascii_data, str_compact_data;
};

/* The layout of 3.minor, or NULL when unsupported. */
const struct python_layout *python_layout_of(int minor);

/* The first bytes of a 3.13 _PyRuntime (its _Py_DebugOffsets): whether they
 * are 3.13's cookie and version and agree with the table. */
bool python_layout_check_313(const uint8_t *debug_offsets, size_t len);

#endif
