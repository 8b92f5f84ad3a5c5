/* python_code.c - see python_code.h. The formats: CPython's
 * Objects/locations.md (3.11 on) and PEP 626's pairs (3.10). */
#include <errno.h>
#include <string.h>

#include "python/python_code.h"

/* 3.10: (bytes, line delta) pairs over byte offsets; delta -128: no line. */
static int line_of_pairs(const uint8_t *t, size_t len, int line, uint32_t instr)
{
	uint64_t at = (uint64_t)instr * 2, start = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t delta = (int8_t)t[i + 1];
		uint64_t end = start + t[i];

		if (delta != -128)
			line += delta;
		if (at >= start && at < end)
			return delta == -128 ? 0 : line;
		start = end;
	}
	return 0;
}

/* Six bits a byte, least significant first; bit 6: more follow. */
static uint64_t varint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*i < len) {
		uint8_t b = t[(*i)++];

		if (shift < 60)
			v |= (uint64_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static int64_t svarint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = varint(t, len, i);

	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

/* 3.11 on: entries of a first byte 1CCCCLLL (code, length - 1 in code
 * units) and the code's own bytes. */
static int line_of_entries(const uint8_t *t, size_t len, int64_t line, uint32_t instr)
{
	uint64_t start = 0;
	size_t i = 0;

	while (i < len) {
		uint8_t b = t[i++];
		unsigned code = (b >> 3) & 15;
		uint64_t end = start + (b & 7) + 1;
		bool none = false;

		if (!(b & 128))
			return 0; /* not an entry's first byte: the table is not one */
		if (code == 15) {
			none = true;
		} else if (code == 14) {
			line += svarint(t, len, &i);
			for (int k = 0; k < 3; k++)
				varint(t, len, &i);
		} else if (code == 13) {
			line += svarint(t, len, &i);
		} else if (code >= 10) {
			line += code - 10;
			i += 2;
		} else {
			i += 1;
		}
		if (instr >= start && instr < end)
			return none || line < 0 || line > 0x7fffffff ? 0 : (int)line;
		start = end;
	}
	return 0;
}

int python_line_of(const uint8_t *table, size_t len, int firstlineno, uint32_t instr,
		   bool pairs)
{
	if (!table)
		return 0;
	return pairs ? line_of_pairs(table, len, firstlineno, instr)
		     : line_of_entries(table, len, firstlineno, instr);
}

/* PyASCIIObject: length at 16, state's low byte at 32: kind in bits 2-4,
 * compact bit 5, ascii bit 6 (the rest of the word is padding). */
int python_str_layout(const uint8_t *head, const struct python_layout *l, uint64_t *data_off,
		      uint64_t *nchars, unsigned *width)
{
	uint8_t state = head[32];
	unsigned kind = (state >> 2) & 7;
	int64_t n;

	memcpy(&n, head + 16, sizeof(n));
	if (!(state & 32) || (kind != 1 && kind != 2 && kind != 4) || n < 0)
		return -EPROTO;
	*nchars = (uint64_t)n;
	*width = kind;
	*data_off = state & 64 ? l->str_ascii_data : l->str_compact_data;
	return 0;
}

static size_t put_utf8(uint32_t c, char *out, size_t room)
{
	if (c == 0 || (c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
		c = '?';
	if (c < 0x80 && room >= 1) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800 && room >= 2) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 63));
		return 2;
	}
	if (c < 0x10000 && c >= 0x800 && room >= 3) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 63));
		out[2] = (char)(0x80 | (c & 63));
		return 3;
	}
	if (c >= 0x10000 && room >= 4) {
		out[0] = (char)(0xf0 | c >> 18);
		out[1] = (char)(0x80 | (c >> 12 & 63));
		out[2] = (char)(0x80 | (c >> 6 & 63));
		out[3] = (char)(0x80 | (c & 63));
		return 4;
	}
	return 0;
}

size_t python_str_utf8(const uint8_t *chars, size_t nchars, unsigned width, char *out, size_t cap)
{
	size_t w = 0;

	if (!cap)
		return 0;
	for (size_t i = 0; i < nchars; i++) {
		uint32_t c = 0;
		size_t put;

		memcpy(&c, chars + i * width, width); /* little-endian: x86-64 only */
		put = put_utf8(c, out + w, cap - 1 - w);
		if (!put)
			break;
		w += put;
	}
	out[w] = '\0';
	return w;
}
