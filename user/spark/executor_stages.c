/* executor_stages.c - see executor_stages.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/path_util.h"
#include "spark/executor_spec.h"
#include "spark/executor_stages.h"
#include "spark/task_thread_name.h"

#define MAX_EXECUTORS 1024

struct executor_stages {
	struct executor_stages_config cfg;
	struct executor_spec *spec;
	int nselected;
};

struct executor {
	struct spark_executor id;
	enum attribution_mode mode;
	struct stage_attribution *attribution; /* selected executors only */
};

struct executor_stages *executor_stages_new(const struct executor_stages_config *cfg)
{
	struct executor_stages *es = calloc(1, sizeof(*es));
	char err[256];

	if (!es)
		return NULL;
	es->cfg = *cfg;
	if (executor_spec_parse(cfg->executors, strlen(cfg->executors), &es->spec, err,
				sizeof(err))) {
		sp_err("--executors: %s", err);
		free(es);
		return NULL;
	}
	return es;
}

void executor_stages_free(struct executor_stages *es)
{
	if (!es)
		return;
	executor_spec_free(es->spec);
	free(es);
}

struct executor *executor_stages_inspect(struct executor_stages *es, pid_t pid)
{
	struct executor *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	if (spark_executor_identify(pid, &e->id) != 1) {
		free(e);
		return NULL;
	}
	sanitize_name_component(e->id.app_id);
	sanitize_name_component(e->id.executor_id);
	e->mode = es->cfg.mode;
	if (!executor_spec_matches(es->spec, e->id.executor_id) ||
	    (es->cfg.app_id && strcmp(es->cfg.app_id, e->id.app_id)))
		return e;
	if (es->nselected == MAX_EXECUTORS) {
		sp_warn("more than %d executors: pid %d is profiled only node-wide", MAX_EXECUTORS,
			pid);
		return e;
	}
	e->attribution = stage_attribution_new(e->mode, es->cfg.start_ns, es->cfg.epoch_interval_ns);
	if (!e->attribution) {
		sp_warn("stage tracking for executor %s (pid %d): %s", e->id.executor_id, pid,
			strerror(errno));
		return e;
	}
	es->nselected++;
	sp_info("executor %s of %s (pid %d)", e->id.executor_id, e->id.app_id, pid);
	return e;
}

void executor_free(struct executor *e)
{
	if (!e)
		return;
	stage_attribution_free(e->attribution);
	free(e);
}

const struct spark_executor *executor_identity(const struct executor *e)
{
	return &e->id;
}

bool executor_selected(const struct executor *e)
{
	return e->attribution != NULL;
}

enum attribution_mode executor_attribution_mode(const struct executor *e)
{
	return e->mode;
}

size_t executor_stages_memory(const struct executor *e)
{
	return e->attribution ? stage_attribution_memory(e->attribution) : 0;
}

size_t executor_forget_threads(struct executor *e, uint64_t now_ns)
{
	return e->attribution ? stage_attribution_forget_threads(e->attribution, now_ns) : 0;
}

uint64_t executor_tid_only_tasks(const struct executor *e)
{
	return e->attribution ? stage_attribution_tid_only_tasks(e->attribution) : 0;
}

uint64_t executor_late_thread_events(const struct executor *e)
{
	return e->attribution ? stage_attribution_late_events(e->attribution) : 0;
}

void executor_thread_event(struct executor *e, enum thread_event event, uint64_t ts, pid_t tid,
			   const char *name, size_t len)
{
	if (!e->attribution)
		return;
	switch (event) {
	case THREAD_EVENT_NAME:
		stage_attribution_thread_name(e->attribution, ts, tid, name, len);
		break;
	case THREAD_EVENT_IDLE:
		stage_attribution_thread_idle(e->attribution, ts, tid);
		break;
	case THREAD_EVENT_BUSY:
		stage_attribution_thread_busy(e->attribution, ts, tid);
		break;
	case THREAD_EVENT_EXIT:
		stage_attribution_thread_exit(e->attribution, ts, tid);
		break;
	}
}

bool executor_idle_task_thread(const char *name, int helper_idle)
{
	struct task_thread_name parsed;

	switch (task_thread_name_parse(name, strlen(name), &parsed)) {
	case TASK_THREAD_POOL:
	case TASK_THREAD_IDLE:
		return true;
	case TASK_THREAD_TASK:
	case TASK_THREAD_TASK_TID:
		return helper_idle == 1;
	default:
		return false;
	}
}

bool executor_runs_task(const char *name, int helper_idle)
{
	struct task_thread_name parsed;
	enum task_thread_kind kind = task_thread_name_parse(name, strlen(name), &parsed);

	return (kind == TASK_THREAD_TASK || kind == TASK_THREAD_TASK_TID) && helper_idle != 1;
}

struct stage_attribution_result executor_served_stage(struct executor *e,
						      const struct resolved_sample *s,
						      int64_t *task)
{
	struct stage_attribution_result result = { stage_key_none(), ATTRIBUTED_WORKER_EPOCH };

	*task = -1;
	if (e->attribution)
		stage_attribution_served(e->attribution, sample_lookup_time(s), &result, task);
	return result;
}

struct stage_attribution_result executor_sample_stage(struct executor *e,
						      const struct resolved_sample *s)
{
	struct stage_attribution_result result = { stage_key_none(), ATTRIBUTED_EPOCH };

	if (!e->attribution)
		return result;
	stage_attribution_sample(e->attribution, sample_lookup_time(s), s->ns_tid, NULL, 0,
				 &result);
	return result;
}
