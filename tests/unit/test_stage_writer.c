/* test_stage_writer.c - stages' files written while recording: a stage's
 * files are there once STAGE_WRITER_QUIET segments have had none of its
 * samples, and not before; they are the files the stop would write; a
 * late sample writes them again, whole; the stop leaves the written ones
 * as they are and writes the rest; a store that cannot be read, or a
 * segment that did not read back, leaves them all to the stop. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output/sample_store.h"
#include "output/stage_writer.h"
#include "output/views.h"
#include "tap.h"

static const struct frame stack[] = { { "work", FRAME_JIT }, { "main", FRAME_NATIVE } };

struct run {
	char dir[64], store_path[128];
	struct views_settings settings;
	struct stage_writer *writer;
	struct sample_store *store;
	uint64_t t;
	bool unread;          /* the hook gets segments as not read back */
};

static void segment_written(void *ctx, const struct store_segment_written *seg)
{
	struct run *r = ctx;
	struct store_segment_written unread = *seg;

	unread.labels = NULL;
	unread.read_err = -EINVAL;
	stage_writer_segment(r->writer, r->unread ? &unread : seg);
}

static int open_run(struct run *r)
{
	struct sample_store_settings s = {
		.info = { .cpu_period_ns = 10000000, .frequency_hz = 100, .host = "h" },
		.segment_bytes = 64u << 20,
		.segment_ns = 1,    /* a segment closes when a tick asks */
		.segment_written = segment_written,
	};

	*r = (struct run){ 0 };
	snprintf(r->dir, sizeof(r->dir), "/tmp/test_stage_writer.XXXXXX");
	if (!mkdtemp(r->dir))
		return -1;
	snprintf(r->store_path, sizeof(r->store_path), "%s/samples.store", r->dir);
	r->settings = (struct views_settings){ .dir = r->dir, .jfr = true, .attribution = "thread" };
	r->writer = stage_writer_new(r->store_path, &r->settings);
	s.dir = r->dir;
	s.segment_ctx = r;
	r->t = 1000000000ULL;
	r->store = r->writer ? sample_store_open(&s) : NULL;
	return r->store ? 0 : -1;
}

static void add(struct run *r, int stage, int n)
{
	for (int i = 0; i < n; i++) {
		struct resolved_sample s = { .timestamp_ns = r->t += 1000000, .pid = 9, .tid = 10,
					     .kind = SAMPLE_CPU, .frames = stack, .nframes = 2 };
		struct sample_labels l = { .pid = 9, .tid = 10, .process = "java-9", .thread = "t",
					   .app_id = "app-1", .executor_id = "1", .stage = stage,
					   .attempt = 0, .task = stage >= 0 ? 100 + stage : -1,
					   .flags = LABEL_EXECUTOR_VIEWS };

		sample_store_add(r->store, &s, &l);
	}
}

/* Closes the segment, then what the recorder does between batches. */
static int segment_end(struct run *r)
{
	sample_store_tick(r->store, UINT64_MAX);
	return stage_writer_tick(r->writer);
}

