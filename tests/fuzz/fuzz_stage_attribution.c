/* fuzz_stage_attribution.c - the tracker is fed thread names and marks from
 * the helper's log, in whatever order and with whatever times it holds.
 *
 * Input: records of [op:1][dt:2][tid:1][len:1][name:len]; op picks rename,
 * idle, busy, exit or sample; dt advances (or, with the top bit, rewinds)
 * the clock in ms. */
#include <stdint.h>
#include <stdlib.h>

#include "spark/stage_attribution.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stage_attribution *sa;
	uint64_t ts = 1000000000ull;
	size_t i = 0;

	if (size < 1)
		return 0;
	sa = stage_attribution_new(data[0] & 1 ? ATTRIBUTION_EPOCH : ATTRIBUTION_THREAD, ts,
				   (uint64_t)(1 + (data[0] >> 1)) * 100000000ull);
	if (!sa)
		abort();
	i = 1;
	while (i + 5 <= size) {
		uint8_t op = data[i];
		uint16_t dt = (uint16_t)(data[i + 1] | data[i + 2] << 8);
		pid_t tid = data[i + 3];
		size_t len = data[i + 4];
		const char *name = (const char *)data + i + 5;
		struct stage_attribution_result r;

		if (len > size - i - 5)
			len = size - i - 5;
		i += 5 + len;
		if (dt & 0x8000)
			ts -= (uint64_t)(dt & 0x7fff) * 1000000ull;
		else
			ts += (uint64_t)dt * 1000000ull;
		switch (op % 6) {
		case 0: stage_attribution_thread_name(sa, ts, tid, name, len); break;
		case 1: stage_attribution_thread_idle(sa, ts, tid); break;
		case 2: stage_attribution_thread_busy(sa, ts, tid); break;
		case 3: stage_attribution_thread_exit(sa, ts, tid); break;
		case 4: stage_attribution_sample(sa, ts, tid, name, len, &r);
			if (r.how >= ATTRIBUTION_METHOD_MAX)
				abort();
			break;
		default: stage_attribution_sample(sa, ts, tid, NULL, 0, &r); break;
		}
	}
	stage_attribution_free(sa);
	return 0;
}
