/* bench_clock.h - what the C benches measure with: a clock's seconds and a
 * field of /proc/self/status. */
#ifndef SPARKPROF_BENCH_CLOCK_H
#define SPARKPROF_BENCH_CLOCK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double seconds(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A field of /proc/self/status in KiB: "VmHWM:" (peak RSS), "VmRSS:"; 0
 * when it cannot be read. */
static inline long status_kib(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = 0;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			kib = atol(line + strlen(field));
	if (f)
		fclose(f);
	return kib;
}

#endif
