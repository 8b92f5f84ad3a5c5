/* hash.h - FNV-1a over bytes: the one hash of names and keys. */
#ifndef SPARKPROF_HASH_H
#define SPARKPROF_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_INIT 0xcbf29ce484222325ULL

/* h carried on over len bytes at data (start from FNV1A_INIT). */
static inline uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

#endif
