/* app_report.c - see app_report.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "base/grow_array.h"
#include "base/json_writer.h"
#include "base/log.h"
#include "base/path_util.h"
#include "output/app_report.h"
#include "output/flame_page.h"
#include "output/page_assets.h"
#include "output/report_tasks.h"
#include "output/store_query.h"

#define STRAGGLER_FACTOR 2
#define STRAGGLER_MIN_EXCESS_MS 1000
#define STRAGGLER_MIN_TASKS 3
#define STRAGGLER_RULE "at least 2× the median and 1 s longer"
#define PAGE_PATH 160

struct rtask {
	int64_t tid;
	const char *executor, *host;
	uint64_t duration_ms, samples;
	bool timed;                       /* duration_ms is known */
	const struct spark_task *spark;   /* NULL: not in Spark's record */
	bool straggler;
	char flame[PAGE_PATH], diff[PAGE_PATH];
};

struct rstage {
	int32_t stage, attempt;
	const struct report_stage *seen;  /* NULL: no sample of it */
	const struct spark_stage_info *spark;
	struct rtask *tasks;
	size_t ntasks, tasks_cap;
	uint64_t min, median, p95, max;   /* of the timed tasks' durations */
	int64_t *stragglers;
	size_t nstragglers, stragglers_cap;
	char flame[PAGE_PATH];
};

struct rapp {
	const char *app_id;
	const struct spark_app_record *spark; /* when it is this application's */
	struct rstage *stages;
	size_t nstages, stages_cap;
};

struct report {
	const struct app_report_input *in;
	struct report_tasks *seen;
	struct rapp *apps;
	size_t napps, apps_cap;
};

static struct rstage *stage_of(struct rapp *a, int32_t stage, int32_t attempt)
{
	for (size_t i = 0; i < a->nstages; i++)
		if (a->stages[i].stage == stage && a->stages[i].attempt == attempt)
			return &a->stages[i];
	if (grow_array((void **)&a->stages, &a->stages_cap, a->nstages + 1, sizeof(*a->stages)))
		return NULL;
	a->stages[a->nstages] = (struct rstage){ .stage = stage, .attempt = attempt };
	return &a->stages[a->nstages++];
}

static int add_task(struct rstage *s, const struct rtask *t)
{
	if (grow_array((void **)&s->tasks, &s->tasks_cap, s->ntasks + 1, sizeof(*s->tasks)))
		return -ENOMEM;
	s->tasks[s->ntasks++] = *t;
	return 0;
}

static int by_stage(const void *a, const void *b)
{
	const struct rstage *x = a, *y = b;

	if (x->stage != y->stage)
		return x->stage < y->stage ? -1 : 1;
	return (x->attempt > y->attempt) - (x->attempt < y->attempt);
}

static int by_duration(const void *a, const void *b)
{
	const struct rtask *x = a, *y = b;

	if (x->timed != y->timed)
		return x->timed ? -1 : 1;
	return (x->duration_ms > y->duration_ms) - (x->duration_ms < y->duration_ms);
}

/* ---- what each application has ----------------------------------------- */

/* Stages and tasks as the recordings saw them. */
static int from_recordings(struct report *r, struct rapp *a)
{
	const struct report_stage *stages;
	const struct report_task *tasks;
	size_t ns = report_tasks_stages(r->seen, &stages), nt = report_tasks_tasks(r->seen, &tasks);

	for (size_t i = 0; i < ns; i++) {
		struct rstage *s;

		if (strcmp(stages[i].app_id, a->app_id))
			continue;
		if (!(s = stage_of(a, stages[i].stage, stages[i].attempt)))
			return -ENOMEM;
		s->seen = &stages[i];
	}
	for (size_t i = 0; !a->spark && i < nt; i++) {
		const struct report_task *t = &tasks[i];
		struct rstage *s;

		if (strcmp(t->app_id, a->app_id) || t->stage < 0)
			continue;
		if (!(s = stage_of(a, t->stage, t->attempt)) ||
		    add_task(s, &(struct rtask){ .tid = t->tid, .executor = t->executor_id,
						 .host = t->host, .samples = t->samples,
						 .duration_ms = t->last_ms - t->first_ms,
						 .timed = t->first_ms > 0 }))
			return -ENOMEM;
	}
	return 0;
}

