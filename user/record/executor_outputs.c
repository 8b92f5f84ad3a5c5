/* executor_outputs.c - see executor_outputs.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/version.h"
#include "output/profile_outputs.h"
#include "record/executor_outputs.h"
#include "spark/executor_stages.h"

struct executor_outputs {
	struct profile_outputs *outputs;
	char host[256];
	char frequency[16];
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

void executor_outputs_add(struct executor_outputs *eo, struct executor *e,
			  const struct resolved_sample *s)
{
	struct stage_attribution_result result = executor_sample_stage(e, s);
	struct profile_output *out;

	out = output_for(eo, e, result.stage, true);
	if (out)
		profile_output_add(eo->outputs, out, s);
	out = output_for(eo, e, result.stage, false);
	if (out)
		profile_output_add(eo->outputs, out, s);
}
