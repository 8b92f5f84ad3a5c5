/* fuzz_proc_stat.c - the /proc/PID/stat field parser on any bytes: the
 * starttime, and the field the first byte names (0 to 55). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc_stat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a heap copy of exactly size bytes, so ASan sees any overread */
	char *buf = malloc(size ? size : 1);
	uint64_t ticks, value;
	int field = size ? data[0] % 56 : 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (proc_stat_starttime(buf, size, &ticks) == 0 && !memchr(buf, ')', size))
		abort();   /* fields are found after the comm's ')' */
	if (proc_stat_field(buf, size, field, &value) == 0 && (field < 3 || !memchr(buf, ')', size)))
		abort();   /* fields 1 and 2 are not numbered past the ')' */
	free(buf);
	return 0;
}
