/* executor_routing.c - see executor_routing.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json_writer.h"
#include "base/log.h"
#include "base/path_util.h"
#include "base/version.h"
#include "jvm/jvm_helper_log.h"
#include "output/profile_outputs.h"
#include "record/process_table.h"
#include "spark/executor_routing.h"
#include "spark/executor_spec.h"
#include "spark/spark_executor.h"
#include "spark/stage_attribution.h"
#include "spark/task_thread_name.h"

#define MAX_EXECUTORS 1024

struct executor_routing {
	const struct record_options *opts;
	struct profile_outputs *outputs;
	struct executor_spec *spec;
	uint64_t start_ns;
	char host[256];
	struct process *executors[MAX_EXECUTORS]; /* selected, in order seen */
	int nexecutors;
};

struct executor_routing *executor_routing_new(const struct record_options *opts,
					      struct profile_outputs *outputs,
					      uint64_t start_monotonic_ns)
{
	struct executor_routing *r = calloc(1, sizeof(*r));
	char err[256];

	if (!r)
		return NULL;
	r->opts = opts;
	r->outputs = outputs;
	r->start_ns = start_monotonic_ns;
	if (executor_spec_parse(opts->executors, strlen(opts->executors), &r->spec, err,
				sizeof(err))) {
		sp_err("--executors: %s", err);
		free(r);
		return NULL;
	}
	if (gethostname(r->host, sizeof(r->host)))
		strcpy(r->host, "unknown");
	r->host[sizeof(r->host) - 1] = '\0';
	return r;
}

void executor_routing_free(struct executor_routing *r)
{
	if (!r)
		return;
	executor_spec_free(r->spec);
	free(r);
}

void executor_routing_inspect(struct executor_routing *r, struct process *p)
{
	struct spark_executor exec;
	enum attribution_mode mode;

	if (spark_executor_identify(p->pid, &exec) != 1)
		return;
	p->executor = malloc(sizeof(exec));
	if (!p->executor)
		return;
	*p->executor = exec;
	sanitize_name_component(p->executor->app_id);
	sanitize_name_component(p->executor->executor_id);
	if (!executor_spec_matches(r->spec, exec.executor_id) ||
	    (r->opts->app_id && strcmp(r->opts->app_id, exec.app_id)))
		return;
	if (r->nexecutors == MAX_EXECUTORS) {
		sp_warn("more than %d executors: pid %d is profiled only node-wide",
			MAX_EXECUTORS, p->pid);
		return;
	}
	mode = r->opts->attribution == ATTRIBUTION_OPT_EPOCH ? ATTRIBUTION_EPOCH
							     : ATTRIBUTION_THREAD;
	p->attribution = stage_attribution_new(mode, r->start_ns, r->opts->epoch_interval_ns);
	if (!p->attribution) {
		sp_warn("stage tracking for executor %s (pid %d): %s", exec.executor_id, p->pid,
			strerror(errno));
		return;
	}
	p->executor_selected = true;
	r->executors[r->nexecutors++] = p;
	sp_info("executor %s of %s (pid %d)", p->executor->executor_id, p->executor->app_id, p->pid);
}

void executor_routing_release(struct process *p)
{
	stage_attribution_free(p->attribution);
	p->attribution = NULL;
	free(p->executor);
	p->executor = NULL;
}

void executor_routing_thread_event(struct process *p, enum thread_event event, uint64_t ts,
				   pid_t tid, const char *name, size_t len)
{
	if (!p->attribution)
		return;
	switch (event) {
	case THREAD_EVENT_NAME:
		stage_attribution_thread_name(p->attribution, ts, tid, name, len);
		break;
	case THREAD_EVENT_IDLE:
		stage_attribution_thread_idle(p->attribution, ts, tid);
		break;
	case THREAD_EVENT_BUSY:
		stage_attribution_thread_busy(p->attribution, ts, tid);
		break;
	case THREAD_EVENT_EXIT:
		stage_attribution_thread_exit(p->attribution, ts, tid);
		break;
	}
}

