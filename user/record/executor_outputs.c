/* executor_outputs.c - see executor_outputs.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/version.h"
#include "output/profile_outputs.h"
#include "record/executor_outputs.h"
#include "spark/executor_stages.h"
#include "spark/spark_executor.h"

/* Where an executor's last sample went.  An output is found by its name,
 * and making that text and its labels (seven snprintf calls) and hashing
 * it cost more than the rest of filing a sample.  An entry is matched by
 * the ids the name is made of, not by the executor's address, which a
 * later executor may get. */
struct recent_outputs {
	char app_id[SPARK_ID_MAX], executor_id[SPARK_ID_MAX];
	struct profile_output *all, *stage_output;
	struct stage_key stage;
};

#define RECENT_SLOTS 8 /* executors on a node, most often fewer */

struct executor_outputs {
	struct profile_outputs *outputs;
	uint64_t generation;    /* the outputs' when recent[] was filled */
	char host[256];
	char frequency[16];
	struct recent_outputs recent[RECENT_SLOTS];
};

struct executor_outputs *executor_outputs_new(struct profile_outputs *outputs, const char *host,
					      unsigned frequency_hz)
{
	struct executor_outputs *eo = calloc(1, sizeof(*eo));

	if (!eo)
		return NULL;
	eo->outputs = outputs;
	snprintf(eo->host, sizeof(eo->host), "%s", host);
	snprintf(eo->frequency, sizeof(eo->frequency), "%u", frequency_hz);
	return eo;
}

void executor_outputs_free(struct executor_outputs *eo)
{
	free(eo);
}

void executor_stage_output_name(struct stage_key stage, char *buf, size_t size)
{
	if (stage_key_is_none(stage))
		snprintf(buf, size, "no-stage");
	else if (stage.attempt > 0)
		snprintf(buf, size, "stage-%d.%d", stage.stage, stage.attempt);
	else
		snprintf(buf, size, "stage-%d", stage.stage);
}

/* whole_executor: APP/exec-ID/all, else the stage's output. */
static struct profile_output *output_for(struct executor_outputs *eo, const struct executor *e,
					 struct stage_key stage, bool whole_executor)
{
	const struct spark_executor *id = executor_identity(e);
	char name[512], stage_text[32], attempt_text[16];
	struct output_label labels[] = {
		{ "sparkprof.version", SPARKPROF_VERSION },
		{ "host", eo->host },
		{ "spark.app.id", id->app_id },
		{ "spark.executor.id", id->executor_id },
		{ "spark.stage", stage_text },
		{ "spark.stage.attempt", attempt_text },
		{ "attribution", attribution_mode_name(executor_attribution_mode(e)) },
		{ "frequency.hz", eo->frequency },
	};
	/* Ids are at most SPARK_ID_MAX bytes each: the prefix fits in name. */
	int n = snprintf(name, sizeof(name), "%s/exec-%s/",
			 id->app_id[0] ? id->app_id : "unknown-app", id->executor_id);

	if (whole_executor) {
		snprintf(name + n, sizeof(name) - (size_t)n, "all");
		snprintf(stage_text, sizeof(stage_text), "all");
	} else {
		executor_stage_output_name(stage, name + n, sizeof(name) - (size_t)n);
		if (stage_key_is_none(stage))
			snprintf(stage_text, sizeof(stage_text), "none");
		else
			snprintf(stage_text, sizeof(stage_text), "%d", stage.stage);
	}
	snprintf(attempt_text, sizeof(attempt_text), "%d",
		 whole_executor || stage_key_is_none(stage) ? 0 : stage.attempt);
	return profile_outputs_get(eo->outputs, name, labels, sizeof(labels) / sizeof(labels[0]));
}

/* e's entry, emptied first when it held another executor's outputs.
 * Every entry is emptied when outputs left memory: one may be gone. */
static struct recent_outputs *recent_for(struct executor_outputs *eo, const struct executor *e)
{
	const struct spark_executor *id = executor_identity(e);
	uint64_t generation = profile_outputs_generation(eo->outputs);
	struct recent_outputs *r =
		&eo->recent[((uintptr_t)e * 0x9e3779b97f4a7c15ull >> 32) % RECENT_SLOTS];

	if (generation != eo->generation) {
		memset(eo->recent, 0, sizeof(eo->recent));
		eo->generation = generation;
	}
	if (strcmp(r->app_id, id->app_id) || strcmp(r->executor_id, id->executor_id)) {
		memset(r, 0, sizeof(*r));
		snprintf(r->app_id, sizeof(r->app_id), "%s", id->app_id);
		snprintf(r->executor_id, sizeof(r->executor_id), "%s", id->executor_id);
	}
	return r;
}

void executor_outputs_add(struct executor_outputs *eo, struct executor *e,
			  const struct resolved_sample *s)
{
	struct stage_attribution_result result = executor_sample_stage(e, s);
	struct recent_outputs *r = recent_for(eo, e);

	if (!r->all)
		r->all = output_for(eo, e, result.stage, true);
	if (r->all)
		profile_output_add(eo->outputs, r->all, s);
	r = recent_for(eo, e);   /* that add may have retired the stage's output */
	if (!r->stage_output || !stage_key_eq(r->stage, result.stage)) {
		r->stage_output = output_for(eo, e, result.stage, false);
		r->stage = result.stage;
	}
	if (r->stage_output)
		profile_output_add(eo->outputs, r->stage_output, s);
}