/* Stages and tasks as Spark recorded them, with the recordings' samples. */
static int from_spark(struct report *r, struct rapp *a)
{
	const struct spark_app_record *sp = a->spark;

	for (size_t i = 0; i < sp->nstages; i++) {
		struct rstage *s = stage_of(a, sp->stages[i].stage, sp->stages[i].attempt);

		if (!s)
			return -ENOMEM;
		s->spark = &sp->stages[i];
	}
	for (size_t i = 0; i < sp->ntasks; i++) {
		const struct spark_task *t = &sp->tasks[i];
		const struct report_task *seen = report_tasks_find(r->seen, a->app_id, t->tid);
		struct rstage *s = stage_of(a, t->stage, t->stage_attempt);

		if (!s || add_task(s, &(struct rtask){
				      .tid = t->tid, .executor = t->executor_id, .host = t->host,
				      .samples = seen ? seen->samples : 0, .spark = t,
				      .timed = t->finish_ms >= t->launch_ms && t->launch_ms,
				      .duration_ms = t->finish_ms - t->launch_ms }))
			return -ENOMEM;
	}
	return 0;
}

/* Durations' spread and the stragglers of one stage. */
static int find_stragglers(struct rstage *s)
{
	size_t timed = 0;

	qsort(s->tasks, s->ntasks, sizeof(*s->tasks), by_duration);
	while (timed < s->ntasks && s->tasks[timed].timed)
		timed++;
	if (!timed)
		return 0;
	s->min = s->tasks[0].duration_ms;
	s->median = s->tasks[timed / 2].duration_ms;
	s->p95 = s->tasks[(timed * 95 + 99) / 100 - 1].duration_ms;
	s->max = s->tasks[timed - 1].duration_ms;
	for (size_t i = 0; timed >= STRAGGLER_MIN_TASKS && i < timed; i++) {
		struct rtask *t = &s->tasks[i];

		if (t->duration_ms < STRAGGLER_FACTOR * s->median ||
		    t->duration_ms < s->median + STRAGGLER_MIN_EXCESS_MS)
			continue;
		if (grow_array((void **)&s->stragglers, &s->stragglers_cap, s->nstragglers + 1,
			       sizeof(*s->stragglers)))
			return -ENOMEM;
		s->stragglers[s->nstragglers++] = t->tid;
		t->straggler = true;
	}
	return 0;
}

static int build_app(struct report *r, struct rapp *a)
{
	int err = a->spark ? from_spark(r, a) : 0;

	if (!err)
		err = from_recordings(r, a);
	qsort(a->stages, a->nstages, sizeof(*a->stages), by_stage);
	for (size_t i = 0; !err && i < a->nstages; i++)
		err = find_stragglers(&a->stages[i]);
	return err;
}

static struct rapp *app_of(struct report *r, const char *app_id)
{
	for (size_t i = 0; i < r->napps; i++)
		if (!strcmp(r->apps[i].app_id, app_id))
			return &r->apps[i];
	if (grow_array((void **)&r->apps, &r->apps_cap, r->napps + 1, sizeof(*r->apps)))
		return NULL;
	r->apps[r->napps] = (struct rapp){ .app_id = app_id };
	return &r->apps[r->napps++];
}

static bool seen_app(const char *const *apps, size_t n, const char *app_id)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(apps[i], app_id))
			return true;
	return false;
}

/* Every application the recordings saw, and Spark's, joined by id (a
 * record of the only application joins it whatever its id says). */
static int build_apps(struct report *r)
{
	const struct spark_app_record *sp = r->in->spark;
	const char *const *apps;
	size_t n = report_tasks_apps(r->seen, &apps);
	int err = 0;

	for (size_t i = 0; i < n; i++)
		if (!app_of(r, apps[i]))
			return -ENOMEM;
	if (sp && !sp->app_id)
		sp_warn("report: %s names no application: its stages are left out",
			r->in->spark_source);
	if (sp && sp->app_id) {
		struct rapp *a;

		if (n && !seen_app(apps, n, sp->app_id))
			sp_warn("report: %s is about %s, which none of the recordings saw",
				r->in->spark_source, sp->app_id);
		if (!(a = app_of(r, sp->app_id)))
			return -ENOMEM;
		a->spark = sp;
	}
	for (size_t i = 0; !err && i < r->napps; i++)
		err = build_app(r, &r->apps[i]);
	return err;
}

/* ---- pages ------------------------------------------------------------- */

static int add_stores(struct report *r, struct flame_tree *t, const struct label_filter *f,
		      const int64_t *except, size_t nexcept, int column)
{
	int err = 0;

	for (size_t i = 0; !err && i < r->in->nstores; i++)
		err = store_query_tree_add(r->in->stores[i], f, except, nexcept, t, column);
	return err;
}

