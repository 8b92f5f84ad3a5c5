/* jfr_buf.c - see jfr_buf.h. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "output/jfr/jfr_buf.h"

void jfr_buf_init(struct jfr_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void jfr_buf_free(struct jfr_buf *b)
{
	free(b->data);
	jfr_buf_init(b);
}

bool jfr_buf_reserve(struct jfr_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->failed)
		return false;
	if (n <= b->cap - b->len)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->failed = true;
			return false;
		}
		cap *= 2;
	}
	p = realloc(b->data, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void jfr_release_pages(void *p, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t to = ((uintptr_t)p + len) & ~(page - 1);

	/* Only pages wholly ours: the allocator's own words lie outside. */
	if (p && to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
}

void jfr_buf_release(struct jfr_buf *b)
{
	if (b->data)
		jfr_release_pages(b->data + b->len, b->cap - b->len);
}

void jfr_buf_put(struct jfr_buf *b, const void *p, size_t n)
{
	if (!n || !jfr_buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void jfr_buf_u8(struct jfr_buf *b, uint8_t v)
{
	if (!jfr_buf_reserve(b, 1))
		return;
	b->data[b->len++] = v;
}

void jfr_buf_be16(struct jfr_buf *b, uint16_t v)
{
	uint8_t out[2] = { v >> 8, v };

	jfr_buf_put(b, out, 2);
}

static void be64_store(uint8_t *out, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		out[i] = (uint8_t)v;
}

void jfr_buf_be64(struct jfr_buf *b, uint64_t v)
{
	uint8_t out[8];

	be64_store(out, v);
	jfr_buf_put(b, out, 8);
}

size_t jfr_varint_encode(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	/* Eight 7-bit groups with continuation bits, then a 9th byte that
	 * holds the last 8 bits as they are. */
	while (n < 8) {
		if (v < 0x80) {
			out[n++] = (uint8_t)v;
			return n;
		}
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

size_t jfr_varint_len(uint64_t v)
{
	size_t n = 1;

	while (n < 9 && v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

size_t jfr_varint_decode(const uint8_t *p, size_t len, uint64_t *v)
{
	uint64_t r = 0;

	for (size_t i = 0; i < len && i < 9; i++) {
		if (i == 8) {
			r |= (uint64_t)p[i] << 56;
			*v = r;
			return 9;
		}
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

void jfr_buf_varint_slow(struct jfr_buf *b, uint64_t v)
{
	if (!jfr_buf_reserve(b, JFR_VARINT_MAX))
		return;
	b->len += jfr_varint_encode(b->data + b->len, v);
}

void jfr_buf_string(struct jfr_buf *b, const char *s, size_t len)
{
	if (!s) {
		jfr_buf_u8(b, JFR_STR_NULL);
		return;
	}
	if (!len) {
		jfr_buf_u8(b, JFR_STR_EMPTY);
		return;
	}
	jfr_buf_u8(b, JFR_STR_UTF8);
	jfr_buf_varint(b, len);
	jfr_buf_put(b, s, len);
}

size_t jfr_event_size(size_t payload)
{
	size_t size = payload + 1;

	while (jfr_varint_len(size) + payload != size)
		size = jfr_varint_len(size) + payload;
	return size;
}
