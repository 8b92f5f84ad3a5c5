/* fuzz_kallsyms.c - kallsyms_parse on arbitrary bytes; lookups must agree
 * with the table's own ordering. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbols/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms *ks = kallsyms_parse((const char *)data, size);
	uint64_t probe = 0;

	if (!ks)
		return 0;
	/* Probe addresses taken from the input's last bytes, and the edges. */
	if (size >= 8)
		memcpy(&probe, data + size - 8, 8);
	const uint64_t probes[] = { 0, 1, probe, probe - 1, probe + 1, UINT64_MAX,
				    0xffffffff81000000ull };
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		const char *name = kallsyms_lookup(ks, probes[i]);
		if (name && name[0] == '\0')
			__builtin_trap(); /* names are never empty */
	}
	kallsyms_free(ks);
	return 0;
}
