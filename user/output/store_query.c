/* store_query.c - see store_query.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/atomic_file.h"
#include "base/grow_array.h"
#include "base/log.h"
#include "base/strmap.h"
#include "output/page_builder.h"
#include "output/pprof.h"
#include "output/row_walk.h"
#include "output/store_merge.h"
#include "output/store_query.h"

bool label_filter_match(const struct label_filter *f, const struct sample_labels *l)
{
	/* An executor's or stage's samples are those its files hold. */
	if ((f->executor_id || f->by_stage) && !(l->flags & LABEL_EXECUTOR_VIEWS))
		return false;
	if (f->app_id && strcmp(f->app_id, l->app_id))
		return false;
	if (f->executor_id && strcmp(f->executor_id, l->executor_id))
		return false;
	if (f->by_stage && (l->stage != f->stage || (f->stage >= 0 && l->attempt != f->attempt)))
		return false;
	return f->task < 0 || l->task == f->task;
}

static uint64_t in_units(uint64_t count, uint64_t unit)
{
	return count / unit + (count % unit >= unit - unit / 2);
}

/* The matching rows' self at a node, in kind's units: per thread state
 * for wall time (each state a leaf of its own on the page). */
static void node_self(const struct store_node *n, const struct label_filter *f,
		      enum query_kind kind, const struct store_info *info,
		      uint64_t self[ROW_STATES])
{
	uint64_t raw[ROW_STATES] = { 0 };

	for (size_t i = 0; i < n->nrows; i++) {
		const struct store_row *row = &n->rows[i];
		unsigned state = row->kind == SAMPLE_CPU ? 0 : row->state < ROW_STATES ? row->state
											 : SP_STATE_OTHER;

		if (!label_filter_match(f, row->labels))
			continue;
		if (kind == QUERY_CPU && row->kind == SAMPLE_CPU)
			raw[0] += row->weight;
		else if (kind == QUERY_OFF_CPU && row->kind == SAMPLE_OFF_CPU)
			raw[0] += row->weight;
		else if (kind == QUERY_WALL)
			raw[state] += row->kind == SAMPLE_CPU ? row->weight * info->cpu_period_ns
							       : row->weight;
	}
	for (int s = 0; s < ROW_STATES; s++)
		self[s] = kind == QUERY_CPU ? raw[s]
			  : kind == QUERY_OFF_CPU ? in_units(raw[s], 1000000)
			  : in_units(raw[s], info->wall_interval_ns ? info->wall_interval_ns : 1);
}

static const char *const state_leaf[ROW_STATES] = {
	"[on CPU]", "[preempted]", "[sleeping]", "[uninterruptible]", "[other state]",
};

/* One pass: the total (b NULL), or the page (into b). */
static int flame_pass(struct store_reader *r, const struct label_filter *f, enum query_kind kind,
		      struct page_builder *b, uint64_t *total)
{
	struct store_merge *m = store_merge_open(r);
	struct row_path path = { 0 };
	struct store_node n;
	uint64_t self[ROW_STATES];
	int rc, err = m ? 0 : -errno;

	while (!err && (rc = store_merge_next(m, &n)) == 1) {
		node_self(&n, f, kind, store_reader_info(r), self);
		if (b && (err = row_path_enter(&path, &n)))
			break;
		for (int s = 0; s < ROW_STATES && !err; s++) {
			*total += self[s];
			if (b)
				err = page_builder_add(b, &path.path, n.depth,
						       kind == QUERY_WALL ? state_leaf[s] : NULL, self[s]);
		}
	}
	if (m && !err && rc < 0)
		err = rc;
	store_merge_close(m);
	row_path_free(&path);
	return err;
}

struct flame_tree *store_query_flame(struct store_reader *r, const struct label_filter *f,
				     enum query_kind kind, double min_width_pct, int *err)
{
	struct page_builder *b = NULL;
	struct flame_tree *t = NULL;
	uint64_t total = 0, again = 0;

	*err = flame_pass(r, f, kind, NULL, &total);
	if (!*err && !(b = page_builder_new(total, min_width_pct)))
		*err = -ENOMEM;
	if (!*err)
		*err = flame_pass(r, f, kind, b, &again);
	if (!*err)
		t = page_builder_finish(b, err);
	if (*err == -ENOMEM || *err == -E2BIG)
		sp_err("flame graph of %s: %s", store_reader_path(r), strerror(-*err));
	page_builder_free(b);
	return t;
}

static bool excepted(const struct sample_labels *l, const int64_t *except, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (l->task == except[i])
			return true;
	return false;
}

/* The path's frames as one stack text, without the process and thread
 * levels: the same code on two executors (or nodes) is one frame. */
static int frames_text(const struct row_path *p, char **buf, size_t *cap, size_t *len)
{
	*len = 0;
	for (uint32_t d = 1; d <= p->depth; d++) {
		if (!row_path_is_frame(p, d))
			continue;
		if (grow_array((void **)buf, cap, *len + p->lens[d] + 2, 1))
			return -ENOMEM;
		if (*len)
			(*buf)[(*len)++] = ';';
		memcpy(*buf + *len, p->texts[d], p->lens[d]);
		*len += p->lens[d];
	}
	return 0;
}

