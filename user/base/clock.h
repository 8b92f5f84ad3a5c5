/* clock.h - a clock's time in nanoseconds, the unit of every timestamp
 * the recording compares (BPF's bpf_ktime_get_ns is CLOCK_MONOTONIC). */
#ifndef SPARKPROF_CLOCK_H
#define SPARKPROF_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

#endif
