/* test_sample_store.c - samples with labels through the store's segments
 * and back: the merged rows give every stack's counts by labels, the
 * samples every sample's time and frames, across many segments. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/sample_store.h"
#include "output/store_merge.h"
#include "output/store_segment.h"
#include "tap.h"

#define SAMPLES 20000

static const struct frame frames_a[] = { { "leaf_a", FRAME_NATIVE }, { "mid", FRAME_JIT },
					 { "main", FRAME_NATIVE } };
static const struct frame frames_b[] = { { "leaf;b", FRAME_KERNEL }, { "mid", FRAME_INTERPRETED },
					 { "main", FRAME_NATIVE } };

static char dir[] = "/tmp/test_sample_store.XXXXXX";

static struct sample_store *open_store(size_t segment_bytes, uint32_t flags)
{
	struct sample_store_settings s = {
		.dir = dir,
		.info = { .flags = flags, .start_monotonic_ns = 1000, .start_realtime_ns = 2000,
			  .cpu_period_ns = 10101010, .wall_interval_ns = 10000000,
			  .frequency_hz = 99, .host = "testhost" },
		.segment_bytes = segment_bytes,
		.segment_ns = 5000000000ULL,
	};

	return sample_store_open(&s);
}

/* Sample i: stack a or b, one of three threads, stage i % 4, CPU or off-CPU. */
static void sample_of(int i, struct resolved_sample *s, struct sample_labels *l, char *thread)
{
	bool b = i % 3 == 0, off = i % 5 == 0;

	snprintf(thread, 32, "worker-%d", i % 3);
	*s = (struct resolved_sample){ .timestamp_ns = 1000000ULL * (uint64_t)i, .pid = 42,
				       .tid = 100 + i % 3, .kind = off ? SAMPLE_OFF_CPU : SAMPLE_CPU,
				       .thread_state = off ? 2 : 0, .off_cpu_ns = off ? 3000 + (uint64_t)i : 0,
				       .frames = b ? frames_b : frames_a, .nframes = 3 };
	*l = (struct sample_labels){ .pid = 42, .tid = 100 + i % 3, .process = "java-42",
				     .thread = thread, .app_id = "app-1", .executor_id = "7",
				     .stage = i % 4, .attempt = 0, .task = i / 100, .flags = 1 };
}

struct expect {
	uint64_t cpu[2][4], off_ns[2][4]; /* by stack (a, b) and stage */
};

static int fill(struct sample_store *st, struct expect *e, uint64_t tick_every)
{
	for (int i = 0; i < SAMPLES; i++) {
		struct resolved_sample s;
		struct sample_labels l;
		char thread[32];
		int b = i % 3 == 0;

		sample_of(i, &s, &l, thread);
		if (sample_store_add(st, &s, &l))
			return -1;
		if (s.kind == SAMPLE_CPU)
			e->cpu[b][l.stage]++;
		else
			e->off_ns[b][l.stage] += s.off_cpu_ns;
		if (tick_every && i % tick_every == 0 && sample_store_tick(st, s.timestamp_ns))
			return -1;
	}
	return sample_store_finish(st);
}

/* Sums the merged rows by (stack, stage) and checks the tree's shape. */
static void check_rows(struct store_reader *r, const struct expect *e, const char *what)
{
	struct store_merge *m = store_merge_open(r);
	struct store_node n;
	struct expect got;
	char path[4][64] = { { 0 } };
	int rc, nodes = 0, order_ok = 1;

	memset(&got, 0, sizeof(got));
	CHECK(m != NULL, "%s: segments merge", what);
	while (m && (rc = store_merge_next(m, &n)) == 1) {
		nodes++;
		if (n.depth > 4 || n.len >= 64) {
			order_ok = 0;
			continue;
		}
		if (path[n.depth - 1][0] && strcmp(path[n.depth - 1], n.text) >= 0 && n.depth == 1)
			order_ok = 0;
		snprintf(path[n.depth - 1], sizeof(path[0]), "%s", n.text);
		for (size_t i = 0; i < n.nrows; i++) {
			const struct store_row *row = &n.rows[i];
			int b = !strcmp(n.text, "leaf_b_[k]");

			if (n.depth != 4 || strcmp(path[0], "java-42") || strcmp(path[1], "main"))
				order_ok = 0;
			if (row->kind == SAMPLE_CPU)
				got.cpu[b][row->labels->stage] += row->weight;
			else
				got.off_ns[b][row->labels->stage] += row->weight;
		}
	}
	CHECK(m && rc == 0, "%s: the merge ends", what);
	CHECK(nodes == 5, "%s: one tree: process, main, mid, two leaves (%d nodes)", what, nodes);
	CHECK(order_ok, "%s: every row at its leaf, under java-42;main;mid", what);
	CHECK(!memcmp(&got, e, sizeof(got)), "%s: every stage's counts, by stack", what);
	store_merge_close(m);
}

static void check_samples(struct store_reader *r, const char *what)
{
	size_t total = 0, bad = 0;
	uint64_t prev = 0;

	for (size_t i = 0; i < store_reader_segments(r); i++) {
		struct store_labels labels;
		struct store_samples s;

		if (store_labels_read(r, i, &labels) ||
		    store_samples_read(r, i, labels.n, &s)) {
			bad++;
			continue;
		}
		for (size_t k = 0; k < s.n; k++) {
			struct frame f[4];
			size_t nf = store_sample_frames(&s, s.samples[k].leaf, f, 4);
			int idx = (int)(s.samples[k].timestamp_ns / 1000000ULL);
			const struct frame *want = idx % 3 == 0 ? frames_b : frames_a;
			const struct sample_labels *l = &labels.labels[s.samples[k].labels];

			if (s.samples[k].timestamp_ns < prev || nf != 3 ||
			    strcmp(f[0].name, want[0].name) || f[0].type != want[0].type ||
			    f[1].type != want[1].type || l->stage != idx % 4 || l->tid != 100 + idx % 3)
				bad++;
			prev = s.samples[k].timestamp_ns;
		}
		total += s.n;
		store_samples_free(&s);
		store_labels_free(&labels);
	}
	CHECK(total == SAMPLES && !bad, "%s: %zu samples back in time order, frames and labels "
	      "exact (%zu wrong)", what, total, bad);
}

