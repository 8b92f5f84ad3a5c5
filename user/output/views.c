/* views.c - see views.h. This file is the first pass: the samples in time
 * order, for the JFR files and the counts; view_text.c is the second. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/path_util.h"
#include "base/strmap.h"
#include "output/jfr/jfr_writer.h"
#include "output/store_segment.h"
#include "output/view_text.h"
#include "output/views.h"
#include "sparkprof_events.h"

struct view_state {
	struct jfr_writer *jfr;
	bool jfr_done;                /* closed, or failed */
	uint64_t wall_carry_ns[2];    /* on/off CPU time not yet written as JFR wall samples */
	struct strmap *tasks;         /* task ids seen (stages, and executors' TID-only) */
};

struct views {
	struct view_set *set;
	struct view_result *results;
	struct view_state *states;
	bool *wanted;                 /* by view: gets files in this write */
	size_t n;
	size_t first_segment, end_segment;  /* the segments read */
	const struct views_settings *settings;
	const struct store_info *info;
	struct frame *frames;         /* a sample's, JFR_MAX_FRAMES */
	struct view_routes routes;    /* by the filed segment's labels index */
	/* Live files (views_live_new): fed segments as they close. */
	bool live, live_failed;
	int live_error;               /* a live file's write failed: -errno */
	size_t fed;                   /* segments fed */
	struct store_info live_info;
	struct views_settings own_settings;  /* settings changed for this write */
};

/* Whether view gets files in a write with settings s. */
static bool files_wanted(const struct views_settings *s, const struct view *view)
{
	if (view->kind != VIEW_STAGE)
		return !s->stages_only;
	return !s->stage_wanted || s->stage_wanted(s->stage_ctx, view);
}

/* Whether this write writes view i's JFR file (the node's and executors'
 * may be live files). */
static bool jfr_here(const struct views *v, size_t i)
{
	return v->settings->jfr && v->wanted[i] &&
	       (!v->settings->live_jfr || view_set_get(v->set, i)->kind == VIEW_STAGE);
}

static int open_jfr(struct views *v, size_t i)
{
	const struct view *view = view_set_get(v->set, i);
	struct jfr_label labels[VIEW_LABELS];
	char scratch[3][32], name[VIEW_NAME_MAX + 16], path[PATH_MAX];
	struct jfr_recording_info info = {
		.start_monotonic_ns = v->info->start_monotonic_ns,
		.start_realtime_ns = v->info->start_realtime_ns,
		.cpu_interval_ns = v->info->cpu_period_ns,
		.wall_interval_ns = v->info->flags & (STORE_WALL | STORE_OFF_CPU) ?
				    v->info->wall_interval_ns : 0,
		.labels = labels,
		.nlabels = view_labels(view, v->info, v->settings->attribution, labels, scratch),
	};
	/* Many stage files may be open at once: a small chunk each. */
	struct jfr_writer_options jopts = { .gzip = v->settings->compress, .chunk_bytes = 2u << 20 };
	int err;

	view_file_name(view, VIEW_JFR, v->settings->compress, name, sizeof(name));
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", v->settings->dir, name) >= sizeof(path))
		err = -ENAMETOOLONG;
	else
		err = make_parent_dirs(path);
	if (err) {
		sp_err("create %s/%s: %s", v->settings->dir, name, strerror(-err));
		return err;
	}
	v->states[i].jfr = jfr_writer_open(path, &info, &jopts);
	return v->states[i].jfr ? 0 : -errno;
}

static void jfr_failed(struct views *v, size_t i, int err)
{
	struct view_state *st = &v->states[i];

	if (v->live && !v->live_error)
		v->live_error = err;   /* the stop writes the live files itself */
	else if (!v->live && err != -ENAMETOOLONG)
		sp_err("write %s/%s.jfr: %s; its folded profiles are still written", v->settings->dir,
		       view_set_get(v->set, i)->name, strerror(-err));
	if (st->jfr)   /* NULL: it did not open */
		jfr_writer_close(st->jfr);   /* removes what it wrote */
	st->jfr = NULL;
	st->jfr_done = true;
	v->results[i].errors[VIEW_JFR] = err;
}

/* JFR wall samples have whole weights in units of the wall interval; the
 * remainder is carried to the view's next sample of the same kind, so the
 * total stays exact and each stack gets its share on average. On-CPU and
 * off-CPU time carry apart: a busy node's many short preemptions would
 * otherwise lend their remainders to running samples. */
