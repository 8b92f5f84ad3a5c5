/* perf_map.h - a plain /tmp/perf-PID.map: for JVMs without the sparkprof
 * helper (perf-map-agent, `jcmd PID Compiler.perfmap`, or the helper's own
 * map read by someone else), and for any other process that writes one
 * (CPython 3.12+ with -X perf, node --perf-basic-prof).
 *
 * Lines are "START SIZE name" in hex, with or without 0x.  A map is one
 * snapshot without times: when entries overlap (append-only writers after
 * code-cache reuse), the later line wins, and a name may be stale, which is
 * why the helper's log (jvm_helper_log.h) is preferred when there is one.
 * Malformed lines are skipped and counted.  What one map may cost is
 * bounded: 8 MiB of text (the end of a longer file) and 128 Ki entries (the
 * last ones), both counted in its stats.
 */
#ifndef SPARKPROF_PERF_MAP_H
#define SPARKPROF_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/frame.h"

struct perf_map;

/* Parses a map's text (trusts nothing).  NULL with errno ENOMEM, or EFBIG
 * for 4 GiB of text. */
struct perf_map *perf_map_parse(const char *buf, size_t len);

/* Reads /proc/PID/root/tmp/perf-<NSPID>.map (resolved inside the process's
 * root; owned by its user or root).  NULL with errno (ENOENT when there is
 * no map, EPERM when someone else's file sits there). */
struct perf_map *perf_map_open(pid_t pid);

void perf_map_free(struct perf_map *map);

/* Names addr: 1 and *out filled (name valid until perf_map_free; type
 * FRAME_INTERPRETED for "Interpreter", FRAME_PYTHON for CPython's "py::"
 * entries, FRAME_JIT for names that look like Java methods, FRAME_NATIVE for
 * other stubs), or 0. */
int perf_map_lookup(const struct perf_map *map, uint64_t addr, struct frame *out);

struct perf_map_stats {
	uint64_t entries;          /* kept */
	uint64_t malformed;        /* lines skipped */
	uint64_t entries_dropped;  /* older lines past the entry bound */
	uint64_t bytes_skipped;    /* of a file past the byte bound (its start) */
};
const struct perf_map_stats *perf_map_get_stats(const struct perf_map *map);

#endif
