/* fuzz_proc_stat.c - the /proc/PID/stat starttime parser on any bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc_stat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a heap copy of exactly size bytes, so ASan sees any overread */
	char *buf = malloc(size ? size : 1);
	uint64_t ticks;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (proc_stat_starttime(buf, size, &ticks) == 0 && !memchr(buf, ')', size))
		abort();   /* fields are found after the comm's ')' */
	free(buf);
	return 0;
}