static uint64_t wall_weight(struct views *v, size_t i, bool on_cpu, uint64_t ns)
{
	uint64_t unit = v->info->wall_interval_ns, weight;
	uint64_t *carry = &v->states[i].wall_carry_ns[on_cpu];

	*carry += ns;
	weight = *carry / unit;
	*carry -= weight * unit;
	return weight;
}

static void add_jfr(struct views *v, size_t i, const struct store_sample *s,
		    const struct sample_labels *l, int nframes)
{
	struct view_state *st = &v->states[i];
	struct jfr_sample js = {
		.timestamp_ns = s->timestamp_ns, .os_tid = (uint32_t)l->tid,
		.thread_name = l->thread, .pid = (uint32_t)l->pid, .kind = JFR_SAMPLE_CPU,
		.thread_state = s->state, .weight = 1, .frames = v->frames, .nframes = nframes,
	};
	bool wall = v->info->flags & STORE_WALL;
	int err = 0;

	if (st->jfr_done || (!st->jfr && (err = open_jfr(v, i)))) {
		if (err)
			jfr_failed(v, i, err);
		return;
	}
	if (s->kind == SAMPLE_CPU)
		err = jfr_writer_add_sample(st->jfr, &js);
	if (!err && (s->kind == SAMPLE_OFF_CPU || wall) && v->info->wall_interval_ns) {
		js.kind = JFR_SAMPLE_WALL;
		js.weight = s->kind == SAMPLE_CPU ? wall_weight(v, i, true, v->info->cpu_period_ns)
						  : wall_weight(v, i, false, s->weight);
		if (js.weight)
			err = jfr_writer_add_sample(st->jfr, &js);
	}
	if (err && err != -EINVAL)
		jfr_failed(v, i, err);
}

static void count_task(struct views *v, size_t i, const struct sample_labels *l)
{
	struct view_state *st = &v->states[i];
	int64_t task = l->task;
	int inserted = 0;

	if (task < 0)
		return;
	if (!st->tasks && !(st->tasks = strmap_new()))
		return;
	if (strmap_slot(st->tasks, (const char *)&task, sizeof(task), &inserted) && inserted)
		v->results[i].tasks++;
}

static void count(struct views *v, size_t i, const struct store_sample *s,
		  const struct sample_labels *l)
{
	struct view_result *r = &v->results[i];
	enum view_kind kind = view_set_get(v->set, i)->kind;
	uint64_t t;

	if (s->kind == SAMPLE_TASK) {
		/* Stages count their tasks; executors those without a stage. */
		if ((kind == VIEW_STAGE && l->stage >= 0) || (kind == VIEW_EXECUTOR && l->stage < 0))
			count_task(v, i, l);
		return;
	}
	if (s->kind == SAMPLE_CPU) {
		r->cpu_samples++;
		if (l->attribution < ATTRIBUTION_METHOD_MAX)
			r->samples_by[l->attribution]++;
	} else {
		r->off_cpu_events++;
		r->off_cpu_ns += s->weight;
	}
	t = store_sample_time(s);
	if (!r->first_ns || t < r->first_ns)
		r->first_ns = t;
	if (t > r->last_ns)
		r->last_ns = t;
}

static void file_sample(struct views *v, const struct store_samples *ss, size_t k,
			const struct store_labels *labels)
{
	const struct store_sample *s = &ss->samples[k];
	const struct sample_labels *l = &labels->labels[s->labels];
	const struct view_route *r = view_routes_get(&v->routes, v->set, s->labels, l);
	const uint32_t *to = r->to;
	int nframes = -1;   /* read when a view wants them */

	for (size_t i = 0; i < r->n; i++) {
		if (!v->live)
			count(v, to[i], s, l);
		if (s->kind == SAMPLE_TASK || !jfr_here(v, to[i]))
			continue;
		if (nframes < 0) {
			size_t n = store_sample_frames(ss, s->leaf, v->frames, JFR_MAX_FRAMES);

			nframes = (int)(n < JFR_MAX_FRAMES ? n : JFR_MAX_FRAMES);
		}
		add_jfr(v, to[i], s, l, nframes);
	}
}

/* After a segment: its frame names go, so every chunk is written; views
 * that end here are closed. */