/* Writes t as OUT/rel, and rel to page; nothing when t is empty. */
static int write_page(struct report *r, const struct flame_tree *t, const char *rel,
		      const char *title, bool diff, char page[PAGE_PATH])
{
	struct flame_page_options o = { .title = title, .mode = diff ? FLAME_PAGE_DIFF : FLAME_PAGE_CPU,
					.min_width_pct = FLAME_MIN_WIDTH_DEFAULT, .normalize = diff };
	const struct flame_node *nodes;
	char path[PATH_MAX];
	size_t n;
	int err;

	nodes = flame_tree_nodes(t, &n);
	if (!n || !nodes[0].total[diff ? 1 : 0] || (diff && !nodes[0].total[0]))
		return 0;
	snprintf(path, sizeof(path), "%s/%s", r->in->out_dir, rel);
	err = make_parent_dirs(path);
	if (err) {
		sp_err("report: create the folder of %s: %s", path, strerror(-err));
		return err;
	}
	err = flame_page_write(t, &o, path);
	if (!err)
		snprintf(page, PAGE_PATH, "%s", rel);
	return err;
}

/* One flame graph of filter f (but except's tasks), or a diff: f2 against it. */
static int page_of(struct report *r, const struct label_filter *f, const int64_t *except,
		   size_t nexcept, const struct label_filter *f2, const char *rel, const char *title,
		   char page[PAGE_PATH])
{
	struct flame_tree *t = flame_tree_new();
	int err = t ? add_stores(r, t, f, except, nexcept, 0) : -ENOMEM;

	if (!err && f2)
		err = add_stores(r, t, f2, NULL, 0, 1);
	if (!err)
		err = write_page(r, t, rel, title, f2 != NULL, page);
	flame_tree_free(t);
	return err;
}

static int task_pages(struct report *r, struct rapp *a, const char *dir, struct rstage *s,
		      struct rtask *t)
{
	struct label_filter stage = { .app_id = a->app_id, .by_stage = true, .stage = s->stage,
				      .attempt = s->attempt, .task = -1 };
	struct label_filter task = { .app_id = a->app_id, .task = t->tid };
	int64_t *except = malloc((s->nstragglers + 1) * sizeof(*except));
	char rel[PAGE_PATH], title[200];
	int err;

	if (!except)
		return -ENOMEM;
	memcpy(except, s->stragglers, s->nstragglers * sizeof(*except));
	except[s->nstragglers] = t->tid;
	snprintf(rel, sizeof(rel), "%.80s/stage-%d.%d/task-%" PRId64 ".html", dir, s->stage,
		 s->attempt, t->tid);
	snprintf(title, sizeof(title), "CPU: task %" PRId64 " of stage %d.%d", t->tid, s->stage,
		 s->attempt);
	err = page_of(r, &task, NULL, 0, NULL, rel, title, t->flame);
	snprintf(rel, sizeof(rel), "%.80s/stage-%d.%d/task-%" PRId64 ".diff.html", dir, s->stage,
		 s->attempt, t->tid);
	snprintf(title, sizeof(title), "Diff: task %" PRId64 " against the other tasks of stage %d.%d",
		 t->tid, s->stage, s->attempt);
	if (!err)
		err = page_of(r, &stage, except, s->nstragglers + 1, &task, rel, title, t->diff);
	free(except);
	return err;
}

static int stage_pages(struct report *r, struct rapp *a, const char *dir, struct rstage *s)
{
	struct label_filter f = { .app_id = a->app_id, .by_stage = true, .stage = s->stage,
				  .attempt = s->attempt, .task = -1 };
	char rel[PAGE_PATH], title[200];
	int err = 0;

	if (s->seen && s->seen->samples) {
		snprintf(rel, sizeof(rel), "%.80s/stage-%d.%d.html", dir, s->stage, s->attempt);
		snprintf(title, sizeof(title), "CPU: stage %d.%d of %s", s->stage, s->attempt,
			 a->app_id);
		err = page_of(r, &f, NULL, 0, NULL, rel, title, s->flame);
	}
	/* The stragglers, and the longest task (the last timed one). */
	for (size_t i = s->ntasks; !err && i-- > 0;) {
		struct rtask *t = &s->tasks[i];
		bool longest = t->timed && (i + 1 == s->ntasks || !s->tasks[i + 1].timed);

		if ((t->straggler || longest) && t->samples)
			err = task_pages(r, a, dir, s, t);
	}
	return err;
}