/* "APP/exec-ID/" */
static int executor_prefix(char *buf, size_t size, const struct process *p)
{
	const char *app = p->executor->app_id[0] ? p->executor->app_id : "unknown-app";

	return snprintf(buf, size, "%s/exec-%s/", app, p->executor->executor_id);
}

static void stage_output_name(char *buf, size_t size, const struct process *p,
			      struct stage_key stage)
{
	int n = executor_prefix(buf, size, p);

	if (stage_key_is_none(stage))
		snprintf(buf + n, size - (size_t)n, "no-stage");
	else if (stage.attempt > 0)
		snprintf(buf + n, size - (size_t)n, "stage-%d.%d", stage.stage, stage.attempt);
	else
		snprintf(buf + n, size - (size_t)n, "stage-%d", stage.stage);
}

static struct profile_output *executor_output(struct executor_routing *r, struct process *p,
					      const char *name, struct stage_key stage,
					      bool whole_executor)
{
	char stage_text[32], attempt_text[16], freq[16];
	struct output_label labels[] = {
		{ "sparkprof.version", SPARKPROF_VERSION },
		{ "host", r->host },
		{ "spark.app.id", p->executor->app_id },
		{ "spark.executor.id", p->executor->executor_id },
		{ "spark.stage", stage_text },
		{ "spark.stage.attempt", attempt_text },
		{ "attribution", r->opts->attribution == ATTRIBUTION_OPT_EPOCH ? "epoch" : "thread" },
		{ "frequency.hz", freq },
	};

	if (whole_executor)
		snprintf(stage_text, sizeof(stage_text), "all");
	else if (stage_key_is_none(stage))
		snprintf(stage_text, sizeof(stage_text), "none");
	else
		snprintf(stage_text, sizeof(stage_text), "%d", stage.stage);
	snprintf(attempt_text, sizeof(attempt_text), "%d",
		 whole_executor || stage_key_is_none(stage) ? 0 : stage.attempt);
	snprintf(freq, sizeof(freq), "%u", r->opts->frequency_hz);
	return profile_outputs_get(r->outputs, name, labels, sizeof(labels) / sizeof(labels[0]));
}

bool executor_routing_idle_task_thread(const struct process *p, pid_t tid, uint64_t ts,
				       const char *name)
{
	struct task_thread_name parsed;

	switch (task_thread_name_parse(name, strlen(name), &parsed)) {
	case TASK_THREAD_POOL:
	case TASK_THREAD_IDLE:
		return true;
	case TASK_THREAD_TASK:
	case TASK_THREAD_TASK_TID:
		return p->helper && jvm_helper_log_thread_idle(p->helper, tid, ts) == 1;
	default:
		return false;
	}
}

static bool runs_a_task(const struct process *p, const struct resolved_sample *s)
{
	struct task_thread_name parsed;
	enum task_thread_kind kind = task_thread_name_parse(s->thread_name,
							    strlen(s->thread_name), &parsed);

	return (kind == TASK_THREAD_TASK || kind == TASK_THREAD_TASK_TID) &&
	       !executor_routing_idle_task_thread(p, s->ns_tid, sample_lookup_time(s),
						  s->thread_name);
}

void executor_routing_route(struct executor_routing *r, struct process *p,
			    const struct resolved_sample *s)
{
	struct stage_attribution_result result = { stage_key_none(), ATTRIBUTED_EPOCH };
	struct profile_output *out;
	char name[512];
	int prefix_len;

	if (!p->executor_selected)
		return;
	if (r->opts->threads == THREADS_TASKS && !runs_a_task(p, s))
		return;
	/* Without the helper the tracker is fed no thread names: the
	 * thread-name rule cannot apply and the epoch rule counts no task, so
	 * every sample lands in no-stage. */
	if (s->kind == SAMPLE_CPU)
		stage_attribution_sample(p->attribution, s->timestamp_ns, s->ns_tid, NULL, 0,
					 &result);
	else
		stage_attribution_off_cpu(p->attribution, sample_lookup_time(s), s->ns_tid, NULL, 0,
					  s->off_cpu_ns, &result);
	/* Ids are at most SPARK_ID_MAX bytes each: the prefix fits in name. */
	prefix_len = executor_prefix(name, sizeof(name), p);
	snprintf(name + prefix_len, sizeof(name) - (size_t)prefix_len, "all");
	out = executor_output(r, p, name, result.stage, true);
	if (out)
		profile_output_add(r->outputs, out, s);
	stage_output_name(name, sizeof(name), p, result.stage);
	out = executor_output(r, p, name, result.stage, false);
	if (out)
		profile_output_add(r->outputs, out, s);
}

