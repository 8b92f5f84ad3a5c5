/* view_text.c - see view_text.h. This file writes the node's and the
 * executors' views from the merged rows; stage_text.c the stages'. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "base/log.h"
#include "base/path_util.h"
#include "base/strmap.h"
#include "output/flame_page.h"
#include "output/row_walk.h"
#include "output/view_text.h"

/* A view's text kinds: its folded files and their pages. */
enum text_kind { TEXT_CPU, TEXT_WALL, TEXT_OFF_CPU, TEXT_KINDS };

static const enum view_file folded_file[TEXT_KINDS] = { VIEW_FOLDED, VIEW_WALL_FOLDED,
							VIEW_OFF_CPU_FOLDED };
static const enum view_file page_file[TEXT_KINDS] = { VIEW_FOLDED_HTML, VIEW_WALL_HTML,
						      VIEW_OFF_CPU_HTML };

/* Names of the state frames of a wall page, as flame.js knows them. */
static const char *const state_frames[ROW_STATES] = {
	[SP_STATE_RUNNING] = "[on CPU]", [SP_STATE_PREEMPTED] = "[preempted]",
	[SP_STATE_SLEEPING] = "[sleeping]", [SP_STATE_UNINTERRUPTIBLE] = "[uninterruptible]",
	[SP_STATE_OTHER] = "[other state]",
};

/* count / unit, rounded to nearest (half up), without overflow. */
static uint64_t in_units(uint64_t count, uint64_t unit)
{
	return count / unit + (count % unit >= unit - unit / 2);
}

static bool text_wanted(const struct store_info *info, enum text_kind k)
{
	return k == TEXT_CPU || (k == TEXT_WALL && (info->flags & STORE_WALL)) ||
	       (k == TEXT_OFF_CPU && (info->flags & STORE_OFF_CPU));
}

struct whole_view {
	struct atomic_file *files[TEXT_KINDS];
	FILE *out[TEXT_KINDS];
	struct page_builder *pages[TEXT_KINDS];
};

struct whole_pass {
	struct view_set *vs;
	const struct views_settings *s;
	const struct store_info *info;
	struct view_result *results;
	struct whole_view *views;     /* by view; only the node's and executors' */
	bool *wanted;
	const struct page_path *path;
};

static int open_folded(struct whole_pass *p, size_t v, enum text_kind k)
{
	const struct view *view = view_set_get(p->vs, v);
	struct whole_view *wv = &p->views[v];
	char name[VIEW_NAME_MAX + 16], path[PATH_MAX];
	int err = 0;

	view_file_name(view, folded_file[k], false, name, sizeof(name));
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", p->s->dir, name) >= sizeof(path))
		err = -ENAMETOOLONG;
	else if (!(err = make_parent_dirs(path)) &&
		 !(wv->files[k] = calloc(1, sizeof(struct atomic_file))))
		err = -ENOMEM;
	if (err)
		sp_err("write %s/%s: %s", p->s->dir, name, strerror(-err));
	else if (!(wv->out[k] = atomic_file_open(wv->files[k], path)))
		err = -errno;   /* said by atomic_file_open */
	if (err) {
		free(wv->files[k]);
		wv->files[k] = NULL;
		p->results[v].errors[folded_file[k]] = err;
	}
	return err;
}

/* What a page of kind k counts in all, in its units. */
static uint64_t page_total(const struct whole_pass *p, size_t v, enum text_kind k)
{
	const struct view_result *r = &p->results[v];

	if (k == TEXT_CPU)
		return r->cpu_samples;
	if (k == TEXT_WALL)
		return in_units(r->cpu_samples * p->info->cpu_period_ns + r->off_cpu_ns,
				p->info->wall_interval_ns);
	return in_units(r->off_cpu_ns, 1000000);
}

