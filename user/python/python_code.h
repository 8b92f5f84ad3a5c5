/* python_code.h - what CPython's code objects and strings say, decoded from
 * bytes read out of a process: the line of an instruction, and the text of
 * a str. Both take bytes a process controls: every length is bounded and
 * bad input gives "no line" or an error, never a read past the buffer.
 */
#ifndef SPARKPROF_PYTHON_CODE_H
#define SPARKPROF_PYTHON_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "python/python_layout.h"

/* The source line of code unit instr, from a code object's co_linetable
 * (table, len) and co_firstlineno; pairs: 3.10's format. 0 when the table
 * has none for it. */
int python_line_of(const uint8_t *table, size_t len, int firstlineno, uint32_t instr,
		   bool pairs);

/* A str object's first bytes (head, PYTHON_STR_HEAD of them): where its
 * characters are (*data_off from the object), how many, and their width in
 * bytes. 0, or -EPROTO when it is not a compact str. */
#define PYTHON_STR_HEAD 40
int python_str_layout(const uint8_t *head, const struct python_layout *l, uint64_t *data_off,
		      uint64_t *nchars, unsigned *width);

/* Characters of width 1, 2 or 4 to UTF-8 in out (cap bytes, NUL ended);
 * code points that are not characters read "?". Returns the bytes written. */
size_t python_str_utf8(const uint8_t *chars, size_t nchars, unsigned width, char *out, size_t cap);

#endif
