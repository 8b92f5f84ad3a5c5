/* view_set.c - see view_set.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "base/log.h"
#include "base/path_util.h"
#include "base/string_pool.h"
#include "base/strmap.h"
#include "base/version.h"
#include "output/jfr/jfr_sample.h"
#include "output/store_segment.h"
#include "output/view_set.h"

struct view_set {
	struct view *views;
	size_t n, cap;
	bool stages;                /* stage views are made */
	struct string_pool *texts;  /* views' names and ids */
	struct strmap *by_key;      /* executor and stage keys -> index + 1 */
	struct byte_buf key;
};

/* The set's copy of s, cut to max - 1 bytes. */
static const char *keep(struct view_set *vs, const char *s, size_t max)
{
	return string_pool_intern(vs->texts, s, strnlen(s, max - 1));
}

/* id as a file name's part (ids of a store read back are outside input). */
static void spell(char *out, size_t size, const char *id, const char *empty)
{
	snprintf(out, size, "%s", *id ? id : empty);
	sanitize_name_component(out);
}

static const char *view_name(struct view_set *vs, const struct view *v)
{
	char app[VIEW_ID_MAX], exec[VIEW_ID_MAX], name[VIEW_NAME_MAX];
	size_t size = sizeof(name);
	int n;

	if (v->kind == VIEW_NODE)
		return "all";
	spell(app, sizeof(app), v->app_id, "unknown-app");
	spell(exec, sizeof(exec), v->executor_id, "unknown");
	n = snprintf(name, size, "%s/exec-%s/", app, exec);
	if (v->kind == VIEW_EXECUTOR)
		snprintf(name + n, size - (size_t)n, "all");
	else if (v->stage < 0)
		snprintf(name + n, size - (size_t)n, "no-stage");
	else if (v->attempt > 0)
		snprintf(name + n, size - (size_t)n, "stage-%d.%d", v->stage, v->attempt);
	else
		snprintf(name + n, size - (size_t)n, "stage-%d", v->stage);
	return keep(vs, name, sizeof(name));
}

static void key_of(struct byte_buf *b, const struct sample_labels *l, bool stage)
{
	int32_t numbers[2] = { stage ? l->stage : INT32_MIN, stage ? l->attempt : INT32_MIN };

	byte_buf_clear(b);
	byte_buf_bytes(b, l->app_id, strlen(l->app_id) + 1);
	byte_buf_bytes(b, l->executor_id, strlen(l->executor_id) + 1);
	byte_buf_bytes(b, numbers, sizeof(numbers));
}

/* The view for l (its executor's, or its stage's), or -1. */
static int64_t lookup(struct view_set *vs, const struct sample_labels *l, bool stage)
{
	void *found;

	key_of(&vs->key, l, stage);
	if (vs->key.failed)
		return -1;
	found = strmap_get(vs->by_key, (const char *)vs->key.data, vs->key.len);
	return found ? (int64_t)(uintptr_t)found - 1 : -1;
}

/* lookup, adding the view if new (a stage's after its executor's), and
 * seg as its last segment. -1 when out of memory. */
static int64_t add(struct view_set *vs, const struct sample_labels *l, bool stage, size_t seg)
{
	int64_t executor = stage ? lookup(vs, l, false) : -1;
	int inserted = 0;
	struct view *v;
	void **slot;

	if (stage && executor < 0)
		return -1;
	key_of(&vs->key, l, stage);
	slot = vs->key.failed ? NULL : strmap_slot(vs->by_key, (const char *)vs->key.data,
						    vs->key.len, &inserted);
	if (!slot)
		return -1;
	if (!inserted) {
		vs->views[(uintptr_t)*slot - 1].last_segment = seg;
		return (int64_t)(uintptr_t)*slot - 1;
	}
	if (grow_array((void **)&vs->views, &vs->cap, vs->n + 1, sizeof(*v)))
		return -1;
	v = &vs->views[vs->n];
	*v = (struct view){ stage ? VIEW_STAGE : VIEW_EXECUTOR, NULL, NULL, NULL,
			    stage ? l->stage : -1, stage && l->stage >= 0 ? l->attempt : 0, seg, seg };
	v->app_id = stage ? vs->views[executor].app_id : keep(vs, l->app_id, VIEW_ID_MAX);
	v->executor_id = stage ? vs->views[executor].executor_id
			       : keep(vs, l->executor_id, VIEW_ID_MAX);
	if (!v->app_id || !v->executor_id || !(v->name = view_name(vs, v)))
		return -1;
	*slot = (void *)(uintptr_t)++vs->n;
	return (int64_t)vs->n - 1;
}

int view_set_add(struct view_set *vs, const struct store_labels *labels, size_t seg)
{
	vs->views[0].last_segment = seg;
	for (size_t i = 0; i < labels->n; i++) {
		const struct sample_labels *l = &labels->labels[i];

		if (!(l->flags & LABEL_EXECUTOR_VIEWS))
			continue;
		if (add(vs, l, false, seg) < 0 || (vs->stages && add(vs, l, true, seg) < 0))
			return -ENOMEM;
	}
	return 0;
}

struct view_set *view_set_new(bool stages, size_t first)
{
	struct view_set *vs = calloc(1, sizeof(*vs));

	if (!vs || !(vs->by_key = strmap_new()) || !(vs->texts = string_pool_new()) ||
	    grow_array((void **)&vs->views, &vs->cap, 1, sizeof(*vs->views))) {
		view_set_free(vs);
		return NULL;
	}
	vs->views[0] = (struct view){ VIEW_NODE, "all", "", "", -1, 0, first, first };
	vs->n = 1;
	vs->stages = stages;
	return vs;
}

