/* pprof.h - a flame_tree as a pprof profile (profile.proto, gzip'd), the
 * format of `go tool pprof`, Pyroscope, Parca and Grafana.
 *
 * One sample per distinct stack (its self count in column 0), locations
 * leaf first. One function and one location per (name, frame type): the
 * function's name is the frame's name, its system_name the folded text with
 * the type suffix (_[j], _[i], _[0], _[k]), and its filename the type
 * ("[jit]", "[inlined]", "[interpreted]", "[java]", "[kernel]", "[native]",
 * "[c++]"), so the types survive. No mappings or addresses. The bytes are
 * protobuf-c's, from proto/pprof/profile.proto (output/pprof_out.h).
 */
#ifndef SPARKPROF_PPROF_H
#define SPARKPROF_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "output/flame_tree.h"
#include "output/pprof_out.h"

/* A frame type's file name ("[jit]") and folded suffix ("_[j]"). */
extern const char *const pprof_type_files[FLAME_TYPES];
extern const char *const pprof_type_suffixes[FLAME_TYPES];

struct pprof_options {
	const char *sample_type;  /* "samples", "wall", "offcpu" */
	const char *unit;         /* "count" or "nanoseconds" */
	uint64_t multiplier;      /* value = count * multiplier (1 for samples) */
	uint64_t period;          /* e.g. ns between CPU samples; 0: none */
	const char *period_type, *period_unit; /* when period: e.g. "cpu", "nanoseconds" */
};

/* The uncompressed profile.proto bytes (malloc'd) in *out. 0 or -ENOMEM. */
int pprof_encode(const struct flame_tree *t, const struct pprof_options *o, uint8_t **out,
		 size_t *len);

/* Writes the gzip'd profile to path (atomically). 0 or -errno after a message. */
int pprof_write(const struct flame_tree *t, const struct pprof_options *o, const char *path);

#endif
