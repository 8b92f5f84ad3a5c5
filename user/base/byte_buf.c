/* byte_buf.c - see byte_buf.h. */
#include <stdlib.h>
#include <string.h>

#include "base/byte_buf.h"
#include "base/grow_array.h"

void byte_buf_free(struct byte_buf *b)
{
	free(b->data);
	*b = (struct byte_buf){ 0 };
}

void byte_buf_bytes(struct byte_buf *b, const void *p, size_t n)
{
	void *data = b->data;

	if (b->failed || !n)
		return;
	if (grow_array(&data, &b->cap, b->len + n, 1)) {
		b->failed = true;
		return;
	}
	b->data = data;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void byte_buf_u8(struct byte_buf *b, uint8_t v)
{
	byte_buf_bytes(b, &v, 1);
}

void byte_buf_varint(struct byte_buf *b, uint64_t v)
{
	uint8_t out[10];
	size_t n = 0;

	do {
		out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	byte_buf_bytes(b, out, n);
}

void byte_buf_str(struct byte_buf *b, const char *s, size_t n)
{
	byte_buf_varint(b, n);
	byte_buf_bytes(b, s, n);
}

uint8_t byte_reader_u8(struct byte_reader *r)
{
	if (r->p >= r->end) {
		r->failed = true;
		return 0;
	}
	return *r->p++;
}

uint64_t byte_reader_varint(struct byte_reader *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b = byte_reader_u8(r);

		if (r->failed)
			return 0;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->failed = true;
	return 0;
}

uint64_t byte_reader_bounded(struct byte_reader *r, uint64_t max)
{
	uint64_t v = byte_reader_varint(r);

	if (v > max) {
		r->failed = true;
		return 0;
	}
	return v;
}

const char *byte_reader_str(struct byte_reader *r, size_t max, size_t *n)
{
	size_t len = (size_t)byte_reader_bounded(r, max);
	const char *s = (const char *)r->p;

	*n = 0;
	if (r->failed || (size_t)(r->end - r->p) < len) {
		r->failed = true;
		return NULL;
	}
	r->p += len;
	*n = len;
	return s;
}
