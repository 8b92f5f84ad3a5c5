/* fuzz_proc_status.c - /proc/PID/status parser on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc_status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_status st;
	/* a heap copy of exactly size bytes, so ASan sees any overread */
	char *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (proc_status_parse(buf, size, &st) == 0) {
		if (memchr(st.name, '\0', sizeof(st.name)) == NULL)
			abort();
		if (st.nstgid_levels > PROC_STATUS_MAX_NS_LEVELS ||
		    st.nspid_levels > PROC_STATUS_MAX_NS_LEVELS)
			abort();
		if ((st.present & PROC_STATUS_NSTGID) && proc_status_ns_pid(&st) <= 0)
			abort();
		if ((st.present & PROC_STATUS_NSPID) ? proc_status_ns_tid(&st) <= 0
						     : proc_status_ns_tid(&st) != -1)
			abort();
		for (int s = 0; s <= 65; s++)
			(void)proc_status_catches(&st, s);
	}
	free(buf);
	return 0;
}
