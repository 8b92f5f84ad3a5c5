/* pb.h - protobuf fields written by hand, for the pprof files (profile.proto
 * has a dozen fields). A buffer that cannot grow is marked failed and takes
 * nothing more: check once at the end. */
#ifndef SPARKPROF_PB_H
#define SPARKPROF_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

struct pb {
	uint8_t *data;
	size_t len, cap;
	bool failed;
};

void pb_reserve(struct pb *b, size_t n);
void pb_varint(struct pb *b, uint64_t v);
void pb_tag(struct pb *b, unsigned field, unsigned wire);
void pb_uint(struct pb *b, unsigned field, uint64_t v);
void pb_bytes(struct pb *b, unsigned field, const void *data, size_t len);
/* A nested message, built in a scratch buffer that is then emptied. */
void pb_message(struct pb *b, unsigned field, struct pb *msg);

#endif
