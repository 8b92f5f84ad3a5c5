/* byte_buf.h - bytes built up for a file, and bytes read back from one,
 * with the varints and strings the sample store's file is made of.
 *
 * A writer that cannot grow its buffer marks it failed and drops what
 * follows: the caller checks once at the end. A reader never reads past
 * its end: a read that does not fit marks it failed and gives zeros.
 */
#ifndef SPARKPROF_BYTE_BUF_H
#define SPARKPROF_BYTE_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct byte_buf {
	uint8_t *data;
	size_t len, cap;
	bool failed;
};

/* Keeps the room for reuse. */
static inline void byte_buf_clear(struct byte_buf *b)
{
	b->len = 0;
	b->failed = false;
}

void byte_buf_free(struct byte_buf *b);
void byte_buf_bytes(struct byte_buf *b, const void *p, size_t n);
void byte_buf_u8(struct byte_buf *b, uint8_t v);
/* LEB128: 7 bits a byte, low first. */
void byte_buf_varint(struct byte_buf *b, uint64_t v);
/* A varint length, then the bytes. */
void byte_buf_str(struct byte_buf *b, const char *s, size_t n);

struct byte_reader {
	const uint8_t *p, *end;
	bool failed;
};

static inline struct byte_reader byte_reader_of(const void *data, size_t len)
{
	return (struct byte_reader){ data, (const uint8_t *)data + len, false };
}

uint8_t byte_reader_u8(struct byte_reader *r);
uint64_t byte_reader_varint(struct byte_reader *r);
/* A varint no larger than max (else failed, and 0). */
uint64_t byte_reader_bounded(struct byte_reader *r, uint64_t max);
/* A string as byte_buf_str wrote it, at most max bytes: *n bytes at the
 * returned pointer, inside the reader's bytes (not NUL-terminated); NULL
 * and failed when it does not fit. */
const char *byte_reader_str(struct byte_reader *r, size_t max, size_t *n);

#endif