static void test_round_trip(size_t segment_bytes, uint64_t tick_every, size_t min_segments,
			    const char *what)
{
	struct expect e;
	struct sample_store *st = open_store(segment_bytes, 0);

	memset(&e, 0, sizeof(e));
	struct store_reader *r;
	char path[256];

	CHECK(st && fill(st, &e, tick_every) == 0, "%s: %d samples stored", what, SAMPLES);
	sample_store_free(st);
	snprintf(path, sizeof(path), "%s/samples.store", dir);
	r = store_reader_open(path);
	CHECK(r && store_reader_segments(r) >= min_segments, "%s: %zu segments", what,
	      r ? store_reader_segments(r) : 0);
	if (!r)
		return;
	CHECK(!strcmp(store_reader_info(r)->host, "testhost") &&
	      store_reader_info(r)->cpu_period_ns == 10101010, "%s: the recording's settings", what);
	check_rows(r, &e, what);
	check_samples(r, what);
	store_reader_close(r);
}

/* The merge walks r to its end, its deepest node want levels down. */
static void check_depth(struct store_reader *r, uint32_t want, const char *what)
{
	struct store_merge *m = store_merge_open(r);
	struct store_node n;
	uint32_t depth = 0;
	int rc = 0;

	while (m && (rc = store_merge_next(m, &n)) == 1)
		depth = n.depth > depth ? n.depth : depth;
	CHECK(m && rc == 0 && depth == want,
	      "%s: the rows merge, process and thread above the frames (depth %u)", what, depth);
	store_merge_close(m);
}

/* What the recorder may hand the store at its limits comes back: the
 * largest ids, texts past the reader's bound (cut between characters),
 * and the deepest stack, with the process and thread levels above it. */
static void test_limits(void)
{
	static struct frame deep[STORE_FRAMES_MAX];
	size_t big = STORE_TEXT_MAX + 4096;
	char *text = malloc(big + 1), path[256];
	struct sample_store *st = open_store(64u << 20, STORE_PER_THREAD);
	struct resolved_sample s = { .timestamp_ns = 5, .pid = 9, .tid = 9, .kind = SAMPLE_CPU,
				     .frames = deep, .nframes = STORE_FRAMES_MAX };
	struct sample_labels l = { .pid = 9, .tid = 9, .process = "p-9", .app_id = "app-2",
				   .executor_id = "1", .stage = INT32_MAX, .attempt = INT32_MAX,
				   .task = INT64_MAX };
	struct store_reader *r;

	/* "é" (2 bytes) from byte 1 on: byte STORE_TEXT_MAX is inside one. */
	text[0] = 'x';
	for (size_t i = 1; i + 1 < big; i += 2)
		memcpy(text + i, "\xc3\xa9", 2);
	text[big - 1] = '\0';
	l.thread = text;
	for (size_t i = 0; i < STORE_FRAMES_MAX; i++)
		deep[i] = (struct frame){ i == 0 ? text : "f", FRAME_NATIVE };
	CHECK(st && !sample_store_add(st, &s, &l) && !sample_store_finish(st),
	      "limits: a sample at every limit is stored");
	sample_store_free(st);
	snprintf(path, sizeof(path), "%s/samples.store", dir);
	r = store_reader_open(path);
	CHECK(r != NULL, "limits: the store opens");
	if (r) {
		struct store_labels labels;
		struct store_samples ss;
		int lerr = store_labels_read(r, 0, &labels), err = lerr;

		CHECK(!err && labels.n == 1 && labels.labels[0].stage == INT32_MAX &&
		      labels.labels[0].attempt == INT32_MAX && labels.labels[0].task == INT64_MAX,
		      "limits: the largest stage, attempt and task read back");
		CHECK(!err && strlen(labels.labels[0].thread) == STORE_TEXT_MAX - 1 &&
		      !strncmp(labels.labels[0].thread, text, STORE_TEXT_MAX - 1),
		      "limits: a longer thread name is cut to whole characters (%zu bytes)",
		      err ? 0 : strlen(labels.labels[0].thread));
		err = err ? err : store_samples_read(r, 0, labels.n, &ss);
		CHECK(!err, "limits: the samples read back");
		if (!err) {
			size_t nf = store_sample_frames(&ss, ss.samples[0].leaf, deep, STORE_FRAMES_MAX);

			CHECK(nf == STORE_FRAMES_MAX && strlen(deep[0].name) == STORE_TEXT_MAX - 1,
			      "limits: every frame of the deepest stack, its long name cut (%zu)", nf);
			store_samples_free(&ss);
		}
		if (!lerr)
			store_labels_free(&labels);
		check_depth(r, STORE_FRAMES_MAX + 2, "limits");
		store_reader_close(r);
	}
	free(text);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_round_trip(64u << 20, 0, 1, "one segment");
	test_round_trip(16u << 10, 500, 20, "many segments");
	test_limits();
	TAP_DONE();
}
