/* executor_outputs.h - files each sample of a selected Spark executor under
 * its executor's and its stage's outputs.
 *
 * Outputs: APP/exec-ID/all, APP/exec-ID/stage-S (stage-S.A for attempt
 * A > 0) and APP/exec-ID/no-stage, each labelled (app, executor, stage,
 * attempt, attribution, host, frequency) for JFR readers.
 */
#ifndef SPARKPROF_EXECUTOR_OUTPUTS_H
#define SPARKPROF_EXECUTOR_OUTPUTS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/sample.h"
#include "spark/stage_epoch.h"

struct executor;
struct profile_outputs;

struct executor_outputs;

/* host and frequency_hz label every output. NULL when out of memory. */
struct executor_outputs *executor_outputs_new(struct profile_outputs *outputs, const char *host,
					      unsigned frequency_hz);
void executor_outputs_free(struct executor_outputs *eo);

/* Files s of executor e (selected) under APP/exec-ID/all and its stage. */
void executor_outputs_add(struct executor_outputs *eo, struct executor *e,
			  const struct resolved_sample *s);

/* A stage's output name within its executor's folder: "stage-3",
 * "stage-3.1" or "no-stage". */
void executor_stage_output_name(struct stage_key stage, char *buf, size_t size);

#endif