static int app_pages(struct report *r, struct rapp *a)
{
	char dir[PAGE_PATH];
	int err = 0;

	snprintf(dir, sizeof(dir), "%s", a->app_id);
	sanitize_name_component(dir);
	for (size_t i = 0; !err && i < a->nstages; i++)
		err = stage_pages(r, a, dir, &a->stages[i]);
	return err;
}

/* ---- report.json and the page ----------------------------------------- */

static void json_page(struct json_writer *w, const char *key, const char *page)
{
	json_key(w, key);
	json_string(w, page[0] ? page : NULL);
}

static void json_metrics(struct json_writer *w, const struct spark_task *t)
{
	const struct { const char *key; uint64_t v; } m[] = {
		{ "launch_ms", t->launch_ms }, { "run_ms", t->run_ms },
		{ "cpu_ms", t->cpu_ns / 1000000 }, { "gc_ms", t->gc_ms },
		{ "shuffle_read_bytes", t->shuffle_read_bytes },
		{ "shuffle_write_bytes", t->shuffle_write_bytes },
		{ "spill_bytes", t->memory_spill_bytes + t->disk_spill_bytes },
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		json_key(w, m[i].key);
		json_uint(w, m[i].v);
	}
	json_key(w, "failed");
	json_bool(w, t->failed);
}

static void json_task(struct json_writer *w, const struct rtask *t)
{
	json_begin_object(w);
	json_key(w, "tid");
	json_int(w, t->tid);
	json_key(w, "executor");
	json_string(w, t->executor);
	json_key(w, "host");
	json_string(w, t->host && t->host[0] ? t->host : NULL);
	json_key(w, "duration_ms");
	if (t->timed)
		json_uint(w, t->duration_ms);
	else
		json_null(w);
	json_key(w, "samples");
	json_uint(w, t->samples);
	json_key(w, "straggler");
	json_bool(w, t->straggler);
	json_page(w, "flame", t->flame);
	json_page(w, "diff", t->diff);
	if (t->spark)
		json_metrics(w, t->spark);
	json_end_object(w);
}

static void json_spread(struct json_writer *w, const struct rstage *s)
{
	const struct { const char *key; uint64_t v; } d[] = {
		{ "min", s->min }, { "median", s->median }, { "p95", s->p95 }, { "max", s->max },
	};

	json_key(w, "task_duration_ms");
	if (!s->ntasks || !s->tasks[0].timed) {
		json_null(w);
		return;
	}
	json_begin_object(w);
	for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) {
		json_key(w, d[i].key);
		json_uint(w, d[i].v);
	}
	json_end_object(w);
}

static void json_stage_names(struct json_writer *w, const struct rstage *s)
{
	const struct spark_stage_info *sp = s->spark;

	json_key(w, "name");
	json_string(w, sp ? sp->name : NULL);
	json_key(w, "description");
	json_string(w, sp ? sp->description : NULL);
	json_key(w, "details");
	json_string(w, sp ? sp->details : NULL);
	json_key(w, "job_id");
	if (sp && sp->job_id >= 0)
		json_int(w, sp->job_id);
	else
		json_null(w);
	json_key(w, "sql_execution_id");
	if (sp && sp->sql_execution_id >= 0)
		json_int(w, sp->sql_execution_id);
	else
		json_null(w);
}

static void json_stage(struct json_writer *w, const struct rstage *s)
{
	json_begin_object(w);
	json_key(w, "stage");
	json_int(w, s->stage);
	json_key(w, "attempt");
	json_int(w, s->attempt);
	json_stage_names(w, s);
	json_key(w, "samples");
	json_uint(w, s->seen ? s->seen->samples : 0);
	json_key(w, "wall_ms");
	if (s->spark && s->spark->complete_ms >= s->spark->submit_ms && s->spark->submit_ms)
		json_uint(w, s->spark->complete_ms - s->spark->submit_ms);
	else if (s->seen && s->seen->first_ms)
		json_uint(w, s->seen->last_ms - s->seen->first_ms);
	else
		json_null(w);
	json_key(w, "executors");
	json_begin_array(w);
	for (size_t i = 0; s->seen && i < s->seen->nexecutors; i++)
		json_string(w, s->seen->executors[i]);
	json_end_array(w);
	json_page(w, "flame", s->flame);
	json_spread(w, s);
	json_key(w, "tasks");
	json_begin_array(w);
	for (size_t i = s->ntasks; i-- > 0;)
		json_task(w, &s->tasks[i]);
	json_end_array(w);
	json_key(w, "stragglers");
	json_begin_array(w);
	for (size_t i = 0; i < s->nstragglers; i++)
		json_int(w, s->stragglers[i]);
	json_end_array(w);
	json_end_object(w);
}

