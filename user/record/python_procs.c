/* python_procs.c - see python_procs.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "jvm/java_process.h"
#include "proc/file_slurp.h"
#include "proc/proc_children.h"
#include "python/python_process.h"
#include "record/python_procs.h"
#include "spark/executor_stages.h"
#include "symbols/proc_symbolizer.h"

#define SERVED_RETRY_NS 1000000000ull
#define SERVED_DEPTH 3

/* Named python, or mapping a libpython: a process worth reading symbols of. */
static bool may_be_python(const struct process *p)
{
	static const char *const libs[] = { "libpython3.10.so.1.0", "libpython3.11.so.1.0",
					    "libpython3.12.so.1.0", "libpython3.13.so.1.0" };

	if (!strncmp(p->comm, "python", 6))
		return true;
	for (size_t i = 0; p->symbolizer && i < sizeof(libs) / sizeof(libs[0]); i++)
		if (proc_symbolizer_maps_file(p->symbolizer, libs[i]))
			return true;
	return false;
}

void python_procs_look(struct process *p, uint64_t now_ns, python_found_fn found, void *ctx)
{
	struct sp_python_info info;
	int err;

	if (p->python_settled || p->java || p->retired || p->released ||
	    (p->last_python_check_ns &&
	     !java_look_again(p->first_seen_ns, p->last_python_check_ns, now_ns)))
		return;
	p->last_python_check_ns = now_ns;
	if (!may_be_python(p)) {
		p->python_settled = true;
		return;
	}
	err = python_process_open(p->pid, &p->python);
	if (err == -EAGAIN)
		return;
	p->python_settled = true;
	if (err) {
		if (err != -ENOENT && err != -ENOTSUP && err != -ESRCH)
			sp_debug("pid %d: CPython: %s", (int)p->pid, strerror(-err));
		return;
	}
	sp_debug("pid %d: CPython %s: its Python frames are walked", (int)p->pid,
		 python_process_version(p->python));
	if (found) {
		python_process_walker_info(p->python, &info);
		found(ctx, p->pid, &info);
	}
}

/* Whether pid was started as pyspark.daemon (its workers are forked from
 * it and share its command line). */
static bool runs_daemon(pid_t pid)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	bool daemon;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if (file_read_prefix(path, 4096, &buf, &len))
		return false;
	daemon = memmem(buf, len, "pyspark.daemon", 14) || memmem(buf, len, "daemon.py", 9);
	free(buf);
	return daemon;
}

/* The executor p serves, up its parent chain; sets p->served and its root
 * frame's text. */
static void find_served(struct process_table *table, struct process *p)
{
	pid_t up[SERVED_DEPTH];
	size_t levels = proc_ancestors(p->pid, up, SERVED_DEPTH);

	for (size_t depth = 0; depth < levels; depth++) {
		struct process *e = process_table_find(table, up[depth]);

		if (!e || !e->executor)
			continue;
		p->served = up[depth];
		snprintf(p->label, sizeof(p->label), "[%s %d]",
			 depth == 0 && runs_daemon(p->pid) ? "pyspark daemon" : "python worker",
			 (int)p->pid);
		return;
	}
}

void python_procs_find_served(struct process_table *table, struct process *p, uint64_t ts)
{
	if (p->served || p->exited || (p->served_check_ns && ts - p->served_check_ns < SERVED_RETRY_NS))
		return;
	p->served_check_ns = ts;
	find_served(table, p);
}

bool python_procs_label(struct process_table *table, struct process *p,
			const struct resolved_sample *s, struct sample_labels *l)
{
	const struct spark_executor *id;
	struct stage_attribution_result stage;
	struct process *e;

	e = p->served ? process_table_find(table, p->served) : NULL;
	if (!e || !e->executor || !executor_selected(e->executor))
		return false;
	id = executor_identity(e->executor);
	l->app_id = id->app_id;
	l->executor_id = id->executor_id;
	l->process = p->label;
	stage = executor_served_stage(e->executor, s, &l->task);
	if (!stage_key_is_none(stage.stage)) {
		l->stage = stage.stage.stage;
		l->attempt = stage.stage.attempt;
	}
	l->attribution = (uint8_t)stage.how;
	l->flags |= LABEL_EXECUTOR_VIEWS;
	if (s->kind == SAMPLE_CPU)
		p->python_by[stage.how == ATTRIBUTED_SOLE_TASK ? 0 : 1]++;
	return true;
}