static void end_segment(struct views *v, size_t seg)
{
	for (size_t i = 0; i < v->n; i++) {
		struct view_state *st = &v->states[i];
		int err = 0;

		if (st->jfr && (err = jfr_writer_idle(st->jfr)))
			jfr_failed(v, i, err);
		if (v->live || view_set_get(v->set, i)->last_segment != seg)
			continue;
		strmap_free(st->tasks, NULL);
		st->tasks = NULL;
		if (st->jfr && (err = jfr_writer_close(st->jfr)))
			v->results[i].errors[VIEW_JFR] = err;
		if (st->jfr)
			st->jfr_done = true;
		st->jfr = NULL;
	}
}

/* 0 or -ENOMEM. */
static int file_segment(struct views *v, const struct store_samples *ss,
			const struct store_labels *labels, size_t seg)
{
	if (view_routes_reset(&v->routes, labels->n))
		return -ENOMEM;
	for (size_t k = 0; k < ss->n; k++)
		file_sample(v, ss, k, labels);
	end_segment(v, seg);
	return 0;
}

/* The samples in time order: JFR and counts; and each segment's rows for
 * the stages' files. */
static int time_pass(struct views *v, struct store_reader *r)
{
	struct stage_text *stages = stage_text_new(v->set, v->wanted, v->settings, v->info,
						   v->results);
	int err = stages ? 0 : -ENOMEM;

	for (size_t seg = v->first_segment; !err && seg < v->end_segment; seg++) {
		struct store_labels labels;
		struct store_samples ss;

		err = store_labels_read(r, seg, &labels);
		if (!err && (err = store_samples_read(r, seg, labels.n, &ss)))
			store_labels_free(&labels);
		if (err)
			break;
		err = file_segment(v, &ss, &labels, seg);
		store_samples_free(&ss);
		store_labels_free(&labels);
		if (!err)
			err = stage_text_segment(stages, r, seg);
	}
	stage_text_free(stages);
	return err;
}

/* Closes view i's JFR file; a view with no sample gets an empty one. */
static void close_jfr(struct views *v, size_t i)
{
	struct view_state *st = &v->states[i];
	int err;

	if (!st->jfr && !st->jfr_done && (err = open_jfr(v, i)))
		jfr_failed(v, i, err);
	if (st->jfr && (err = jfr_writer_close(st->jfr)))
		v->results[i].errors[VIEW_JFR] = err;
	st->jfr = NULL;
	st->jfr_done = true;
}

/* Closes the live JFR file of view (of another write's plan, found by
 * name); the file's -errno, or 0. */
static int live_close(struct views *live, const struct view *view)
{
	for (size_t i = 0; i < live->n; i++) {
		if (strcmp(view_set_get(live->set, i)->name, view->name))
			continue;
		close_jfr(live, i);
		return live->results[i].errors[VIEW_JFR];
	}
	sp_err("%s/%s.jfr: not written while recording", live->settings->dir, view->name);
	return -ENOENT;
}

/* Removes the live files, unfinished: a write that cannot use them
 * writes those files itself. */
static void live_discard(struct views *live)
{
	for (size_t i = 0; i < live->n; i++) {
		if (live->states[i].jfr)
			jfr_writer_discard(live->states[i].jfr);
		live->states[i].jfr = NULL;
		live->states[i].jfr_done = true;
	}
	live->live_failed = true;
}

static void close_jfrs(struct views *v)
{
	for (size_t i = 0; i < v->n && v->settings->jfr; i++) {
		struct view_state *st = &v->states[i];

		if (v->wanted[i] && jfr_here(v, i))
			close_jfr(v, i);
		else if (v->wanted[i])
			v->results[i].errors[VIEW_JFR] =
				live_close(v->settings->live_jfr, view_set_get(v->set, i));
		strmap_free(st->tasks, NULL);
		st->tasks = NULL;
	}
}

/* realloc of *p from old to n elements of elem bytes, the new ones zero. */
static int resize(void **p, size_t old, size_t n, size_t elem)
{
	void *q = realloc(*p, n * elem);

	if (!q)
		return -ENOMEM;
	memset((char *)q + old * elem, 0, (n - old) * elem);
	*p = q;
	return 0;
}

/* Sizes the arrays to the set's views (a live set grows); the set's
 * views may have moved. */
