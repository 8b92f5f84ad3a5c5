/* pb.c - see pb.h. */
#include <stdlib.h>
#include <string.h>

#include "output/pb.h"

void pb_reserve(struct pb *b, size_t n)
{
	size_t cap;
	uint8_t *d;

	if (b->failed || b->len + n <= b->cap)
		return;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	d = realloc(b->data, cap);
	if (!d) {
		b->failed = true;
		return;
	}
	b->data = d;
	b->cap = cap;
}

void pb_varint(struct pb *b, uint64_t v)
{
	pb_reserve(b, 10);
	if (b->failed)
		return;
	do {
		b->data[b->len++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

void pb_tag(struct pb *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	pb_tag(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len)
{
	pb_tag(b, field, WIRE_LEN);
	pb_varint(b, len);
	pb_reserve(b, len);
	if (b->failed)
		return;
	memcpy(b->data + b->len, data, len);
	b->len += len;
}

/* A nested message, built in a scratch buffer that is then emptied. */
void pb_message(struct pb *b, unsigned field, struct pb *msg)
{
	if (msg->failed)
		b->failed = true;
	pb_bytes(b, field, msg->data, msg->len);
	msg->len = 0;
}

