/* jfr_buf.h - a growable byte buffer with the JFR primitive encoders.
 *
 * JFR integers inside events, pools and metadata are LEB128-style varints of
 * at most 9 bytes (the 9th byte carries the top 8 bits verbatim); only the
 * 68-byte chunk header uses fixed-width big-endian numbers.  Strings start
 * with an encoding byte (docs/jfr.md, shared/docs/jfr-format.md §2).
 *
 * A buffer whose allocation failed remembers it (jfr_buf_failed) and ignores
 * further writes, so encoders can append freely and check once.
 */
#ifndef SPARKPROF_JFR_BUF_H
#define SPARKPROF_JFR_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct jfr_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	bool failed;          /* an allocation failed; contents are incomplete */
};

/* String encodings (first byte of an inline string). */
enum jfr_string_encoding {
	JFR_STR_NULL = 0,
	JFR_STR_EMPTY = 1,
	JFR_STR_POOL = 2,
	JFR_STR_UTF8 = 3,
};

#define JFR_VARINT_MAX 9

void jfr_buf_init(struct jfr_buf *b);
void jfr_buf_free(struct jfr_buf *b);
/* Forgets the contents, keeps the memory. */
static inline void jfr_buf_clear(struct jfr_buf *b) { b->len = 0; }
/* Hands the whole pages inside p[0..len) back to the kernel; they read as
 * zeros when next touched. The memory stays allocated, so refilling it
 * allocates nothing: a long recording's writer then holds between chunks
 * only what it uses, not its largest chunk's worth. */
void jfr_release_pages(void *p, size_t len);
/* The same for what lies past b's contents. */
void jfr_buf_release(struct jfr_buf *b);
/* Makes room for n more bytes; false (and b->failed) when out of memory. */
bool jfr_buf_reserve(struct jfr_buf *b, size_t n);

void jfr_buf_put(struct jfr_buf *b, const void *p, size_t n);
void jfr_buf_u8(struct jfr_buf *b, uint8_t v);
void jfr_buf_be16(struct jfr_buf *b, uint16_t v);
void jfr_buf_be64(struct jfr_buf *b, uint64_t v);
/* Encodes v into out (>= JFR_VARINT_MAX bytes); returns the length. */
size_t jfr_varint_encode(uint8_t *out, uint64_t v);
void jfr_buf_varint_slow(struct jfr_buf *b, uint64_t v);
/* long fields, sizes, keys, counts.  Inline: the sample path writes a few
 * hundred varints per stack. */
static inline void jfr_buf_varint(struct jfr_buf *b, uint64_t v)
{
	if (b->cap - b->len >= JFR_VARINT_MAX && !b->failed) {
		if (v < 0x80) {
			b->data[b->len++] = (uint8_t)v;
			return;
		}
		b->len += jfr_varint_encode(b->data + b->len, v);
		return;
	}
	jfr_buf_varint_slow(b, v);
}
/* int/short/char fields: the 32-bit pattern, so -1 takes 5 bytes, not 9
 * (async-profiler's int reader does not implement the 9-byte form). */
static inline void jfr_buf_varint32(struct jfr_buf *b, int32_t v)
{
	jfr_buf_varint(b, (uint32_t)v);
}
/* A java.lang.String value: NULL -> null, "" -> empty (encoding 1, never a
 * zero-length UTF-8 array: JDK readers return null for it), else UTF-8.
 * The bytes are written as given; callers pass valid UTF-8. */
void jfr_buf_string(struct jfr_buf *b, const char *s, size_t len);
static inline void jfr_buf_cstring(struct jfr_buf *b, const char *s)
{
	jfr_buf_string(b, s, s ? strlen(s) : 0);
}

/* Bytes jfr_varint_encode would write. */
size_t jfr_varint_len(uint64_t v);
/* The size field of an event whose other bytes number payload: the size
 * counts its own varint. */
size_t jfr_event_size(size_t payload);
/* Decodes a varint from (p, len); returns bytes used, 0 if truncated. */
size_t jfr_varint_decode(const uint8_t *p, size_t len, uint64_t *v);

#endif
