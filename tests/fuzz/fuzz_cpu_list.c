/* fuzz_cpu_list.c - CPU lists ("0-3,5") from arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>

#include "sampler/cpu_list.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int cpus[256];
	int n = cpu_list_parse((const char *)data, size, cpus, 256);

	/* A parsed list ascends strictly and stays in range. */
	for (int i = 0; i < n; i++)
		if (cpus[i] < 0 || cpus[i] >= CPU_LIST_MAX || (i && cpus[i] <= cpus[i - 1]))
			__builtin_trap();
	return 0;
}
