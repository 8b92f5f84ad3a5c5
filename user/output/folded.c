/* folded.c - see folded.h. */
#include <errno.h>
#include <string.h>

#include "output/folded.h"

static int append_text(char *buf, size_t len, size_t cap, const char *text, int sanitize)
{
	size_t n = strlen(text);

	/* The common case in one copy; near the end of the buffer, byte by
	 * byte below, so that what fits is kept. */
	if (len + n + 1 < cap) {
		char *c = buf + len, *end = c + n;

		memcpy(c, text, n);
		/* ';' separates frames and '\n' ends the line: either inside a
		 * name would corrupt the file. */
		for (; sanitize && c < end; c++)
			if (*c == ';' || *c == '\n' || *c == '\r')
				*c = '_';
		*end = '\0';
		return (int)(len + n);
	}
	for (const char *c = text; *c; c++) {
		if (len + 1 >= cap)
			return -ENOSPC;
		/* ';' separates frames and '\n' ends the line: either inside a
		 * name would corrupt the file. */
		buf[len++] = sanitize && (*c == ';' || *c == '\n' || *c == '\r') ? '_' : *c;
	}
	buf[len] = '\0';
	return (int)len;
}

int folded_frame_text(char *buf, size_t len, size_t cap, const struct frame *frame)
{
	int n = append_text(buf, len, cap, frame->name && *frame->name ? frame->name : "[unknown]", 1);

	if (n >= 0 && frame->type == FRAME_KERNEL)
		n = append_text(buf, (size_t)n, cap, "_[k]", 0);
	else if (n >= 0 && frame->type == FRAME_PYTHON)
		n = append_text(buf, (size_t)n, cap, "_[p]", 0);
	return n;
}
