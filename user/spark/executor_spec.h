/* executor_spec.h - which executors `--executors SPEC` selects.
 *
 * SPEC is `*` (every executor), or a comma list whose items are an executor
 * id (`3`, `driver`) or an inclusive numeric range (`5-8`), as the RAPIDS
 * Accelerator's spark.rapids.flameGraph.executors accepts: `1,3,5-8,driver`.
 * Spaces around items are allowed.  The driver's local-mode executor
 * (`driver`) matches `*` or an explicit `driver`.
 */
#ifndef SPARKPROF_EXECUTOR_SPEC_H
#define SPARKPROF_EXECUTOR_SPEC_H

#include <stdbool.h>
#include <stddef.h>

struct executor_spec;

/* Parses len bytes at spec.  Returns 0 and sets *out, or -EINVAL and writes
 * one line naming the bad part to err (errlen bytes, always NUL-terminated
 * when errlen > 0), or -ENOMEM. */
int executor_spec_parse(const char *spec, size_t len, struct executor_spec **out,
			char *err, size_t errlen);

/* Whether the executor with this id (NUL-terminated, e.g. "7" or "driver")
 * is selected.  Numeric ids compare as numbers ("07" is 7). */
bool executor_spec_matches(const struct executor_spec *spec, const char *executor_id);

void executor_spec_free(struct executor_spec *spec);

#endif
