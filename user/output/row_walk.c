/* row_walk.c - see row_walk.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "base/sample.h"
#include "output/row_walk.h"
#include "output/store_file.h"

struct row_walk {
	struct view_set *vs;
	const bool *wanted;
	uint64_t cpu_period_ns;
	struct row_counts *counts;     /* by view */
	uint32_t *touched;             /* views counted at this node */
	bool *is_touched;
	size_t ntouched;
	struct view_routes routes;     /* by the merge's label_id */
	struct row_path path;
};

struct row_walk *row_walk_new(struct view_set *vs, const bool *wanted, uint64_t cpu_period_ns)
{
	struct row_walk *w = calloc(1, sizeof(*w));
	size_t n = view_set_count(vs);

	if (!w || !(w->counts = calloc(n, sizeof(*w->counts))) ||
	    !(w->touched = calloc(n, sizeof(*w->touched))) ||
	    !(w->is_touched = calloc(n, sizeof(*w->is_touched)))) {
		row_walk_free(w);
		errno = ENOMEM;
		return NULL;
	}
	w->vs = vs;
	w->wanted = wanted;
	w->cpu_period_ns = cpu_period_ns;
	return w;
}

void row_walk_free(struct row_walk *w)
{
	if (!w)
		return;
	free(w->counts);
	free(w->touched);
	free(w->is_touched);
	view_routes_free(&w->routes);
	row_path_free(&w->path);
	free(w);
}

static int likeliest_type(uint8_t types)
{
	static const enum frame_type preference[] = { FRAME_JIT, FRAME_INLINED, FRAME_INTERPRETED,
						      FRAME_PYTHON, FRAME_KERNEL, FRAME_CPP,
						      FRAME_NATIVE };

	for (size_t i = 0; i < sizeof(preference) / sizeof(preference[0]); i++)
		if (types & 1u << preference[i])
			return (int)preference[i];
	return -1;
}

static int grow_levels(struct row_path *p, size_t depth)
{
	size_t cap;

	if (depth < p->depth_cap)
		return 0;
#define GROW(a) (cap = p->depth_cap, grow_array((void **)&p->a, &cap, depth + 1, sizeof(*p->a)))
	if (GROW(ends) || GROW(texts) || GROW(lens) || GROW(types) || GROW(stamps))
		return -ENOMEM;
#undef GROW
	p->depth_cap = cap;
	p->path = (struct page_path){ p->texts, p->lens, p->types, p->stamps };
	return 0;
}

int row_path_enter(struct row_path *p, const struct store_node *n)
{
	size_t at;

	if (grow_levels(p, n->depth))
		return -ENOMEM;
	p->ends[0] = 0;
	at = p->ends[n->depth - 1] + (n->depth > 1);
	if (grow_array((void **)&p->line, &p->line_cap, at + n->len + 1, 1))
		return -ENOMEM;
	if (n->depth > 1)
		p->line[at - 1] = ';';
	memcpy(p->line + at, n->text, n->len);
	p->line[at + n->len] = '\0';
	p->ends[n->depth] = at + n->len;
	p->lens[n->depth] = n->len;
	p->types[n->depth] = n->types & 1u << STORE_TYPE_LABEL ? -1 : likeliest_type(n->types);
	p->stamps[n->depth] = ++p->stamp;
	p->depth = n->depth;
	/* The levels above point at their place in the line, which may move. */
	for (uint32_t d = 1; d <= n->depth; d++)
		p->texts[d] = p->line + p->ends[d] - p->lens[d];
	return 0;
}

bool row_path_is_frame(const struct row_path *p, uint32_t d)
{
	return p->types[d] >= 0;
}

void row_path_free(struct row_path *p)
{
	free(p->line);
	free(p->ends);
	free(p->texts);
	free(p->lens);
	free(p->types);
	free(p->stamps);
	*p = (struct row_path){ 0 };
}

static void count_row(struct row_walk *w, const struct store_row *row)
{
	const struct view_route *r = view_routes_get(&w->routes, w->vs, row->label_id, row->labels);
	const uint32_t *to = r->to;
	uint64_t wall = row->kind == SAMPLE_CPU ? row->weight * w->cpu_period_ns : row->weight;
	unsigned state = row->kind == SAMPLE_CPU ? SP_STATE_RUNNING
			 : row->state < ROW_STATES ? row->state : SP_STATE_OTHER;

	for (size_t i = 0; i < r->n; i++) {
		struct row_counts *c = &w->counts[to[i]];

		if (!w->wanted[to[i]])
			continue;
		if (!w->is_touched[to[i]]) {
			w->is_touched[to[i]] = true;
			w->touched[w->ntouched++] = to[i];
		}
		if (row->kind == SAMPLE_CPU)
			c->cpu += row->weight;
		else
			c->off_ns += row->weight;
		c->wall_ns += wall;
		c->state_ns[state] += wall;
	}
}

int row_walk_run(struct row_walk *w, struct store_merge *m, row_walk_fn fn, void *ctx)
{
	struct store_node n;
	int rc = 0, err = view_routes_reset(&w->routes, store_merge_labels(m));

	while (!err && (rc = store_merge_next(m, &n)) == 1) {
		if ((err = row_path_enter(&w->path, &n)))
			break;
		for (size_t i = 0; i < n.nrows; i++)
			count_row(w, &n.rows[i]);
		for (size_t i = 0; i < w->ntouched; i++) {
			uint32_t v = w->touched[i];

			if (!err)
				err = fn(ctx, v, w->path.line, w->path.ends[n.depth], n.depth,
					 &w->counts[v]);
			w->counts[v] = (struct row_counts){ 0 };
			w->is_touched[v] = false;
		}
		w->ntouched = 0;
	}
	return err ? err : rc;
}

const struct page_path *row_walk_path(const struct row_walk *w)
{
	return &w->path.path;
}
