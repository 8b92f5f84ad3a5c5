/* perf_map_writer.h - keeps /tmp/perf-PID.map equal to the live code table.
 *
 * The map is rendered under the publisher lock, written to a fresh file
 * created exclusively beside it, and renamed over the map, so perf (or
 * anyone) never reads a half-written map and a symlink planted at the map's
 * name is replaced, never followed.
 */
#ifndef SPARKPROF_AGENT_PERF_MAP_WRITER_H
#define SPARKPROF_AGENT_PERF_MAP_WRITER_H

#include <stdint.h>

struct code_table;
struct publisher;

/* Rewrites the map if code changed since *generation (pass a pointer to
 * UINT64_MAX to force); updates *generation.  pub's lock guards code.
 * Returns 0 or -errno. */
int perf_map_write(struct publisher *pub, const struct code_table *code, uint64_t *generation);

#endif