int store_query_tree_add(struct store_reader *r, const struct label_filter *f,
			 const int64_t *except, size_t nexcept, struct flame_tree *t, int column)
{
	struct store_merge *m = store_merge_open(r);
	struct row_path path = { 0 };
	struct store_node n;
	char *text = NULL;
	size_t text_cap = 0, text_len;
	int rc = 0, err = m ? 0 : -errno;

	while (!err && (rc = store_merge_next(m, &n)) == 1) {
		uint64_t self = 0;

		for (size_t i = 0; i < n.nrows; i++)
			if (n.rows[i].kind == SAMPLE_CPU && label_filter_match(f, n.rows[i].labels) &&
			    !excepted(n.rows[i].labels, except, nexcept))
				self += n.rows[i].weight;
		err = row_path_enter(&path, &n);
		if (!err && self && !(err = frames_text(&path, &text, &text_cap, &text_len)) &&
		    text_len)
			err = flame_tree_add_stack(t, text, text_len, self, column);
	}
	free(text);
	if (m && !err && rc < 0)
		err = rc;
	if (err == -ENOMEM)
		sp_err("flame graph of %s: %s", store_reader_path(r), strerror(ENOMEM));
	store_merge_close(m);
	row_path_free(&path);
	return err;
}

/* A pprof profile written as it is made (output/pprof_out.h): samples go
 * out as they are found, functions and strings the first time one is
 * needed, the bytes gzip'd as they come. */
struct pprof_stream {
	struct atomic_file af;
	FILE *f;
	z_stream z;
	bool z_open;
	int err;
	struct pprof_out out;
	struct strmap *functions;       /* "type:text" -> id */
	uint64_t next_function;
	const struct store_info *info;
	uint64_t *locations;            /* function id of each level, 0: not a frame */
	size_t locations_cap;
	uint64_t *stack;                /* a sample's, leaf first */
	size_t stack_cap;
};

static void stream_flush(struct pprof_stream *p, bool finish)
{
	uint8_t buf[65536];

	if (p->err || (!finish && p->out.bytes.len < (64u << 10)))
		return;
	if (p->out.failed) {
		p->err = -ENOMEM;
		return;
	}
	p->z.next_in = p->out.bytes.data;
	p->z.avail_in = (uInt)p->out.bytes.len;
	do {
		p->z.next_out = buf;
		p->z.avail_out = sizeof(buf);
		if (deflate(&p->z, finish ? Z_FINISH : Z_NO_FLUSH) == Z_STREAM_ERROR ||
		    fwrite(buf, 1, sizeof(buf) - p->z.avail_out, p->f) != sizeof(buf) - p->z.avail_out) {
			p->err = -EIO;
			return;
		}
	} while (p->z.avail_out == 0 || (finish && p->z.avail_in));
	byte_buf_clear(&p->out.bytes);
}

static uint64_t function_of(struct pprof_stream *p, const char *text, size_t len, int type)
{
	char key[STORE_TEXT_MAX + 16], name[STORE_TEXT_MAX + 16], system_name[STORE_TEXT_MAX + 16];
	size_t name_len;
	int inserted = 0, t = type < 0 ? FLAME_JAVA : type;
	void **slot;

	snprintf(key, sizeof(key), "%d:%.*s", t, (int)len, text);
	slot = strmap_slot(p->functions, key, strlen(key), &inserted);
	if (!slot) {
		p->out.failed = true;
		return 0;
	}
	if (!inserted)
		return (uintptr_t)*slot;
	*slot = (void *)(uintptr_t)++p->next_function;
	flame_frame_type(text, len, &name_len);
	snprintf(name, sizeof(name), "%.*s", (int)(t == FRAME_KERNEL ? name_len : len), text);
	snprintf(system_name, sizeof(system_name), "%s%s", name, pprof_type_suffixes[t]);
	pprof_out_function(&p->out, p->next_function, name, system_name, pprof_type_files[t]);
	return p->next_function;
}

static const char *const state_names[ROW_STATES] = {
	"running", "preempted", "sleeping", "uninterruptible", "other",
};

/* Room for a row's labels' numbers as text. */
struct label_text {
	char pid[16], name[256], stage[16], attempt[16], task[24];
};

static size_t row_labels(const struct store_row *row, struct label_text *t,
			 struct pprof_label *out)
{
	const struct sample_labels *l = row->labels;
	const char *dash = strrchr(l->process, '-');
	size_t n = 0;

