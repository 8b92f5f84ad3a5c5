/* stage_writer.c - see stage_writer.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/strmap.h"
#include "output/stage_writer.h"
#include "output/store_segment.h"
#include "output/views.h"

#define EXECUTORS_MAX 65536

/* A stage attempt, keyed by its executor's number and its ids. */
struct stage_entry {
	uint32_t executor;        /* executors' index + 1; 0: an empty slot */
	int32_t stage, attempt;
	uint32_t first, last;     /* the segments it has samples in */
	uint32_t written_end;     /* its files hold the segments below; 0: none */
	bool due;                 /* in the write in progress */
};

struct stage_writer {
	char *path;
	const struct views_settings *settings;
	struct strmap *executors;   /* "app\0executor" -> index + 1 */
	struct stage_entry *slots;
	size_t nslots, count;       /* nslots: a power of two */
	uint32_t segments;          /* written so far */
	uint32_t checked;           /* segments when nothing was due */
	bool failed;                /* a write failed: the rest is the stop's */
	struct stage_writer_stats stats;
};

struct stage_writer *stage_writer_new(const char *store_path, const struct views_settings *s)
{
	struct stage_writer *w = calloc(1, sizeof(*w));

	if (!w || !(w->path = strdup(store_path)) || !(w->executors = strmap_new())) {
		stage_writer_free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->settings = s;
	return w;
}

void stage_writer_free(struct stage_writer *w)
{
	if (!w)
		return;
	strmap_free(w->executors, NULL);
	free(w->slots);
	free(w->path);
	free(w);
}

static size_t slot_of(const struct stage_writer *w, uint32_t executor, int32_t stage,
		      int32_t attempt)
{
	int32_t key[3] = { (int32_t)executor, stage, attempt };
	size_t i = fnv1a(FNV1A_INIT, key, sizeof(key)) & (w->nslots - 1);

	while (w->slots[i].executor && (w->slots[i].executor != executor ||
					w->slots[i].stage != stage ||
					w->slots[i].attempt != attempt))
		i = (i + 1) & (w->nslots - 1);
	return i;
}

/* Room for one more stage. 0 or -ENOMEM. */
static int grow(struct stage_writer *w)
{
	struct stage_entry *old = w->slots;
	size_t n = w->nslots;

	if ((w->count + 1) * 4 <= w->nslots * 3)
		return 0;
	w->nslots = n ? n * 2 : 1024;
	if (!(w->slots = calloc(w->nslots, sizeof(*w->slots)))) {
		w->slots = old;
		w->nslots = n;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (old[i].executor)
			w->slots[slot_of(w, old[i].executor, old[i].stage, old[i].attempt)] = old[i];
	free(old);
	return 0;
}

/* The number of an executor (ids cut as a view's are), added if new when
 * add; 0: none. */
static uint32_t executor_number(struct stage_writer *w, const char *app, const char *executor,
				bool add)
{
	char key[2 * VIEW_ID_MAX];
	int len = snprintf(key, sizeof(key), "%.*s%c%.*s", VIEW_ID_MAX - 1, app, 0,
			   VIEW_ID_MAX - 1, executor);
	int inserted = 0;
	void **slot;

	if (!add || strmap_count(w->executors) >= EXECUTORS_MAX)
		return (uint32_t)(uintptr_t)strmap_get(w->executors, key, (size_t)len);
	if (!(slot = strmap_slot(w->executors, key, (size_t)len, &inserted)))
		return 0;
	if (inserted)
		*slot = (void *)(uintptr_t)strmap_count(w->executors);
	return (uint32_t)(uintptr_t)*slot;
}

/* A stage's entry, made if new when add; NULL when it is not tracked. */
static struct stage_entry *find(struct stage_writer *w, const char *app, const char *executor,
				int32_t stage, int32_t attempt, bool add)
{
	uint32_t number = executor_number(w, app, executor, add);
	struct stage_entry *e;

	if (!number || (!w->nslots && (!add || grow(w))))
		return NULL;
	e = &w->slots[slot_of(w, number, stage, attempt)];
	if (e->executor || !add)
		return e->executor ? e : NULL;
	if (w->count >= STAGE_WRITER_STAGES || grow(w))
		return NULL;
	e = &w->slots[slot_of(w, number, stage, attempt)];
	*e = (struct stage_entry){ number, stage, attempt, w->segments, w->segments, 0, false };
	w->count++;
	w->stats.stages++;
	return e;
}

void stage_writer_segment(struct stage_writer *w, const struct store_segment_written *seg)
{
	const struct store_labels *labels = seg->labels;

	if (!labels) {
		w->failed = true;   /* our own bytes; the stop writes every stage */
		w->segments++;
		return;
	}
	for (size_t i = 0; i < labels->n; i++) {
		const struct sample_labels *l = &labels->labels[i];
		struct stage_entry *e;

		if (!(l->flags & LABEL_EXECUTOR_VIEWS) || l->stage < 0)
			continue;
		/* One not tracked (past the limits) is written at the stop. */
		if ((e = find(w, l->app_id, l->executor_id, l->stage, l->attempt, true)))
			e->last = w->segments;
	}
	w->segments++;
}

static struct stage_entry *entry_of_view(struct stage_writer *w, const struct view *v)
{
	return v->kind == VIEW_STAGE && v->stage >= 0 ?
		find(w, v->app_id, v->executor_id, v->stage, v->attempt, false) : NULL;
}

/* The stage views of the write in progress: the due ones. */
static bool due(void *ctx, const struct view *v)
{
	struct stage_entry *e = entry_of_view(ctx, v);

	return e && e->due;
}

/* Marks up to STAGE_WRITER_BATCH ended stages due, and the segments that
 * hold them whole; how many. */
static size_t mark_due(struct stage_writer *w, size_t *from, size_t *end)
{
	size_t n = 0;

	*from = SIZE_MAX;
	*end = 0;
	for (size_t i = 0; i < w->nslots && n < STAGE_WRITER_BATCH; i++) {
		struct stage_entry *e = &w->slots[i];

		if (!e->executor || e->written_end > e->last ||
		    (uint64_t)e->last + STAGE_WRITER_QUIET >= w->segments)
			continue;
		e->due = true;
		*from = e->first < *from ? e->first : *from;
		*end = e->last + 1 > *end ? e->last + 1 : *end;
		n++;
	}
	return n;
}

/* After a write: the due stages whose files were all written are done;
 * the others keep files older than their samples, so the stop writes them. */
static void settle(struct stage_writer *w, const struct views *v)
{
	for (size_t i = 0; v && i < views_count(v); i++) {
		const struct view_result *r = views_result(v, i);
		struct stage_entry *e = entry_of_view(w, r->view);
		bool ok = true;

		if (!e || !e->due)
			continue;
		for (int f = 0; f < VIEW_FILES; f++)
			ok = ok && !r->errors[f];
		if (!ok)
			continue;
		w->stats.written++;
		w->stats.rewritten += e->written_end > 0;
		e->written_end = e->last + 1;
		e->due = false;
	}
	for (size_t i = 0; i < w->nslots; i++) {
		if (w->slots[i].executor && w->slots[i].due) {
			w->slots[i].due = false;
			w->stats.left_to_stop++;
			w->failed = true;
		}
	}
}

int stage_writer_tick(struct stage_writer *w)
{
	struct views_settings s = *w->settings;
	struct store_reader *r;
	struct views *v = NULL;
	uint64_t t0 = monotonic_ns();
	size_t n;
	int err = 0;

	if (w->failed || w->checked == w->segments)
		return 0;
	if (!(n = mark_due(w, &s.first_segment, &s.end_segment))) {
		w->checked = w->segments;
		return 0;
	}
	s.stage_wanted = due;
	s.stage_ctx = w;
	s.stages_only = true;
	r = store_reader_open(w->path);
	if (!r || !(v = views_write(r, &s)))
		err = -errno;
	settle(w, v);
	views_free(v);
	store_reader_close(r);
	if (w->failed)
		sp_warn("%s: stages' files not written yet are left to the end of the recording",
			w->path);
	w->stats.write_ns += monotonic_ns() - t0;
	return err;
}

bool stage_writer_wanted(void *ctx, const struct view *v)
{
	struct stage_entry *e = entry_of_view(ctx, v);

	return !e || e->written_end <= v->last_segment || e->first != v->first_segment;
}

void stage_writer_stats(const struct stage_writer *w, struct stage_writer_stats *out)
{
	*out = w->stats;
	out->memory = w->nslots * sizeof(*w->slots) + strmap_memory(w->executors);
}
