/* fuzz_python_code.c - CPython line tables and str heads, as read out of a
 * process (its memory is the user's), on any bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "python/python_code.h"
#include "python/python_layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a heap copy of exactly size bytes, so ASan sees any overread */
	uint8_t *buf = malloc(size ? size : 1), head[PYTHON_STR_HEAD] = { 0 };
	uint64_t off, n;
	unsigned width;
	char text[64];

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	for (uint32_t instr = 0; instr < 64; instr += 7) {
		python_line_of(buf, size, 1, instr, true);
		python_line_of(buf, size, 1, instr, false);
	}
	memcpy(head, buf, size < sizeof(head) ? size : sizeof(head));
	if (!python_str_layout(head, python_layout_of(12), &off, &n, &width)) {
		if (width != 1 && width != 2 && width != 4)
			abort();
		n = n < size / width ? n : size / width;
		if (python_str_utf8(buf, n, width, text, sizeof(text)) >= sizeof(text))
			abort();
	}
	free(buf);
	return 0;
}
