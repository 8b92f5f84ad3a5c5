/* process_perf_map.h - anonymous executable code of a process that is not a
 * JVM (CPython 3.12+ with -X perf, node --perf-basic-prof), named by the
 * /tmp/perf-PID.map it writes. A secondary source: Python frames come from
 * the Python walker. The map is read when first needed and again, at most
 * once a second, when an address is not in it (writers append as they make
 * code); the names shown are copied, so a map can be replaced at any time.
 */
#ifndef SPARKPROF_PROCESS_PERF_MAP_H
#define SPARKPROF_PROCESS_PERF_MAP_H

#include <stdint.h>

#include "base/frame.h"
#include "record/process_table.h"

/* The names shown, for the whole recording. */
struct perf_map_names;
struct perf_map_names *perf_map_names_new(void);
void perf_map_names_free(struct perf_map_names *pn);
size_t perf_map_names_memory(const struct perf_map_names *pn);

/* What user_names.name_jit gets as its context. */
struct perf_map_ctx {
	struct perf_map_names *names;
	struct process *process;
};
/* user_names.name_jit for ctx (a struct perf_map_ctx). */
int process_perf_map_name(void *ctx, uint64_t addr, uint64_t ts, struct frame *out, int max);
/* Frees p's map (the process is gone). */
void process_perf_map_release(struct process *p);

#endif
