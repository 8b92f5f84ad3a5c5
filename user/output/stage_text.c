/* stage_text.c - stage views' folded files (view_text.h).
 *
 * A run is a stage's lines of one segment in text order: each a varint
 * length, the line, and its counts (samples, wall and off-CPU
 * nanoseconds) as varints. Runs of a stage that goes on past the segment
 * wait in the spool; at its last segment they merge into its files.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "base/byte_buf.h"
#include "base/grow_array.h"
#include "base/log.h"
#include "base/path_util.h"
#include "base/spill_file.h"
#include "output/row_walk.h"
#include "output/view_text.h"

struct stage_runs {
	struct byte_buf now;          /* this segment's run */
	struct spill_ref *spooled;    /* earlier segments' */
	size_t nspooled, cap;
};

struct stage_text {
	struct view_set *vs;
	const struct views_settings *s;
	const struct store_info *info;
	struct view_result *results;
	struct stage_runs *runs;      /* by view */
	bool *wanted;                 /* the stage views that get files */
	bool *spanned;                /* by segment: some wanted view spans it */
	size_t nspanned;
	struct row_walk *walk;
	struct spill_file *spool;     /* made at the first run that waits */
};

/* The segments some wanted stage spans: the others are not walked. */
static int mark_spans(struct stage_text *t)
{
	for (size_t v = 0; v < view_set_count(t->vs); v++) {
		const struct view *view = view_set_get(t->vs, v);

		if (t->wanted[v] && view->last_segment >= t->nspanned)
			t->nspanned = view->last_segment + 1;
	}
	if (!(t->spanned = calloc(t->nspanned ? t->nspanned : 1, sizeof(*t->spanned))))
		return -ENOMEM;
	for (size_t v = 0; v < view_set_count(t->vs); v++) {
		const struct view *view = view_set_get(t->vs, v);

		for (size_t seg = view->first_segment; t->wanted[v] && seg <= view->last_segment;
		     seg++)
			t->spanned[seg] = true;
	}
	return 0;
}

struct stage_text *stage_text_new(struct view_set *vs, const bool *wanted,
				  const struct views_settings *s, const struct store_info *info,
				  struct view_result *results)
{
	struct stage_text *t = calloc(1, sizeof(*t));
	size_t n = view_set_count(vs);

