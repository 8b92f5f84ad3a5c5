/* fuzz_proc_maps.c - proc_maps_parse on arbitrary bytes; the result must be
 * sorted, disjoint, non-empty ranges, and proc_maps_find must agree. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proc/proc_maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_maps *pm = proc_maps_parse((const char *)data, size);

	if (!pm)
		return 0;
	for (size_t i = 0; i < pm->count; i++) {
		const struct proc_map *m = &pm->maps[i];

		if (m->start >= m->end || (i && m->start < pm->maps[i - 1].end))
			__builtin_trap();
		if (strlen(m->path) > size || strlen(m->perms) != 4)
			__builtin_trap();
		if (proc_maps_find(pm, m->start) != m || proc_maps_find(pm, m->end - 1) != m)
			__builtin_trap();
	}
	if (pm->count && proc_maps_find(pm, pm->maps[0].start - 1) &&
	    pm->maps[0].start != 0)
		__builtin_trap();
	proc_maps_free(pm);
	return 0;
}