struct view_set *view_set_plan(struct store_reader *r, size_t first, size_t end)
{
	struct view_set *vs = view_set_new(true, first);
	int err = vs ? 0 : -ENOMEM;

	for (size_t seg = first; !err && seg < end; seg++) {
		struct store_labels labels;

		if ((err = store_labels_read(r, seg, &labels)))
			break;
		err = view_set_add(vs, &labels, seg);
		store_labels_free(&labels);
	}
	if (err) {
		if (err == -ENOMEM)
			sp_err("plan the views of %s: %s", store_reader_path(r), strerror(ENOMEM));
		view_set_free(vs);
		errno = -err;
		return NULL;
	}
	return vs;
}

void view_set_free(struct view_set *vs)
{
	if (!vs)
		return;
	strmap_free(vs->by_key, NULL);
	byte_buf_free(&vs->key);
	free(vs->views);
	string_pool_free(vs->texts);
	free(vs);
}

size_t view_set_count(const struct view_set *vs)
{
	return vs->n;
}

const struct view *view_set_get(const struct view_set *vs, size_t i)
{
	return &vs->views[i];
}

static uint32_t route(struct view_set *vs, const struct sample_labels *l, uint32_t out[3])
{
	int64_t e, s;

	out[0] = 0;
	if (!(l->flags & LABEL_EXECUTOR_VIEWS))
		return 1;
	e = lookup(vs, l, false);
	s = vs->stages ? lookup(vs, l, true) : 0;
	if (e < 0 || s < 0)
		return 0;
	out[1] = (uint32_t)e;
	out[2] = (uint32_t)s;
	return vs->stages ? 3 : 2;
}

#define ROUTE_UNKNOWN UINT32_MAX

int view_routes_reset(struct view_routes *rt, size_t n)
{
	if (grow_array((void **)&rt->by_id, &rt->cap, n, sizeof(*rt->by_id)))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		rt->by_id[i].n = ROUTE_UNKNOWN;
	return 0;
}

const struct view_route *view_routes_get(struct view_routes *rt, struct view_set *vs,
					 uint32_t id, const struct sample_labels *l)
{
	struct view_route *r = &rt->by_id[id];

	if (r->n == ROUTE_UNKNOWN)
		r->n = route(vs, l, r->to);
	return r;
}

void view_routes_free(struct view_routes *rt)
{
	free(rt->by_id);
	*rt = (struct view_routes){ 0 };
}

size_t view_labels(const struct view *v, const struct store_info *info, const char *attribution,
		   struct jfr_label *out, char scratch[3][32])
{
	size_t n = 0;

	snprintf(scratch[0], 32, "%u", info->frequency_hz);
	out[n++] = (struct jfr_label){ "sparkprof.version", SPARKPROF_VERSION };
	out[n++] = (struct jfr_label){ "host", info->host };
	if (v->kind == VIEW_NODE) {
		out[n++] = (struct jfr_label){ "scope", "node" };
		out[n++] = (struct jfr_label){ "frequency.hz", scratch[0] };
		return n;
	}
	if (v->kind == VIEW_EXECUTOR)
		snprintf(scratch[1], 32, "all");
	else if (v->stage < 0)
		snprintf(scratch[1], 32, "none");
	else
		snprintf(scratch[1], 32, "%d", v->stage);
	snprintf(scratch[2], 32, "%d", v->kind == VIEW_STAGE && v->stage >= 0 ? v->attempt : 0);
	out[n++] = (struct jfr_label){ "spark.app.id", v->app_id };
	out[n++] = (struct jfr_label){ "spark.executor.id", v->executor_id };
	out[n++] = (struct jfr_label){ "spark.stage", scratch[1] };
	out[n++] = (struct jfr_label){ "spark.stage.attempt", scratch[2] };
	out[n++] = (struct jfr_label){ "attribution", attribution };
	out[n++] = (struct jfr_label){ "frequency.hz", scratch[0] };
	return n;
}

void view_title(const struct view *v, const char *mode, char *buf, size_t size)
{
	if (v->kind == VIEW_NODE)
		snprintf(buf, size, "%s: the node (every process profiled)", mode);
	else if (v->kind == VIEW_EXECUTOR)
		snprintf(buf, size, "%s: %s, executor %s, all stages", mode, v->app_id, v->executor_id);
	else if (v->stage < 0)
		snprintf(buf, size, "%s: %s, executor %s, no stage (outside any task)", mode, v->app_id,
			 v->executor_id);
	else if (v->attempt > 0)
		snprintf(buf, size, "%s: %s, executor %s, stage %d.%d", mode, v->app_id,
			 v->executor_id, v->stage, v->attempt);
	else
		snprintf(buf, size, "%s: %s, executor %s, stage %d", mode, v->app_id, v->executor_id,
			 v->stage);
}

static const char *const file_suffix[VIEW_FILES] = {
	[VIEW_FOLDED] = ".folded", [VIEW_WALL_FOLDED] = ".wall.folded",
	[VIEW_OFF_CPU_FOLDED] = ".offcpu.folded", [VIEW_JFR] = ".jfr",
	[VIEW_FOLDED_HTML] = ".html", [VIEW_WALL_HTML] = ".wall.html",
	[VIEW_OFF_CPU_HTML] = ".offcpu.html",
};

void view_file_name(const struct view *view, enum view_file f, bool compress, char *buf,
		    size_t size)
{
	snprintf(buf, size, "%s%s%s", view->name, file_suffix[f],
		 f == VIEW_JFR && compress ? ".gz" : "");
}
