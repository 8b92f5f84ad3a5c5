/* python_layout.c - see python_layout.h. */
#include <string.h>

#include "python/python_layout.h"

#define NONE SP_PY_NO_FIELD

static const struct python_layout layouts[] = {
	{ .minor = 10, .runtime_interpreters = 32,
	  .walk = { .interp_threads = 8, .tstate_next = 8, .tstate_tid = 176,
		    .tstate_frame = 24, .cframe_frame = NONE, .frame_previous = 24,
		    .frame_code = 32, .frame_instr = 96, .frame_owner = NONE,
		    .code_units = 0, .frame_bytes = 100, .tid_is_pthread = 1 },
	  .co_firstlineno = 40, .co_filename = 104, .co_name = 112, .co_qualname = 0,
	  .co_linetable = 120, .linetable_pairs = true,
	  .str_ascii_data = 48, .str_compact_data = 72 },
	{ .minor = 11, .runtime_interpreters = 40,
	  .walk = { .interp_threads = 16, .tstate_next = 8, .tstate_tid = 160,
		    .tstate_frame = 56, .cframe_frame = 8, .frame_previous = 48,
		    .frame_code = 32, .frame_instr = 56, .frame_owner = 69,
		    .code_units = 184, .frame_bytes = 72 },
	  .co_firstlineno = 72, .co_filename = 112, .co_name = 120, .co_qualname = 128,
	  .co_linetable = 136, .str_ascii_data = 48, .str_compact_data = 72 },
	{ .minor = 12, .runtime_interpreters = 40,
	  .walk = { .interp_threads = 72, .tstate_next = 8, .tstate_tid = 144,
		    .tstate_frame = 56, .cframe_frame = 0, .frame_previous = 8,
		    .frame_code = 0, .frame_instr = 56, .frame_owner = 70,
		    .code_units = 192, .frame_bytes = 72 },
	  .co_firstlineno = 68, .co_filename = 112, .co_name = 120, .co_qualname = 128,
	  .co_linetable = 136, .str_ascii_data = 40, .str_compact_data = 56 },
	{ .minor = 13, .runtime_interpreters = 632,
	  .walk = { .interp_threads = 7344, .tstate_next = 8, .tstate_tid = 160,
		    .tstate_frame = 72, .cframe_frame = NONE, .frame_previous = 8,
		    .frame_code = 0, .frame_instr = 56, .frame_owner = 70,
		    .code_units = 200, .frame_bytes = 72 },
	  .co_firstlineno = 68, .co_filename = 112, .co_name = 120, .co_qualname = 128,
	  .co_linetable = 136, .str_ascii_data = 40, .str_compact_data = 56 },
};

const struct python_layout *python_layout_of(int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/* _Py_DebugOffsets of 3.13: u64 words after the 8-byte cookie. */
enum {
	DO_VERSION = 1, DO_FREE_THREADED = 2, DO_INTERPRETERS_HEAD = 5, DO_THREADS_HEAD = 9,
	DO_TSTATE_NEXT = 21, DO_CURRENT_FRAME = 23, DO_NATIVE_THREAD_ID = 25,
	DO_FRAME_PREVIOUS = 29, DO_FRAME_EXECUTABLE = 30, DO_FRAME_INSTR_PTR = 31,
	DO_FRAME_OWNER = 33, DO_CODE_FILENAME = 35, DO_CODE_NAME = 36, DO_CODE_QUALNAME = 37,
	DO_CODE_LINETABLE = 38, DO_CODE_FIRSTLINENO = 39, DO_CODE_ADAPTIVE = 43, DO_WORDS = 44,
};

bool python_layout_check_313(const uint8_t *d, size_t len)
{
	const struct python_layout *l = python_layout_of(13);
	const struct { int word; uint64_t want; } fields[] = {
		{ DO_FREE_THREADED, 0 }, { DO_INTERPRETERS_HEAD, l->runtime_interpreters },
		{ DO_THREADS_HEAD, l->walk.interp_threads }, { DO_TSTATE_NEXT, l->walk.tstate_next },
		{ DO_CURRENT_FRAME, l->walk.tstate_frame },
		{ DO_NATIVE_THREAD_ID, l->walk.tstate_tid },
		{ DO_FRAME_PREVIOUS, l->walk.frame_previous },
		{ DO_FRAME_EXECUTABLE, l->walk.frame_code },
		{ DO_FRAME_INSTR_PTR, l->walk.frame_instr }, { DO_FRAME_OWNER, l->walk.frame_owner },
		{ DO_CODE_FILENAME, l->co_filename }, { DO_CODE_NAME, l->co_name },
		{ DO_CODE_QUALNAME, l->co_qualname }, { DO_CODE_LINETABLE, l->co_linetable },
		{ DO_CODE_FIRSTLINENO, l->co_firstlineno }, { DO_CODE_ADAPTIVE, l->walk.code_units },
	};
	uint64_t w[DO_WORDS];

	if (len < sizeof(w) || memcmp(d, "xdebugpy", 8))
		return false;
	memcpy(w, d, sizeof(w));
	if ((w[DO_VERSION] >> 16) != 0x030d)
		return false;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (w[fields[i].word] != fields[i].want)
			return false;
	return true;
}