static char *slurp(const char *dir, const char *name)
{
	static char buf[4096];
	char path[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/app-1/exec-1/%s", dir, name);
	if (!(f = fopen(path, "r")))
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static ino_t inode(const char *dir, const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/app-1/exec-1/%s", dir, name);
	return stat(path, &st) ? 0 : st.st_ino;
}

/* The stop: views written with what the writer did left out, into dir;
 * or every view (no writer), as `report` does. */
static struct views *write_all(struct run *r, const char *dir, bool leave_out_written)
{
	struct views_settings s = r->settings;
	struct store_reader *reader = store_reader_open(r->store_path);
	struct views *v;

	s.dir = dir;
	if (leave_out_written) {
		s.stage_wanted = stage_writer_wanted;
		s.stage_ctx = r->writer;
	}
	v = reader ? views_write(reader, &s) : NULL;
	store_reader_close(reader);
	return v;
}

static void cleanup(struct run *r, const char *also)
{
	char cmd[256];

	sample_store_free(r->store);
	stage_writer_free(r->writer);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", r->dir, also ? also : "");
	if (system(cmd))
		printf("# could not remove %s\n", r->dir);
}

static bool same_file(const char *a_dir, const char *b_dir, const char *name)
{
	char *a = slurp(a_dir, name), *copy = a ? strdup(a) : NULL;
	char *b = slurp(b_dir, name);
	bool same = copy && b && !strcmp(copy, b);

	free(copy);
	return same;
}

static void test_ended_and_late(void)
{
	struct run r;
	struct stage_writer_stats st;
	char again[64] = "/tmp/test_stage_writer.again.XXXXXX";
	ino_t four;
	struct views *v, *all;

	if (open_run(&r) || !mkdtemp(again))
		return;
	add(&r, 3, 5);
	segment_end(&r);
	add(&r, 3, 2);
	add(&r, 4, 1);
	segment_end(&r);
	add(&r, 4, 3);
	segment_end(&r);
	CHECK(!slurp(r.dir, "stage-3.folded"), "a stage one segment after its last: not yet");
	add(&r, 5, 1);
	CHECK(segment_end(&r) == 0, "a write while recording");
	CHECK_STR(slurp(r.dir, "stage-3.folded"), "java-9;main;work 7\n",
		  "two segments after its last sample, stage 3's files: its samples of both "
		  "segments");
	CHECK(inode(r.dir, "stage-3.jfr") && !slurp(r.dir, "stage-4.folded") &&
	      !slurp(r.dir, "all.folded"), "its JFR file too; not stage 4 yet, nor the executor's");
	add(&r, 5, 1);
	segment_end(&r);
	CHECK_STR(slurp(r.dir, "stage-4.folded"), "java-9;main;work 4\n", "then stage 4's");
	four = inode(r.dir, "stage-4.folded");
	add(&r, 3, 1);      /* late */
	add(&r, 5, 1);
	segment_end(&r);
	add(&r, 5, 1);
	segment_end(&r);
	CHECK_STR(slurp(r.dir, "stage-3.folded"), "java-9;main;work 7\n",
		  "a late sample: not written again until its stage is quiet again");
	add(&r, 5, 1);
	segment_end(&r);
	CHECK_STR(slurp(r.dir, "stage-3.folded"), "java-9;main;work 8\n",
		  "then written again, whole: 7 + 1");
	stage_writer_stats(r.writer, &st);
	CHECK(st.stages == 3 && st.written == 3 && st.rewritten == 1 && !st.left_to_stop,
	      "3 stages, 3 writes, 1 of them again (%llu, %llu, %llu)",
	      (unsigned long long)st.stages, (unsigned long long)st.written,
	      (unsigned long long)st.rewritten);
	add(&r, 5, 2);
	sample_store_finish(r.store);
	v = write_all(&r, r.dir, true);
	all = write_all(&r, again, false);
	CHECK(v && all && !views_first_error(v) && !views_first_error(all), "the stop's files");
	CHECK(inode(r.dir, "stage-4.folded") == four, "the stop leaves a written stage as it is");
	CHECK_STR(slurp(r.dir, "stage-5.folded"), "java-9;main;work 7\n",
		  "and writes a stage that was still running");
	CHECK(same_file(r.dir, again, "stage-3.folded") && same_file(r.dir, again, "stage-4.folded") &&
	      same_file(r.dir, again, "stage-5.folded") && same_file(r.dir, again, "all.folded"),
	      "every folded file the same as every view written at once");
	views_free(v);
	views_free(all);
	cleanup(&r, again);
}

/* The stop, after a failure left stages 3 and 4 to it: it writes them. */
static void stop_writes_stages_3_and_4(struct run *r)
{
	struct views *v;

	sample_store_finish(r->store);
	v = write_all(r, r->dir, true);
	CHECK(v && !views_first_error(v), "the stop writes them");
	CHECK_STR(slurp(r->dir, "stage-3.folded"), "java-9;main;work 2\n", "stage 3 at the stop");
	CHECK_STR(slurp(r->dir, "stage-4.folded"), "java-9;main;work 2\n", "stage 4 at the stop");
	views_free(v);
	cleanup(r, NULL);
}

/* A store that cannot be read while recording: the stages wait for the stop. */
static void test_unreadable(void)
{
	struct run r;
	struct stage_writer_stats st;
	char moved[160];
	int err;

	if (open_run(&r))
		return;
	snprintf(moved, sizeof(moved), "%s.moved", r.store_path);
	add(&r, 3, 2);
	segment_end(&r);
	add(&r, -1, 1);     /* outside any stage: a segment for the count */
	segment_end(&r);
	add(&r, -1, 1);
	sample_store_tick(r.store, UINT64_MAX);
	rename(r.store_path, moved);
	err = stage_writer_tick(r.writer);
	rename(moved, r.store_path);
	stage_writer_stats(r.writer, &st);
	CHECK(err < 0 && st.left_to_stop == 1 && !st.written && !slurp(r.dir, "stage-3.folded"),
	      "the write fails and its stage is left to the stop (%d)", err);
	add(&r, 4, 2);
	for (int i = 0; i < 3; i++) {
		segment_end(&r);
		add(&r, -1, 1);
	}
	stage_writer_stats(r.writer, &st);
	CHECK(!st.written && !slurp(r.dir, "stage-4.folded"),
	      "no more writes while recording after a failure");
	stop_writes_stages_3_and_4(&r);
}

/* A segment the store could not read back: no stage is written while
 * recording, and the stop writes them. */
static void test_segment_not_read_back(void)
{
	struct stage_writer_stats st;
	struct run r;

	if (open_run(&r))
		return;
	add(&r, 3, 2);
	r.unread = true;
	segment_end(&r);
	r.unread = false;
	add(&r, 4, 2);      /* it might have had samples in the unread one too */
	for (int i = 0; i < 4; i++) {
		segment_end(&r);
		add(&r, -1, 1);
	}
	stage_writer_stats(r.writer, &st);
	CHECK(!st.written && !slurp(r.dir, "stage-3.folded") && !slurp(r.dir, "stage-4.folded"),
	      "a segment not read back: no stage written while recording after it");
	stop_writes_stages_3_and_4(&r);
}

int main(void)
{
	test_ended_and_late();
	test_unreadable();
	test_segment_not_read_back();
	TAP_DONE();
}