/* A stage's folded files are stage_text's; it gets its pages here. */
static int open_view(struct whole_pass *p, size_t v)
{
	struct whole_view *wv = &p->views[v];
	bool stage = view_set_get(p->vs, v)->kind == VIEW_STAGE;

	for (int k = 0; k < TEXT_KINDS; k++) {
		if (!text_wanted(p->info, k))
			continue;
		if (!stage)
			open_folded(p, v, k);
		if (p->s->html && !(wv->pages[k] = page_builder_new(page_total(p, v, k),
								     FLAME_MIN_WIDTH_DEFAULT)))
			return -ENOMEM;
	}
	return 0;
}

static void write_line(struct whole_pass *p, size_t v, enum text_kind k, const char *line,
		       size_t len, uint64_t count)
{
	FILE *out = p->views[v].out[k];

	if (out && count)
		fprintf(out, "%.*s %llu\n", (int)len, line, (unsigned long long)count);
}

static int on_counts(void *ctx, uint32_t v, const char *line, size_t len, uint32_t depth,
		     const struct row_counts *c)
{
	struct whole_pass *p = ctx;
	struct whole_view *wv = &p->views[v];
	uint64_t wall_unit = p->info->wall_interval_ns;
	int err = 0;

	write_line(p, v, TEXT_CPU, line, len, c->cpu);
	if (wall_unit)
		write_line(p, v, TEXT_WALL, line, len, in_units(c->wall_ns, wall_unit));
	write_line(p, v, TEXT_OFF_CPU, line, len, in_units(c->off_ns, 1000000));
	if (wv->pages[TEXT_CPU])
		err = page_builder_add(wv->pages[TEXT_CPU], p->path, depth, NULL, c->cpu);
	for (int s = 0; !err && wv->pages[TEXT_WALL] && s < ROW_STATES; s++)
		err = page_builder_add(wv->pages[TEXT_WALL], p->path, depth, state_frames[s],
				       in_units(c->state_ns[s], wall_unit));
	if (!err && wv->pages[TEXT_OFF_CPU])
		err = page_builder_add(wv->pages[TEXT_OFF_CPU], p->path, depth, NULL,
				       in_units(c->off_ns, 1000000));
	return err;
}

