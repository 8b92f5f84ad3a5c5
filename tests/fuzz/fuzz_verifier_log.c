/* fuzz_verifier_log.c - the verifier's reason from arbitrary logs. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sampler/bpf_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[64];
	size_t n = verifier_reason((const char *)data, size, out, sizeof(out));

	/* One printable line, NUL-terminated, within the room. */
	if (n >= sizeof(out) || strlen(out) != n || memchr(out, '\n', n))
		__builtin_trap();
	return 0;
}
