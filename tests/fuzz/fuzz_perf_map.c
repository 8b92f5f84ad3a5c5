/* fuzz_perf_map.c - the plain perf map parser and lookup on any bytes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbols/perf_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_map *m = perf_map_parse((const char *)data, size);
	if (!m)
		return 0;
	size_t seen = 0;
	uint64_t probes[] = { 0, 1, 0x1000, 0x7f0000001010, UINT64_MAX };
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		struct frame f;
		if (perf_map_lookup(m, probes[i], &f))
			seen += strlen(f.name);
	}
	seen += perf_map_get_stats(m)->entries + perf_map_get_stats(m)->malformed;
	perf_map_free(m);
	return seen == (size_t)-1;
}
