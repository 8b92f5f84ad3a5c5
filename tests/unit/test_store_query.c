/* test_store_query.c - the samples `flame DIR` and `convert DIR` select:
 * an executor or a stage picks what its files hold, so with `--threads
 * tasks` not its other threads' samples, though they carry its labels. */
#include <stdio.h>
#include <stdlib.h>

#include "output/sample_store.h"
#include "output/store_query.h"
#include "tap.h"

static char dir[] = "/tmp/test_store_query.XXXXXX";

static const struct frame stack[] = { { "work", FRAME_NATIVE }, { "main", FRAME_NATIVE } };

/* Stage 3 of executor 1: n_task samples on a task thread, n_other on
 * another thread outside the executor's views. */
static int write_store(int n_task, int n_other)
{
	struct sample_store_settings s = {
		.dir = dir,
		.info = { .cpu_period_ns = 10000000, .frequency_hz = 100, .host = "h" },
		.segment_bytes = 1u << 20,
		.segment_ns = 60000000000ULL,
	};
	struct sample_store *st = sample_store_open(&s);
	int err = st ? 0 : -1;

	for (int i = 0; !err && i < n_task + n_other; i++) {
		bool task = i < n_task;
		struct resolved_sample rs = { .timestamp_ns = 1000 + (uint64_t)i, .pid = 7,
					      .tid = task ? 8 : 9, .kind = SAMPLE_CPU,
					      .frames = stack, .nframes = 2 };
		struct sample_labels l = { .pid = 7, .tid = rs.tid, .process = "java-7",
					   .thread = task ? "Executor task launch worker for task 3.0 in stage 3.0 (TID 5)"
							  : "shuffle-client-1",
					   .app_id = "app-1", .executor_id = "1", .stage = 3, .attempt = 0,
					   .task = task ? 5 : -1,
					   .flags = task ? LABEL_EXECUTOR_VIEWS : 0 };

		err = sample_store_add(st, &rs, &l);
	}
	if (!err)
		err = sample_store_finish(st);
	sample_store_free(st);
	return err;
}

static uint64_t total(struct store_reader *r, const struct label_filter *f)
{
	int err = 0;
	struct flame_tree *t = store_query_flame(r, f, QUERY_CPU, 0, &err);
	size_t n;
	uint64_t sum = t ? flame_tree_nodes(t, &n)[0].total[0] : UINT64_MAX;

	flame_tree_free(t);
	return sum;
}

int main(void)
{
	char path[256];
	struct store_reader *r;

	if (!mkdtemp(dir))
		return 1;
	CHECK(write_store(4, 6) == 0, "a store with stage 3's task thread and another thread");
	snprintf(path, sizeof(path), "%s/samples.store", dir);
	r = store_reader_open(path);
	CHECK(r != NULL, "it opens");
	if (!r)
		TAP_DONE();
	CHECK(total(r, &(struct label_filter){ .task = -1 }) == 10, "no filter: every sample");
	CHECK(total(r, &(struct label_filter){ .app_id = "app-1", .task = -1 }) == 10,
	      "the application: every sample of it");
	CHECK(total(r, &(struct label_filter){ .executor_id = "1", .task = -1 }) == 4,
	      "the executor: its views' samples only");
	CHECK(total(r, &(struct label_filter){ .by_stage = true, .stage = 3, .task = -1 }) == 4,
	      "the stage: its file's samples only");
	CHECK(total(r, &(struct label_filter){ .task = 5 }) == 4, "the task: its samples");
	store_reader_close(r);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		return 1;
	TAP_DONE();
}