static void write_executor(struct executor_routing *r, struct process *p, struct json_writer *w)
{
	const struct stage_stats *stats = NULL;
	size_t nstats = 0;
	uint64_t total = 0;

	(void)r;
	if (p->attribution)
		stats = stage_attribution_stats(p->attribution, &nstats);
	for (size_t i = 0; i < nstats; i++)
		total += stats[i].samples;

	json_begin_object(w);
	json_key(w, "pid");
	json_int(w, p->pid);
	json_key(w, "app_id");
	json_string(w, p->executor->app_id);
	json_key(w, "app_id_known");
	json_bool(w, p->executor->app_id_known);
	json_key(w, "executor_id");
	json_string(w, p->executor->executor_id);
	json_key(w, "backend");
	json_string(w, spark_backend_name(p->executor->backend));
	if (p->executor->container_id[0]) {
		json_key(w, "yarn_container");
		json_string(w, p->executor->container_id);
	}
	if (p->executor->pod_name[0]) {
		json_key(w, "kubernetes_pod");
		json_string(w, p->executor->pod_name);
	}
	json_key(w, "helper");
	json_bool(w, p->helper != NULL);
	json_key(w, "attribution");
	json_string(w, !p->helper ? "none: the sparkprof helper is not loaded, every sample is in no-stage"
		    : r->opts->attribution == ATTRIBUTION_OPT_EPOCH ? "epoch" : "thread");
	json_key(w, "samples");
	json_uint(w, p->cpu_samples);
	if (p->attribution) {
		json_key(w, "tid_only_tasks");
		json_uint(w, stage_attribution_tid_only_tasks(p->attribution));
		json_key(w, "late_thread_events");
		json_uint(w, stage_attribution_late_events(p->attribution));
	}
	json_key(w, "stages");
	json_begin_array(w);
	for (size_t i = 0; i < nstats; i++) {
		char name[64];

		json_begin_object(w);
		if (stage_key_is_none(stats[i].stage)) {
			json_key(w, "stage");
			json_null(w);
			snprintf(name, sizeof(name), "no-stage");
		} else {
			json_key(w, "stage");
			json_int(w, stats[i].stage.stage);
			json_key(w, "attempt");
			json_int(w, stats[i].stage.attempt);
			if (stats[i].stage.attempt > 0)
				snprintf(name, sizeof(name), "stage-%d.%d", stats[i].stage.stage,
					 stats[i].stage.attempt);
			else
				snprintf(name, sizeof(name), "stage-%d", stats[i].stage.stage);
		}
		json_key(w, "output");
		json_string(w, name);
		json_key(w, "samples");
		json_uint(w, stats[i].samples);
		json_key(w, "share");
		json_double(w, total ? (double)stats[i].samples / (double)total : 0.0);
		json_key(w, "tasks_seen");
		json_uint(w, stats[i].tasks_seen);
		if (stats[i].off_cpu_ns) {
			json_key(w, "off_cpu_ms");
			json_double(w, (double)stats[i].off_cpu_ns / 1e6);
		}
		json_key(w, "samples_by_attribution");
		json_begin_object(w);
		for (int m = 0; m < ATTRIBUTION_METHOD_MAX; m++) {
			json_key(w, attribution_method_name(m));
			json_uint(w, stats[i].samples_by[m]);
		}
		json_end_object(w);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

void executor_routing_write_summary(struct executor_routing *r, struct json_writer *w)
{
	json_begin_array(w);
	for (int i = 0; i < r->nexecutors; i++)
		write_executor(r, r->executors[i], w);
	json_end_array(w);
}
