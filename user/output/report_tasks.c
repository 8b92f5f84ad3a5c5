/* report_tasks.c - see report_tasks.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "base/log.h"
#include "base/sample.h"
#include "base/string_pool.h"
#include "base/strmap.h"
#include "output/report_tasks.h"
#include "output/store_segment.h"

#define MAX_APPS 4096

struct report_tasks {
	struct string_pool *strings;
	struct strmap *task_index, *stage_index, *app_index; /* key -> index + 1 */
	struct report_task *tasks;
	size_t ntasks, tasks_cap;
	struct report_stage *stages;
	size_t nstages, stages_cap;
	const char **apps;
	uint64_t *unstaged;
	size_t napps, apps_cap, unstaged_cap;
};

struct report_tasks *report_tasks_new(void)
{
	struct report_tasks *rt = calloc(1, sizeof(*rt));

	if (rt && (!(rt->strings = string_pool_new()) || !(rt->task_index = strmap_new()) ||
		   !(rt->stage_index = strmap_new()) || !(rt->app_index = strmap_new()))) {
		report_tasks_free(rt);
		rt = NULL;
	}
	if (!rt)
		errno = ENOMEM;
	return rt;
}

void report_tasks_free(struct report_tasks *rt)
{
	if (!rt)
		return;
	string_pool_free(rt->strings);
	strmap_free(rt->task_index, NULL);
	strmap_free(rt->stage_index, NULL);
	strmap_free(rt->app_index, NULL);
	free(rt->tasks);
	free(rt->stages);
	free(rt->apps);
	free(rt->unstaged);
	free(rt);
}

static const char *pooled(struct report_tasks *rt, const char *s)
{
	return string_pool_intern(rt->strings, s, strlen(s));
}

/* The index of key in index, adding a zeroed element of size to *array
 * when new. -1 when out of memory. */
static long entry(struct strmap *index, const char *key, void **array, size_t *n, size_t *cap,
		  size_t size)
{
	int inserted;
	void **slot = strmap_slot(index, key, strlen(key), &inserted);

	if (!slot)
		return -1;
	if (!inserted)
		return (long)(uintptr_t)*slot - 1;
	if (grow_array(array, cap, *n + 1, size)) {
		strmap_remove(index, key, strlen(key));
		return -1;
	}
	memset((char *)*array + *n * size, 0, size);
	*slot = (void *)(uintptr_t)(++*n);
	return (long)*n - 1;
}

static long app_entry(struct report_tasks *rt, const char *app)
{
	long i;

	if (rt->napps >= MAX_APPS && !strmap_get(rt->app_index, app, strlen(app)))
		return -1;
	i = entry(rt->app_index, app, (void **)&rt->apps, &rt->napps, &rt->apps_cap,
		  sizeof(*rt->apps));
	if (i >= 0 && !rt->apps[i]) {
		if (grow_array((void **)&rt->unstaged, &rt->unstaged_cap, rt->napps,
			       sizeof(*rt->unstaged)))
			return -1;
		rt->unstaged[i] = 0;
		rt->apps[i] = pooled(rt, app);
	}
	return i >= 0 && rt->apps[i] ? i : -1;
}

static void seen_at(uint64_t *first, uint64_t *last, uint64_t ms)
{
	if (!*first || ms < *first)
		*first = ms;
	if (ms > *last)
		*last = ms;
}

static void add_executor(struct report_tasks *rt, struct report_stage *st, const char *host,
			 const char *executor)
{
	char key[512];
	const char *k;

	snprintf(key, sizeof(key), "%s/%s", host, executor);
	for (size_t i = 0; i < st->nexecutors; i++)
		if (!strcmp(st->executors[i], key))
			return;
	if (st->nexecutors < sizeof(st->executors) / sizeof(st->executors[0]) &&
	    (k = pooled(rt, key)))
		st->executors[st->nexecutors++] = k;
}

static int add_stage_sample(struct report_tasks *rt, const struct sample_labels *l,
			    const char *host, uint64_t ms, bool cpu)
{
	char key[320];
	long i;

	snprintf(key, sizeof(key), "%s|%" PRId32 "|%" PRId32, l->app_id, l->stage, l->attempt);
	i = entry(rt->stage_index, key, (void **)&rt->stages, &rt->nstages, &rt->stages_cap,
		  sizeof(*rt->stages));
	if (i < 0)
		return -ENOMEM;
	if (!rt->stages[i].app_id) {
		rt->stages[i].app_id = pooled(rt, l->app_id);
		rt->stages[i].stage = l->stage;
		rt->stages[i].attempt = l->attempt;
	}
	rt->stages[i].samples += cpu;
	seen_at(&rt->stages[i].first_ms, &rt->stages[i].last_ms, ms);
	add_executor(rt, &rt->stages[i], host, l->executor_id);
	return rt->stages[i].app_id ? 0 : -ENOMEM;
}