	snprintf(t->pid, sizeof(t->pid), "%d", (int)l->pid);
	snprintf(t->name, sizeof(t->name), "%.*s",
		 (int)(dash && !strcmp(dash + 1, t->pid) ? (size_t)(dash - l->process)
							 : strlen(l->process)), l->process);
	out[n++] = (struct pprof_label){ "process.pid", t->pid };
	out[n++] = (struct pprof_label){ "process.name", t->name };
	out[n++] = (struct pprof_label){ "thread.name", l->thread };
	out[n++] = (struct pprof_label){ "thread.state", state_names[row->kind == SAMPLE_CPU ? 0 :
					 row->state < ROW_STATES ? row->state : SP_STATE_OTHER] };
	if (*l->app_id)
		out[n++] = (struct pprof_label){ "spark.app.id", l->app_id };
	if (*l->executor_id)
		out[n++] = (struct pprof_label){ "spark.executor.id", l->executor_id };
	if (l->stage >= 0) {
		snprintf(t->stage, sizeof(t->stage), "%d", (int)l->stage);
		snprintf(t->attempt, sizeof(t->attempt), "%d", (int)l->attempt);
		out[n++] = (struct pprof_label){ "spark.stage.id", t->stage };
		out[n++] = (struct pprof_label){ "spark.stage.attempt", t->attempt };
	}
	if (l->task >= 0) {
		snprintf(t->task, sizeof(t->task), "%lld", (long long)l->task);
		out[n++] = (struct pprof_label){ "spark.task.id", t->task };
	}
	return n;
}

static void write_sample(struct pprof_stream *p, const struct row_path *path,
			 const struct store_row *row)
{
	uint64_t cpu = row->kind == SAMPLE_CPU ? row->weight : 0;
	uint64_t off = row->kind == SAMPLE_OFF_CPU ? row->weight : 0;
	int64_t values[3];
	struct pprof_label labels[10];
	struct label_text text;
	size_t nvalues = 0, nlabels = row_labels(row, &text, labels), n = 0;

	if (grow_array((void **)&p->stack, &p->stack_cap, path->depth + 1, sizeof(*p->stack))) {
		p->out.failed = true;
		return;
	}
	for (uint32_t d = path->depth; d >= 1; d--)
		if (p->locations[d])
			p->stack[n++] = p->locations[d];
	values[nvalues++] = (int64_t)cpu;
	if (p->info->flags & STORE_WALL)
		values[nvalues++] = (int64_t)(cpu * p->info->cpu_period_ns + off);
	if (p->info->flags & STORE_OFF_CPU)
		values[nvalues++] = (int64_t)off;
	pprof_out_sample(&p->out, p->stack, n, values, nvalues, labels, nlabels);
}

static void write_head(struct pprof_stream *p)
{
	pprof_out_value_type(&p->out, false, "samples", "count", 0);
	if (p->info->flags & STORE_WALL)
		pprof_out_value_type(&p->out, false, "wall", "nanoseconds", 0);
	if (p->info->flags & STORE_OFF_CPU)
		pprof_out_value_type(&p->out, false, "offcpu", "nanoseconds", 0);
	pprof_out_value_type(&p->out, true, "cpu", "nanoseconds", (int64_t)p->info->cpu_period_ns);
}

static int pprof_rows(struct pprof_stream *p, struct store_reader *r, const struct label_filter *f)
{
	struct store_merge *m = store_merge_open(r);
	struct row_path path = { 0 };
	struct store_node n;
	int rc = 0, err = m ? 0 : -errno;

	while (!err && !p->err && (rc = store_merge_next(m, &n)) == 1) {
		if ((err = row_path_enter(&path, &n)) || (err = grow_array((void **)&p->locations,
				&p->locations_cap, n.depth + 1, sizeof(*p->locations))))
			break;
		p->locations[n.depth] = row_path_is_frame(&path, n.depth) ?
			function_of(p, n.text, n.len, path.types[n.depth]) : 0;
		for (size_t i = 0; i < n.nrows; i++)
			if (label_filter_match(f, n.rows[i].labels))
				write_sample(p, &path, &n.rows[i]);
		stream_flush(p, false);
	}
	if (!err && rc < 0)
		err = rc;
	store_merge_close(m);
	row_path_free(&path);
	return err;
}

static void stream_free(struct pprof_stream *p)
{
	if (!p)
		return;
	if (p->z_open)
		deflateEnd(&p->z);
	pprof_out_free(&p->out);
	strmap_free(p->functions, NULL);
	free(p->locations);
	free(p->stack);
	free(p);
}

int store_query_pprof(struct store_reader *r, const struct label_filter *f, const char *path)
{
	struct pprof_stream *p = calloc(1, sizeof(*p));
	int err = p ? 0 : -ENOMEM;

	if (p) {
		p->info = store_reader_info(r);
		p->functions = strmap_new();
		if (pprof_out_init(&p->out) || !p->functions ||
		    deflateInit2(&p->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			err = -ENOMEM;
		else
			p->z_open = true;
	}
	if (!err && !(p->f = atomic_file_open(&p->af, path)))
		err = -errno;
	if (!err) {
		write_head(p);
		err = pprof_rows(p, r, f);
		stream_flush(p, true);
		if (!err)
			err = p->err;
		if (err && err != -EIO && err != -ENOMEM)   /* said by the store's reader */
			atomic_file_discard(&p->af);
		else
			err = atomic_file_commit(&p->af, err);
	} else if (err == -ENOMEM) {
		sp_err("write %s: %s", path, strerror(ENOMEM));
	}
	stream_free(p);
	return err;
}
