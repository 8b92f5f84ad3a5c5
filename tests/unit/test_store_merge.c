/* test_store_merge.c - many segments, each with its own random share of
 * the same stacks, merged: every node once, in path order (depth first,
 * siblings by text), and every stack's count exact. Names that are
 * prefixes of each other and stacks that are prefixes of others test the
 * order; many segments with the same subtrees test the shortcut through
 * nodes already returned. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/sample_store.h"
#include "output/store_merge.h"
#include "tap.h"

#define STACKS 400
#define DEPTH_MAX 14
#define SAMPLES 30000

static const char *const names[] = { "f", "f0", "f00", "g", "run", "run_", "a", "b" };
#define NNAMES (sizeof(names) / sizeof(names[0]))

struct stack {
	int pid;                     /* 1 or 2 */
	int nframes;
	struct frame frames[DEPTH_MAX]; /* leaf first */
	char text[DEPTH_MAX * 8 + 16];  /* "proc;root;...;leaf" */
	uint64_t want, got;
};

static struct stack stacks[STACKS];
static char dir[] = "/tmp/test_store_merge.XXXXXX";

static struct stack *find(const char *text);

/* STACKS different stacks. */
static void make_stacks(void)
{
	for (int i = 0; i < STACKS; i++) {
		struct stack *s = &stacks[i];
		int len;

		s->pid = 1 + rand() % 2;
		s->nframes = 1 + rand() % DEPTH_MAX;
		len = snprintf(s->text, sizeof(s->text), "p-%d", s->pid);
		/* Shallow levels from few names: many stacks share prefixes. */
		for (int d = 0; d < s->nframes; d++) {
			const char *name = names[rand() % (d < 4 ? 2 : NNAMES)];

			s->frames[s->nframes - 1 - d] = (struct frame){ name, FRAME_NATIVE };
			len += snprintf(s->text + len, sizeof(s->text) - (size_t)len, ";%s", name);
		}
		if (find(s->text) != s)
			i--;
	}
}

static struct stack *find(const char *text)
{
	for (int i = 0; i < STACKS; i++)
		if (!strcmp(stacks[i].text, text))
			return &stacks[i];
	return NULL;
}

static int fill(void)
{
	struct sample_store_settings set = {
		.dir = dir, .info = { .cpu_period_ns = 10000000, .frequency_hz = 100, .host = "h" },
		.segment_bytes = 64u << 20, .segment_ns = 1000000000ULL,
	};
	struct sample_store *st = sample_store_open(&set);
	int err = st ? 0 : -1;

	for (int i = 0; !err && i < SAMPLES; i++) {
		/* Each segment (a second) draws from a different part of the
		 * stacks, so segments hold different subtrees. */
		int second = i / 500, k = (second * 37 + rand() % (STACKS / 2)) % STACKS;
		struct stack *s = &stacks[k];
		char process[16];
		struct resolved_sample rs = { .timestamp_ns = 2000000ULL * (uint64_t)i,
					      .pid = s->pid, .tid = s->pid, .kind = SAMPLE_CPU,
					      .frames = s->frames, .nframes = (size_t)s->nframes };
		struct sample_labels l = { .pid = s->pid, .tid = s->pid, .process = process,
					   .thread = "t", .app_id = "", .executor_id = "",
					   .stage = -1, .attempt = -1, .task = -1 };

		snprintf(process, sizeof(process), "p-%d", s->pid);
		s->want++;
		err = sample_store_add(st, &rs, &l) || sample_store_tick(st, rs.timestamp_ns);
	}
	if (!err)
		err = sample_store_finish(st);
	sample_store_free(st);
	return err;
}

/* Path order of a node after prev (both "a;b;c"): later at the first
 * level that differs, or deeper under the same path. */
static int after(const char *prev, const char *path)
{
	for (;;) {
		size_t lp = strcspn(prev, ";"), ln = strcspn(path, ";");
		int c = strncmp(prev, path, lp < ln ? lp : ln);

		if (c || lp != ln)
			return c ? c < 0 : lp < ln;
		if (!path[ln])
			return 0;   /* the same path, or an ancestor of prev */
		if (!prev[lp])
			return 1;   /* a descendant of prev */
		prev += lp + 1;
		path += ln + 1;
	}
}