static int fit_views(struct views *v)
{
	size_t n = view_set_count(v->set);

	if (n > v->n && (resize((void **)&v->results, v->n, n, sizeof(*v->results)) ||
			 resize((void **)&v->states, v->n, n, sizeof(*v->states)) ||
			 resize((void **)&v->wanted, v->n, n, sizeof(*v->wanted))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v->results[i].view = view_set_get(v->set, i);
		if (i >= v->n)
			v->wanted[i] = files_wanted(v->settings, v->results[i].view);
	}
	v->n = n;
	return 0;
}

/* Live files that missed a segment of r are left to this write, and so
 * are those of a recording without segments (whose info they lack). */
static void check_live(struct views *v, struct store_reader *r)
{
	struct views *live = v->settings->live_jfr;

	if (!live || v->settings->stages_only ||
	    (!live->live_failed && live->fed && live->fed == store_reader_segments(r)))
		return;
	live_discard(live);
	v->own_settings = *v->settings;
	v->own_settings.live_jfr = NULL;
	v->settings = &v->own_settings;
}

struct views *views_write(struct store_reader *r, const struct views_settings *s)
{
	struct views *v = calloc(1, sizeof(*v));
	int err = v ? 0 : -ENOMEM;

	if (v) {
		v->settings = s;
		check_live(v, r);
		v->info = store_reader_info(r);
		v->first_segment = s->first_segment;
		v->end_segment = s->end_segment && s->end_segment < store_reader_segments(r) ?
				 s->end_segment : store_reader_segments(r);
		v->set = view_set_plan(r, v->first_segment, v->end_segment);
		err = v->set ? 0 : -errno;
	}
	if (!err && (!(v->frames = calloc(JFR_MAX_FRAMES, sizeof(*v->frames))) || fit_views(v)))
		err = -ENOMEM;
	if (!err)
		err = time_pass(v, r);
	if (!err)
		close_jfrs(v);
	if (!err && !s->stages_only)
		err = view_text_write(r, v->set, v->settings, v->results);
	if (err) {
		if (err == -ENOMEM)
			sp_err("write the views of %s: %s", store_reader_path(r), strerror(ENOMEM));
		views_free(v);
		errno = -err;
		return NULL;
	}
	return v;
}

struct views *views_live_new(const struct views_settings *s)
{
	struct views *v = calloc(1, sizeof(*v));

	if (!v)
		return NULL;
	v->own_settings = *s;
	v->own_settings.live_jfr = NULL;
	v->settings = &v->own_settings;
	v->live = true;
	if (!(v->set = view_set_new(false, 0)) ||
	    !(v->frames = calloc(JFR_MAX_FRAMES, sizeof(*v->frames))) || fit_views(v)) {
		views_free(v);
		return NULL;
	}
	return v;
}

int views_live_segment(struct views *v, const struct store_segment_written *seg)
{
	int err = v->live_failed ? -ECANCELED : 0;

	v->live_info = *seg->info;
	v->info = &v->live_info;
	if (!err && !seg->samples)
		err = seg->read_err ? seg->read_err : -EINVAL;
	if (!err && !(err = view_set_add(v->set, seg->labels, v->fed)) && !(err = fit_views(v)))
		err = file_segment(v, seg->samples, seg->labels, v->fed);
	if (!err)
		err = v->live_error;
	v->fed++;
	if (err && !v->live_failed) {
		sp_err("%s: the node's and executors' JFR files are left to the end of the "
		       "recording: %s", v->settings->dir,
		       err == -EINVAL ? "a segment did not read back" : strerror(-err));
		live_discard(v);
	}
	return err;
}

void views_free(struct views *v)
{
	if (!v)
		return;
	if (v->live && v->states)
		live_discard(v);
	/* A file still open here was not finished: it must not look whole. */
	for (size_t i = 0; v->states && i < v->n; i++) {
		if (v->states[i].jfr)
			jfr_writer_discard(v->states[i].jfr);
		strmap_free(v->states[i].tasks, NULL);
	}
	view_set_free(v->set);
	view_routes_free(&v->routes);
	free(v->results);
	free(v->states);
	free(v->frames);
	free(v->wanted);
	free(v);
}

size_t views_count(const struct views *v)
{
	return v->n;
}

const struct view_result *views_result(const struct views *v, size_t i)
{
	return &v->results[i];
}

int views_first_error(const struct views *v)
{
	for (size_t i = 0; i < v->n; i++)
		for (int f = 0; f < VIEW_FILES; f++)
			if (v->results[i].errors[f])
				return v->results[i].errors[f];
	return 0;
}
