/* fuzz_ns_tids.c - the NSpid/NStgid line parser on arbitrary status text. */
#include <stddef.h>
#include <stdint.h>

#include "proc/ns_tids.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pid_t a = ns_tids_parse_status((const char *)data, size, false);
	pid_t b = ns_tids_parse_status((const char *)data, size, true);

	/* Answers are ids or -1, never anything else. */
	if (a == 0 || a < -1 || b == 0 || b < -1)
		__builtin_trap();
	return 0;
}