	if (!t || !(t->runs = calloc(n, sizeof(*t->runs))) ||
	    !(t->wanted = calloc(n, sizeof(*t->wanted)))) {
		stage_text_free(t);
		errno = ENOMEM;
		return NULL;
	}
	*t = (struct stage_text){ .vs = vs, .s = s, .info = info, .results = results,
				  .runs = t->runs, .wanted = t->wanted };
	for (size_t v = 0; v < n; v++)
		t->wanted[v] = view_set_get(vs, v)->kind == VIEW_STAGE && wanted[v];
	if (mark_spans(t) || !(t->walk = row_walk_new(vs, t->wanted, info->cpu_period_ns))) {
		stage_text_free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

void stage_text_free(struct stage_text *t)
{
	if (!t)
		return;
	for (size_t v = 0; t->runs && v < view_set_count(t->vs); v++) {
		byte_buf_free(&t->runs[v].now);
		free(t->runs[v].spooled);
	}
	row_walk_free(t->walk);
	spill_file_free(t->spool);
	free(t->runs);
	free(t->wanted);
	free(t->spanned);
	free(t);
}

static int on_counts(void *ctx, uint32_t v, const char *line, size_t len, uint32_t depth,
		     const struct row_counts *c)
{
	struct byte_buf *b = &((struct stage_text *)ctx)->runs[v].now;

	(void)depth;
	byte_buf_str(b, line, len);
	byte_buf_varint(b, c->cpu);
	byte_buf_varint(b, c->wall_ns);
	byte_buf_varint(b, c->off_ns);
	return b->failed ? -ENOMEM : 0;
}

/* A run being merged: its bytes and its current line. */
struct run_reader {
	struct byte_reader r;
	const char *line;
	size_t len;
	uint64_t cpu, wall_ns, off_ns;
	bool done;
};

static void next_line(struct run_reader *rr)
{
	rr->done = rr->r.p == rr->r.end;
	if (rr->done)
		return;
	rr->line = byte_reader_str(&rr->r, SIZE_MAX, &rr->len);
	rr->cpu = byte_reader_varint(&rr->r);
	rr->wall_ns = byte_reader_varint(&rr->r);
	rr->off_ns = byte_reader_varint(&rr->r);
	rr->done = rr->r.failed;   /* runs are ours, made in this process */
}

/* The order of the rows: frame by frame, the shorter of two frames that
 * start alike first, and a stack before its callees. */
static int compare_lines(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i = 0;

	while (i < alen && i < blen && a[i] == b[i])
		i++;
	if (i == alen || i == blen)
		return (alen > blen) - (alen < blen);
	if (a[i] == ';')
		return -1;
	if (b[i] == ';')
		return 1;
	return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
}

struct stage_files {
	struct atomic_file af[3];
	FILE *out[3];
};

static const enum view_file stage_file[3] = { VIEW_FOLDED, VIEW_WALL_FOLDED, VIEW_OFF_CPU_FOLDED };

static bool stage_file_wanted(const struct store_info *info, int k)
{
	return k == 0 || (k == 1 && (info->flags & STORE_WALL)) ||
	       (k == 2 && (info->flags & STORE_OFF_CPU));
}

static void open_files(struct stage_text *t, size_t v, struct stage_files *f)
{
	const struct view *view = view_set_get(t->vs, v);
	char name[VIEW_NAME_MAX + 16], path[PATH_MAX];

	for (int k = 0; k < 3; k++) {
		int err = 0;

		f->out[k] = NULL;
		if (!stage_file_wanted(t->info, k))
			continue;
		view_file_name(view, stage_file[k], false, name, sizeof(name));
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", t->s->dir, name) >= sizeof(path))
			err = -ENAMETOOLONG;
		else
			err = make_parent_dirs(path);
		if (err)
			sp_err("write %s/%s: %s", t->s->dir, name, strerror(-err));
		else if (!(f->out[k] = atomic_file_open(&f->af[k], path)))
			err = -errno;
		t->results[v].errors[stage_file[k]] = err;
	}
}

static uint64_t in_units(uint64_t count, uint64_t unit)
{
	return count / unit + (count % unit >= unit - unit / 2);
}

static void write_merged(struct stage_text *t, struct stage_files *f, const char *line, size_t len,
			 const uint64_t sums[3])
{
	uint64_t counts[3] = { sums[0], t->info->wall_interval_ns ?
				       in_units(sums[1], t->info->wall_interval_ns) : 0,
			       in_units(sums[2], 1000000) };

	for (int k = 0; k < 3; k++)
		if (f->out[k] && counts[k])
			fprintf(f->out[k], "%.*s %llu\n", (int)len, line, (unsigned long long)counts[k]);
}

/* Merges runs[0, n) into f: equal lines summed. */
static void merge_runs(struct stage_text *t, struct run_reader *runs, size_t n,
		       struct stage_files *f)
{
	for (size_t i = 0; i < n; i++)
		next_line(&runs[i]);
	for (;;) {
		struct run_reader *least = NULL;
		uint64_t sums[3] = { 0, 0, 0 };
		const char *line;
		size_t len;

		for (size_t i = 0; i < n; i++)
			if (!runs[i].done && (!least || compare_lines(runs[i].line, runs[i].len,
								      least->line, least->len) < 0))
				least = &runs[i];
		if (!least)
			return;
		line = least->line;
		len = least->len;
		for (size_t i = 0; i < n; i++) {
			if (runs[i].done || compare_lines(runs[i].line, runs[i].len, line, len))
				continue;
			sums[0] += runs[i].cpu;
			sums[1] += runs[i].wall_ns;
			sums[2] += runs[i].off_ns;
			if (&runs[i] != least)
				next_line(&runs[i]);
		}
		write_merged(t, f, line, len, sums);
		next_line(least);
	}
}

/* The stage's files from its runs, or walk_err for each of them; the runs go. */
static void finish_stage(struct stage_text *t, size_t v, int walk_err)
{
	struct stage_runs *sr = &t->runs[v];
	struct run_reader *runs = calloc(sr->nspooled + 1, sizeof(*runs));
	void **data = calloc(sr->nspooled + 1, sizeof(*data));
	struct stage_files f;
	int err = walk_err ? walk_err : runs && data ? 0 : -ENOMEM;   /* no part-written file */

	for (size_t i = 0; !err && i < sr->nspooled; i++) {
		err = spill_file_get(t->spool, &sr->spooled[i], &data[i]);
		runs[i].r = byte_reader_of(data[i], sr->spooled[i].bytes);
	}
	if (!err) {
		runs[sr->nspooled].r = byte_reader_of(sr->now.data, sr->now.len);
		open_files(t, v, &f);
		merge_runs(t, runs, sr->nspooled + 1, &f);
		for (int k = 0; k < 3; k++) {
			int e = f.out[k] ? atomic_file_commit(&f.af[k], 0) : 0;

			if (e)
				t->results[v].errors[stage_file[k]] = e;
		}
	} else {
		for (int k = 0; k < 3; k++)
			if (stage_file_wanted(t->info, k))
				t->results[v].errors[stage_file[k]] = err;
	}
	for (size_t i = 0; data && i < sr->nspooled; i++)
		free(data[i]);
	free(data);
	free(runs);
	for (size_t i = 0; i < sr->nspooled; i++)
		spill_file_discard(t->spool, &sr->spooled[i]);
	byte_buf_free(&sr->now);
	free(sr->spooled);
	*sr = (struct stage_runs){ 0 };
}

/* This segment's run waits for the stage's next segments. */
static int spool_run(struct stage_text *t, size_t v)
{
	struct stage_runs *sr = &t->runs[v];
	int err;

	if (!t->spool && !(t->spool = spill_file_new(t->s->dir, "stages' lines")))
		return -errno;
	if (grow_array((void **)&sr->spooled, &sr->cap, sr->nspooled + 1, sizeof(*sr->spooled)))
		return -ENOMEM;
	err = spill_file_put(t->spool, sr->now.data, sr->now.len, &sr->spooled[sr->nspooled]);
	if (!err)
		sr->nspooled++;
	byte_buf_free(&sr->now);
	return err;
}

int stage_text_segment(struct stage_text *t, struct store_reader *r, size_t seg)
{
	struct store_merge *m;
	int err;

	if (seg >= t->nspanned || !t->spanned[seg])
		return 0;
	m = store_merge_open_range(r, seg, 1);
	err = m ? 0 : -errno;

	if (!err)
		err = row_walk_run(t->walk, m, on_counts, t);
	store_merge_close(m);
	for (size_t v = 0; v < view_set_count(t->vs); v++) {
		const struct view *view = view_set_get(t->vs, v);

		if (!t->wanted[v] || view->first_segment > seg)
			continue;
		if (view->last_segment == seg)
			finish_stage(t, v, err);
		else if (t->runs[v].now.len && !err && (err = spool_run(t, v)))
			sp_err("keep the lines of %s until its stage ends: %s", view->name,
			       strerror(-err));
	}
	return err;
}