static void json_app(struct json_writer *w, struct report *r, const struct rapp *a)
{
	json_begin_object(w);
	json_key(w, "app_id");
	json_string(w, a->app_id);
	json_key(w, "name");
	json_string(w, a->spark ? a->spark->app_name : NULL);
	json_key(w, "spark_source");
	json_string(w, a->spark ? r->in->spark_source : NULL);
	json_key(w, "straggler_rule");
	json_string(w, STRAGGLER_RULE);
	json_key(w, "unstaged_samples");
	json_uint(w, report_tasks_unstaged(r->seen, a->app_id));
	json_key(w, "stages");
	json_begin_array(w);
	for (size_t i = 0; i < a->nstages; i++)
		json_stage(w, &a->stages[i]);
	json_end_array(w);
	json_end_object(w);
}

static void json_report(FILE *out, struct report *r)
{
	struct json_writer w;

	json_init(&w, out);
	json_begin_object(&w);
	json_key(&w, "recordings");
	json_begin_array(&w);
	for (size_t i = 0; i < r->in->nstores; i++)
		json_string(&w, r->in->recordings[i]);
	json_end_array(&w);
	json_key(&w, "applications");
	json_begin_array(&w);
	for (size_t i = 0; i < r->napps; i++)
		json_app(&w, r, &r->apps[i]);
	json_end_array(&w);
	json_end_object(&w);
	fputc('\n', out);
}

struct page_ctx {
	const char *json;
};

static int page_marker(FILE *out, const char *marker, void *ctx)
{
	const struct page_ctx *pc = ctx;
	size_t len;

	if (!strcmp(marker, "TITLE")) {
		fputs("sparkprof report", out);
	} else if (!strcmp(marker, "JS")) {
		const char *js = page_asset(ASSET_REPORT_JS, &len);

		return fwrite(js, 1, len, out) == len ? 0 : -EIO;
	} else if (!strcmp(marker, "DATA")) {
		/* report.json as a string, parsed by the page: no text from a
		 * recording or an event log can leave the script. */
		fputs("JSON.parse(", out);
		json_write_escaped_script(out, pc->json);
		fputs(")", out);
	}
	return ferror(out) ? -EIO : 0;
}

static int write_text(const char *path, const char *text, struct page_ctx *page)
{
	struct atomic_file af;
	FILE *f = atomic_file_open(&af, path);
	int err;

	if (!f)
		return -errno;
	if (page)
		err = page_write_template(f, ASSET_REPORT_HTML, page_marker, page);
	else
		err = fputs(text, f) < 0 ? -EIO : 0;
	return atomic_file_commit(&af, err);
}

static int write_outputs(struct report *r)
{
	char *json = NULL, path[PATH_MAX];
	size_t len = 0;
	FILE *mem = open_memstream(&json, &len);
	int err;

	if (!mem)
		return -ENOMEM;
	json_report(mem, r);
	err = fclose(mem) ? -ENOMEM : 0;
	snprintf(path, sizeof(path), "%s/report.json", r->in->out_dir);
	if (!err)
		err = write_text(path, json, NULL);
	snprintf(path, sizeof(path), "%s/index.html", r->in->out_dir);
	if (!err)
		err = write_text(path, NULL, &(struct page_ctx){ json });
	free(json);
	return err;
}

static void free_report(struct report *r)
{
	for (size_t i = 0; i < r->napps; i++) {
		for (size_t k = 0; k < r->apps[i].nstages; k++) {
			free(r->apps[i].stages[k].tasks);
			free(r->apps[i].stages[k].stragglers);
		}
		free(r->apps[i].stages);
	}
	free(r->apps);
	report_tasks_free(r->seen);
}

int app_report_write(const struct app_report_input *in)
{
	struct report r = { .in = in, .seen = report_tasks_new() };
	int err = r.seen ? make_dirs(in->out_dir) : -ENOMEM;

	if (err && err != -ENOMEM)
		sp_err("report: create %s: %s", in->out_dir, strerror(-err));
	for (size_t i = 0; !err && i < in->nstores; i++)
		err = report_tasks_add_store(r.seen, in->stores[i]);
	if (!err && (err = build_apps(&r)) == -ENOMEM)
		sp_err("report: %s", strerror(ENOMEM));
	for (size_t i = 0; !err && i < r.napps; i++)
		err = app_pages(&r, &r.apps[i]);
	if (!err)
		err = write_outputs(&r);
	free_report(&r);
	return err;
}