static int add_task_sample(struct report_tasks *rt, const struct sample_labels *l,
			   const char *host, uint64_t ms, bool cpu)
{
	char key[320];
	struct report_task *t;
	long i;

	snprintf(key, sizeof(key), "%s|%" PRId64, l->app_id, l->task);
	i = entry(rt->task_index, key, (void **)&rt->tasks, &rt->ntasks, &rt->tasks_cap,
		  sizeof(*rt->tasks));
	if (i < 0)
		return -ENOMEM;
	t = &rt->tasks[i];
	if (!t->app_id) {
		*t = (struct report_task){ .app_id = pooled(rt, l->app_id), .tid = l->task,
					   .stage = l->stage, .attempt = l->attempt,
					   .executor_id = pooled(rt, l->executor_id),
					   .host = pooled(rt, host) };
	}
	if (t->stage < 0 && l->stage >= 0) {
		t->stage = l->stage;
		t->attempt = l->attempt;
	}
	t->samples += cpu;
	seen_at(&t->first_ms, &t->last_ms, ms);
	return t->app_id && t->executor_id && t->host ? 0 : -ENOMEM;
}

static int add_sample(struct report_tasks *rt, const struct store_info *info,
		      const struct store_sample *s, const struct sample_labels *l)
{
	bool cpu = s->kind == SAMPLE_CPU;
	uint64_t ms = (store_sample_time(s) - info->start_monotonic_ns + info->start_realtime_ns) /
		      1000000;
	long app;
	int err = 0;

	if (!l->app_id[0] || (!cpu && s->kind != SAMPLE_TASK && s->kind != SAMPLE_OFF_CPU))
		return 0;
	app = app_entry(rt, l->app_id);
	if (app < 0)
		return -ENOMEM;
	if (l->stage >= 0)
		err = add_stage_sample(rt, l, info->host, ms, cpu);
	else
		rt->unstaged[app] += cpu;
	if (!err && l->task >= 0)
		err = add_task_sample(rt, l, info->host, ms, cpu);
	return err;
}

static int add_segment(struct report_tasks *rt, struct store_reader *r, size_t seg)
{
	const struct store_info *info = store_reader_info(r);
	struct store_labels labels = { 0 };
	struct store_samples samples = { 0 };
	int err = store_labels_read(r, seg, &labels);

	if (!err)
		err = store_samples_read(r, seg, labels.n, &samples);
	for (size_t i = 0; !err && i < samples.n; i++)
		err = add_sample(rt, info, &samples.samples[i], &labels.labels[samples.samples[i].labels]);
	if (err == -ENOMEM)
		sp_err("report on %s: %s", store_reader_path(r), strerror(ENOMEM));
	store_samples_free(&samples);
	store_labels_free(&labels);
	return err;
}

int report_tasks_add_store(struct report_tasks *rt, struct store_reader *r)
{
	int err = 0;

	for (size_t i = 0; !err && i < store_reader_segments(r); i++)
		err = add_segment(rt, r, i);
	return err;
}

size_t report_tasks_apps(const struct report_tasks *rt, const char *const **apps)
{
	*apps = rt->apps;
	return rt->napps;
}

size_t report_tasks_stages(const struct report_tasks *rt, const struct report_stage **out)
{
	*out = rt->stages;
	return rt->nstages;
}

size_t report_tasks_tasks(const struct report_tasks *rt, const struct report_task **out)
{
	*out = rt->tasks;
	return rt->ntasks;
}

const struct report_task *report_tasks_find(const struct report_tasks *rt, const char *app_id,
					    int64_t tid)
{
	char key[320];
	void *i;

	snprintf(key, sizeof(key), "%s|%" PRId64, app_id, tid);
	i = strmap_get(rt->task_index, key, strlen(key));
	return i ? &rt->tasks[(uintptr_t)i - 1] : NULL;
}

uint64_t report_tasks_unstaged(const struct report_tasks *rt, const char *app_id)
{
	void *i = strmap_get(rt->app_index, app_id, strlen(app_id));

	return i ? rt->unstaged[(uintptr_t)i - 1] : 0;
}