static void write_page(struct whole_pass *p, size_t v, enum text_kind k)
{
	const struct view *view = view_set_get(p->vs, v);
	struct flame_page_options po = { .min_width_pct = FLAME_MIN_WIDTH_DEFAULT,
					 .thread_states = k == TEXT_WALL };
	char name[VIEW_NAME_MAX + 16], path[PATH_MAX], title[512];
	struct flame_tree *tree;
	int err;

	tree = page_builder_finish(p->views[v].pages[k], &err);
	view_file_name(view, folded_file[k], false, name, sizeof(name));
	flame_page_mode_for(name, p->info->wall_interval_ns, &po.mode, &po.unit_ns);
	view_title(view, flame_page_mode_label(po.mode), title, sizeof(title));
	po.title = title;
	view_file_name(view, page_file[k], false, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", p->s->dir, name);
	if (tree)
		err = flame_page_write(tree, &po, path);
	else
		sp_err("flame graph %s: %s", path, strerror(-err));
	p->results[v].errors[page_file[k]] = err;
	flame_tree_free(tree);
}

static void close_view(struct whole_pass *p, size_t v, int err)
{
	struct whole_view *wv = &p->views[v];

	for (int k = 0; k < TEXT_KINDS; k++) {
		if (wv->files[k]) {
			int e = 0;

			if (err)   /* the walk's, said where it failed */
				atomic_file_discard(wv->files[k]);
			else
				e = atomic_file_commit(wv->files[k], 0);
			if (e)
				p->results[v].errors[folded_file[k]] = e;
			free(wv->files[k]);
		}
		if (wv->pages[k] && !err)
			write_page(p, v, k);
		page_builder_free(wv->pages[k]);
	}
}

/* Which stages get pages: those with at least STAGE_PAGE_SHARE of their
 * executor's on-CPU samples, at most STAGE_PAGES an executor (the
 * largest). Every stage's page is at hand with `sparkprof flame DIR
 * --stage S`: an application's thousands of short stages would otherwise
 * make thousands of pages. */
#define STAGE_PAGE_SHARE 0.01
#define STAGE_PAGES 100

struct stage_rank {
	size_t view;
	const struct view_result *executor;
};

/* By executor, then each executor's stages largest first. */
static int rank_order(const void *a, const void *b, void *ctx)
{
	const struct stage_rank *x = a, *y = b;
	const struct view_result *results = ctx;
	uint64_t sx = results[x->view].cpu_samples, sy = results[y->view].cpu_samples;

	if (x->executor != y->executor)
		return x->executor < y->executor ? -1 : 1;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return (x->view > y->view) - (x->view < y->view);
}

/* Marks in wanted the stages whose pages are written. 0 or -ENOMEM. */
static int want_stage_pages(struct whole_pass *p, bool *wanted)
{
	size_t n = view_set_count(p->vs), nr = 0;
	struct stage_rank *ranks = calloc(n ? n : 1, sizeof(*ranks));
	struct strmap *executors = strmap_new();
	char key[2 * VIEW_ID_MAX + 2];
	int err = ranks && executors ? 0 : -ENOMEM;

	for (size_t v = 0; !err && v < n; v++) {
		const struct view *view = view_set_get(p->vs, v);
		int len = snprintf(key, sizeof(key), "%s%c%s", view->app_id, 0, view->executor_id);
		void **slot;

		if (view->kind == VIEW_EXECUTOR &&
		    (slot = strmap_slot(executors, key, (size_t)len, &(int){ 0 })))
			*slot = &p->results[v];
	}
	for (size_t v = 0; !err && p->s->html && v < n; v++) {
		const struct view *view = view_set_get(p->vs, v);
		int len = snprintf(key, sizeof(key), "%s%c%s", view->app_id, 0, view->executor_id);
		const struct view_result *e = view->kind == VIEW_STAGE ?
			strmap_get(executors, key, (size_t)len) : NULL;

		if (e && p->results[v].cpu_samples &&
		    (double)p->results[v].cpu_samples >= STAGE_PAGE_SHARE * (double)e->cpu_samples)
			ranks[nr++] = (struct stage_rank){ v, e };
	}
	qsort_r(ranks, nr, sizeof(*ranks), rank_order, p->results);
	for (size_t i = 0, in_executor = 0; i < nr; i++) {
		in_executor = i && ranks[i].executor == ranks[i - 1].executor ? in_executor + 1 : 0;
		if (in_executor < STAGE_PAGES)
			wanted[ranks[i].view] = true;
	}
	strmap_free(executors, NULL);
	free(ranks);
	return err;
}

int view_text_write(struct store_reader *r, struct view_set *vs, const struct views_settings *s,
		    struct view_result *results)
{
	size_t n = view_set_count(vs);
	struct whole_pass p = { vs, s, store_reader_info(r), results,
				calloc(n, sizeof(*p.views)), calloc(n, sizeof(*p.wanted)), NULL };
	struct row_walk *w = NULL;
	struct store_merge *m = NULL;
	int err = p.views && p.wanted ? 0 : -ENOMEM;

	if (!err)
		err = want_stage_pages(&p, p.wanted);
	for (size_t v = 0; !err && v < n; v++)
		if ((p.wanted[v] = p.wanted[v] || view_set_get(vs, v)->kind != VIEW_STAGE))
			err = open_view(&p, v);
	if (!err && !(w = row_walk_new(vs, p.wanted, p.info->cpu_period_ns)))
		err = -ENOMEM;
	if (!err && !(m = store_merge_open(r)))
		err = -errno;
	if (!err) {
		p.path = row_walk_path(w);
		err = row_walk_run(w, m, on_counts, &p);
	}
	for (size_t v = 0; p.views && p.wanted && v < n; v++)
		if (p.wanted[v])
			close_view(&p, v, err);
	store_merge_close(m);
	row_walk_free(w);
	free(p.views);
	free(p.wanted);
	return err;
}
