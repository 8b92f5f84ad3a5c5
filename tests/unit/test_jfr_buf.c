/* test_jfr_buf.c - JFR primitive encoders: varints, strings, sizes. */
#include <stdint.h>
#include <string.h>

#include "output/jfr/jfr_buf.h"
#include "tap.h"

static int bytes_are(const struct jfr_buf *b, const char *hex)
{
	char got[256] = "";

	for (size_t i = 0; i < b->len && i < 100; i++)
		sprintf(got + 2 * i, "%02x", b->data[i]);
	if (strcmp(got, hex))
		printf("#   got %s, want %s\n", got, hex);
	return !strcmp(got, hex);
}

static void check_varint(uint64_t v, const char *hex)
{
	struct jfr_buf b;
	uint64_t back = ~v;
	size_t n;

	jfr_buf_init(&b);
	jfr_buf_varint(&b, v);
	CHECK(bytes_are(&b, hex), "varint %llu encodes as %s", (unsigned long long)v, hex);
	CHECK(jfr_varint_len(v) == b.len, "varint_len(%llu) == %zu", (unsigned long long)v, b.len);
	n = jfr_varint_decode(b.data, b.len, &back);
	CHECK(n == b.len && back == v, "varint %llu decodes back", (unsigned long long)v);
	CHECK(jfr_varint_decode(b.data, b.len - 1, &back) == 0 || b.len == 9,
	      "truncated varint %llu is not decoded", (unsigned long long)v);
	jfr_buf_free(&b);
}

int main(void)
{
	struct jfr_buf b;

	check_varint(0, "00");
	check_varint(1, "01");
	check_varint(127, "7f");
	check_varint(128, "8001");
	check_varint(300, "ac02");
	check_varint(4242, "9221");
	check_varint(123466789000ULL, "88e1c6f9cb03");   /* from the format notes */
	check_varint((1ULL << 56) - 1, "ffffffffffffff7f");
	check_varint(1ULL << 56, "808080808080808001");
	/* The 9th byte carries the top 8 bits verbatim: -1 is nine 0xff. */
	check_varint(UINT64_MAX, "ffffffffffffffffff");
	check_varint(0x8000000000000000ULL, "808080808080808080");

	jfr_buf_init(&b);
	jfr_buf_varint32(&b, -1);
	CHECK(bytes_are(&b, "ffffffff0f"), "int -1 is the 5-byte 32-bit pattern");
	jfr_buf_clear(&b);

	jfr_buf_cstring(&b, NULL);
	jfr_buf_cstring(&b, "");
	jfr_buf_cstring(&b, "run");
	CHECK(bytes_are(&b, "0001030372756e"), "null, empty (encoding 1) and UTF-8 strings");
	jfr_buf_clear(&b);

	jfr_buf_string(&b, "\xc3\xa9t\xc3\xa9", 5);
	CHECK(bytes_are(&b, "0305c3a974c3a9"), "UTF-8 string length counts bytes");
	jfr_buf_clear(&b);

	jfr_buf_put(&b, "FLR", 4);
	jfr_buf_be16(&b, 2);
	jfr_buf_be64(&b, 0x0102030405060708ULL);
	CHECK(bytes_are(&b, "464c520000020102030405060708"),
	      "magic and big-endian fixed-width numbers");
	jfr_buf_free(&b);

	/* The size field counts itself, across the 1- to 2-byte boundary. */
	CHECK(jfr_event_size(10) == 11, "event size of a 10-byte payload is 11");
	CHECK(jfr_event_size(126) == 127, "event size 127 still fits one byte");
	CHECK(jfr_event_size(127) == 129, "payload 127 needs a 2-byte size (129)");
	CHECK(jfr_event_size(16381) == 16383, "payload 16381 -> 16383 (2 bytes)");
	CHECK(jfr_event_size(16382) == 16385, "payload 16382 -> 16385 (3 bytes)");
	for (size_t p = 1; p < 70000; p++) {
		size_t s = jfr_event_size(p);

		if (s != p + jfr_varint_len(s)) {
			CHECK(0, "event size consistent for payload %zu", p);
			break;
		}
		if (p == 69999)
			CHECK(1, "event size consistent for every payload below 70000");
	}

	/* Growth keeps the contents. */
	jfr_buf_init(&b);
	for (int i = 0; i < 100000; i++)
		jfr_buf_varint(&b, (uint64_t)i * 977);
	{
		size_t off = 0, bad = 0;

		for (int i = 0; i < 100000; i++) {
			uint64_t v;
			size_t n = jfr_varint_decode(b.data + off, b.len - off, &v);

			if (!n || v != (uint64_t)i * 977)
				bad++;
			off += n ? n : 1;
		}
		CHECK(!bad && off == b.len && !b.failed, "100000 varints survive buffer growth");
	}
	jfr_buf_free(&b);
	TAP_DONE();
}