static int compare_pointers(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;

	return (x > y) - (x < y);
}

/* Rows' label_id: below the merge's count, one per labels. */
static size_t wrong_label_ids(const struct store_node *n, const void **by_id, size_t nlabels)
{
	size_t wrong = 0;

	for (size_t i = 0; i < n->nrows; i++) {
		uint32_t id = n->rows[i].label_id;

		if (id >= nlabels || (by_id[id] && by_id[id] != n->rows[i].labels))
			wrong++;
		else
			by_id[id] = n->rows[i].labels;
	}
	return wrong;
}

static void check_merge(struct store_reader *r)
{
	struct store_merge *m = store_merge_open(r);
	size_t nlabels = m ? store_merge_labels(m) : 0, bad_ids = 0, shared = 0, used = 0;
	const void **by_id = calloc(nlabels ? nlabels : 1, sizeof(*by_id));
	char path[DEPTH_MAX + 2][16], text[sizeof(stacks[0].text)] = "", prev[sizeof(text)] = "";
	size_t nodes = 0, out_of_order = 0, unknown = 0, wrong = 0;
	struct store_node n;
	int rc = 0;

	while (m && (rc = store_merge_next(m, &n)) == 1) {
		size_t len = 0;

		nodes++;
		if (n.depth > DEPTH_MAX + 1 || n.len >= sizeof(path[0])) {
			unknown++;
			continue;
		}
		snprintf(path[n.depth - 1], sizeof(path[0]), "%.*s", (int)n.len, n.text);
		for (uint32_t d = 0; d < n.depth; d++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", d ? ";" : "",
						path[d]);
		if (*prev && !after(prev, text))
			out_of_order++;
		memcpy(prev, text, sizeof(prev));
		bad_ids += by_id ? wrong_label_ids(&n, by_id, nlabels) : 1;
		for (size_t i = 0; i < n.nrows; i++) {
			struct stack *s = find(text);

			if (s)
				s->got += n.rows[i].weight;
			else
				unknown++;
		}
	}
	for (int i = 0; i < STACKS; i++)
		wrong += stacks[i].got != stacks[i].want;
	CHECK(m && rc == 0, "the merge of %zu segments ends", store_reader_segments(r));
	CHECK(nodes > 100 && !out_of_order, "%zu nodes, each after the one before (%zu not)",
	      nodes, out_of_order);
	CHECK(!unknown, "every row is at a stored stack's leaf (%zu not)", unknown);
	CHECK(!wrong, "every stack's count is the number of its samples (%zu wrong)", wrong);
	for (size_t i = 0; by_id && i < nlabels; i++)
		if (by_id[i])
			by_id[used++] = by_id[i];
	qsort(by_id, used, sizeof(*by_id), compare_pointers);
	for (size_t i = 1; i < used; i++)
		shared += by_id[i] == by_id[i - 1];
	CHECK(nlabels >= store_reader_segments(r) && used > 1 && !bad_ids && !shared,
	      "rows' label ids: %zu used of %zu, each below the count (%zu not) and one per "
	      "labels (%zu shared)", used, nlabels, bad_ids, shared);
	free(by_id);
	store_merge_close(m);
}

int main(void)
{
	char file[64];
	struct store_reader *r;

	srand(41);
	if (!mkdtemp(dir))
		return 1;
	make_stacks();
	CHECK(fill() == 0, "%d samples stored", SAMPLES);
	snprintf(file, sizeof(file), "%s/samples.store", dir);
	r = store_reader_open(file);
	CHECK(r && store_reader_segments(r) >= 50, "one segment a second: %zu",
	      r ? store_reader_segments(r) : 0);
	if (r)
		check_merge(r);
	store_reader_close(r);
	remove(file);
	rmdir(dir);
	TAP_DONE();
}
