/* test_views.c - a recording's files written from its sample store: the
 * node's, an executor's and its stages' folded files hold each stack's
 * counts as the samples say, however the samples were cut into segments
 * (a stage over many segments, a late sample of an ended stage), in the
 * folded format's rules; JFR files and pages are there; tasks are
 * counted per stage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/sample_store.h"
#include "output/views.h"
#include "tap.h"

static const struct frame stack_a[] = { { "do_sys_read", FRAME_KERNEL }, { "read", FRAME_NATIVE },
					{ "Foo.bar", FRAME_JIT }, { "main", FRAME_NATIVE } };
static const struct frame stack_odd[] = { { "a;b\nc", FRAME_NATIVE }, { "", FRAME_NATIVE } };
/* One name in two copies (two copies of a library): one line. */
static char copy_a[] = "libfoo_work", copy_b[] = "libfoo_work";
static const struct frame stack_copy_a[] = { { copy_a, FRAME_NATIVE }, { "main", FRAME_NATIVE } };
static const struct frame stack_copy_b[] = { { copy_b, FRAME_NATIVE }, { "main", FRAME_NATIVE } };

struct run {
	char dir[64];
	struct sample_store *store;
	uint64_t t;
};

static int open_run(struct run *r, uint32_t flags, size_t segment_bytes)
{
	struct sample_store_settings s = {
		.info = { .flags = flags, .cpu_period_ns = 10000000, .wall_interval_ns = 10000000,
			  .frequency_hz = 100, .host = "h" },
		.segment_bytes = segment_bytes,
		.segment_ns = 1,    /* a segment closes when a tick asks */
	};

	snprintf(r->dir, sizeof(r->dir), "/tmp/test_views.XXXXXX");
	if (!mkdtemp(r->dir))
		return -1;
	s.dir = r->dir;
	r->t = 1000000000ULL;
	r->store = sample_store_open(&s);
	return r->store ? 0 : -1;
}

/* Adds n samples of stack (CPU, or off-CPU of ns each) for a thread of
 * executor 1's stage (stage < -1: not an executor), closing the segment
 * after when close is set. */
static void add(struct run *r, const struct frame *stack, size_t nframes, int stage, int n,
		uint64_t off_ns, bool close)
{
	for (int i = 0; i < n; i++) {
		struct resolved_sample s = { .timestamp_ns = r->t += 1000000, .pid = 9, .tid = 10,
					     .kind = off_ns ? SAMPLE_OFF_CPU : SAMPLE_CPU,
					     .thread_state = off_ns ? 2 : 0, .off_cpu_ns = off_ns,
					     .frames = stack, .nframes = nframes };
		struct sample_labels l = { .pid = 9, .tid = 10, .process = stage >= -1 ? "java-9" : "x-2",
					   .thread = "worker;0", .app_id = stage >= -1 ? "app-1" : "",
					   .executor_id = stage >= -1 ? "1" : "", .stage = stage < -1 ? -1 : stage,
					   .attempt = 0, .task = stage >= 0 ? 100 + stage : -1,
					   .flags = stage >= -1 ? LABEL_EXECUTOR_VIEWS : 0 };

		sample_store_add(r->store, &s, &l);
	}
	if (close)
		sample_store_tick(r->store, UINT64_MAX);
}

static void task_mark(struct run *r, int stage, int64_t task)
{
	struct resolved_sample s = { .timestamp_ns = r->t += 1000, .pid = 9, .tid = 10,
				     .kind = SAMPLE_TASK };
	struct sample_labels l = { .pid = 9, .tid = 10, .process = "java-9", .thread = "t",
				   .app_id = "app-1", .executor_id = "1", .stage = stage,
				   .attempt = 0, .task = task, .flags = LABEL_EXECUTOR_VIEWS };

	sample_store_add(r->store, &s, &l);
}

static struct views *write_views(struct run *r, bool html)
{
	struct views_settings vs = { .dir = r->dir, .jfr = true, .html = html,
				     .attribution = "thread" };
	char path[128];
	struct store_reader *reader;
	struct views *v;

	if (sample_store_finish(r->store))
		return NULL;
	snprintf(path, sizeof(path), "%s/samples.store", r->dir);
	reader = store_reader_open(path);
	v = reader ? views_write(reader, &vs) : NULL;
	store_reader_close(reader);
	return v;
}

static char *slurp(const struct run *r, const char *name)
{
	static char buf[1 << 16];
	char path[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", r->dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static bool exists(const struct run *r, const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", r->dir, name);
	return !stat(path, &st) && st.st_size > 0;
}

static void cleanup(struct run *r)
{
	char cmd[128];

	sample_store_free(r->store);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", r->dir);
	if (system(cmd))
		printf("# could not remove %s\n", r->dir);
}

static const struct view_result *result(const struct views *v, const char *name)
{
	for (size_t i = 0; v && i < views_count(v); i++)
		if (!strcmp(views_result(v, i)->view->name, name))
			return views_result(v, i);
	return NULL;
}

/* The folded format's rules, as the files say them. */
static void test_format(void)
{
	struct run r;
	struct views *v;
	const char *text;

	if (open_run(&r, STORE_PER_THREAD, 64u << 20))
		return;
	add(&r, stack_a, 4, -2, 2, 0, false);
	add(&r, stack_a, 4, -2, 3, 0, true);
	add(&r, stack_odd, 2, -2, 1, 0, false);
	add(&r, NULL, 0, -2, 1, 0, false);
	add(&r, stack_copy_a, 2, -2, 4, 0, false);
	add(&r, stack_copy_b, 2, -2, 5, 0, false);
	v = write_views(&r, true);
	CHECK(v && views_first_error(v) == 0, "format: every file written");
	text = slurp(&r, "all.folded");
	CHECK(text && strstr(text, "x-2;worker_0;main;Foo.bar;read;do_sys_read_[k] 5\n"),
	      "root first, the thread's frame, kernel frames suffixed, counts of two segments "
	      "summed: %s", text ? text : "(none)");
	CHECK(text && strstr(text, "x-2;worker_0;[unknown];a_b_c 1\n"),
	      "';' and newlines in names cannot split the line, empty names read [unknown]");
	CHECK(text && strstr(text, "x-2;worker_0 1\n"), "a stack without frames keeps its own line");
	CHECK(text && strstr(text, "x-2;worker_0;main;libfoo_work 9\n"),
	      "names that read the same are one line");
	CHECK(exists(&r, "all.html") && exists(&r, "all.jfr"), "the node's page and JFR file");
	CHECK(result(v, "all") && result(v, "all")->cpu_samples == 16, "16 samples counted");
	views_free(v);
	cleanup(&r);
}

/* Counts of a stage that runs over many segments, a stage that ends and
 * gets a late sample after another ran, and the executor and node views:
 * each file holds the sums, whatever the segments. */
static void test_segments(size_t segment_bytes, const char *what)
{
	struct run r;
	struct views *v;
	const char *text;

	if (open_run(&r, STORE_WALL | STORE_OFF_CPU, segment_bytes))
		return;
	task_mark(&r, 3, 103);
	for (int k = 0; k < 30; k++) {
		add(&r, stack_a, 4, 3, 7, 0, false);
		add(&r, stack_a, 4, 3, 1, 6000000, k % 3 == 0);   /* 6 ms off the CPU */
	}
	task_mark(&r, 4, 104);
	task_mark(&r, 4, 105);
	task_mark(&r, 4, 105);
	add(&r, stack_copy_a, 2, 4, 50, 0, true);
	add(&r, stack_a, 4, 3, 2, 0, true);          /* a late sample of stage 3 */
	add(&r, stack_copy_b, 2, -1, 4, 0, false);   /* no stage */
	add(&r, stack_copy_b, 2, 5, 1, 0, false);    /* under 1% of the executor's */
	v = write_views(&r, true);
	CHECK(v && views_first_error(v) == 0, "%s: every file written", what);
	text = slurp(&r, "app-1/exec-1/stage-3.folded");
	CHECK(text && !strcmp(text, "java-9;main;Foo.bar;read;do_sys_read_[k] 212\n"),
	      "%s: stage 3's 210 + 2 late samples on one line: %s", what, text ? text : "(none)");
	text = slurp(&r, "app-1/exec-1/stage-3.wall.folded");
	/* 212 samples of 10 ms and 30 intervals of 6 ms: 212 + 18 units. */
	CHECK(text && !strcmp(text, "java-9;main;Foo.bar;read;do_sys_read_[k] 230\n"),
	      "%s: its wall time summed before rounding: %s", what, text ? text : "(none)");
	text = slurp(&r, "app-1/exec-1/stage-3.offcpu.folded");
	CHECK(text && !strcmp(text, "java-9;main;Foo.bar;read;do_sys_read_[k] 180\n"),
	      "%s: 180 ms off the CPU: %s", what, text ? text : "(none)");
	text = slurp(&r, "app-1/exec-1/stage-4.folded");
	CHECK(text && !strcmp(text, "java-9;main;libfoo_work 50\n"), "%s: stage 4", what);
	text = slurp(&r, "app-1/exec-1/no-stage.folded");
	CHECK(text && !strcmp(text, "java-9;main;libfoo_work 4\n"), "%s: no-stage", what);
	text = slurp(&r, "app-1/exec-1/all.folded");
	CHECK(text && !strcmp(text, "java-9;main;Foo.bar;read;do_sys_read_[k] 212\n"
				 "java-9;main;libfoo_work 55\n"),
	      "%s: the executor's: every stage, in text order: %s", what, text ? text : "(none)");
	CHECK(!strcmp(slurp(&r, "all.folded") ? slurp(&r, "all.folded") : "",
		      "java-9;main;Foo.bar;read;do_sys_read_[k] 212\njava-9;main;libfoo_work 55\n"),
	      "%s: the node's the same", what);
	CHECK(result(v, "app-1/exec-1/stage-3")->tasks == 1 &&
	      result(v, "app-1/exec-1/stage-4")->tasks == 2, "%s: tasks counted once each", what);
	CHECK(result(v, "app-1/exec-1/stage-3")->off_cpu_ns == 180000000,
	      "%s: stage 3's off-CPU time", what);
	CHECK(exists(&r, "app-1/exec-1/stage-3.jfr") && exists(&r, "app-1/exec-1/all.html") &&
	      exists(&r, "app-1/exec-1/stage-3.html") && exists(&r, "app-1/exec-1/stage-5.folded") &&
	      exists(&r, "app-1/exec-1/stage-5.jfr") && !exists(&r, "app-1/exec-1/stage-5.html"),
	      "%s: every stage has its folded and JFR files; pages, the executor and stages "
	      "of 1%% of its samples or more", what);
	views_free(v);
	cleanup(&r);
}

/* A segment that does not fit (the file size limit stands in for a full
 * disk): the error is said, its samples are counted lost, the file keeps
 * the segments before it whole, and the views show only what was written. */
static void test_full(void)
{
	struct run r;
	struct sample_store_stats st;
	struct rlimit old, limit;
	struct views *v;
	int err;

	if (open_run(&r, 0, 64u << 20))
		return;
	add(&r, stack_a, 4, -2, 10, 0, true);
	add(&r, stack_copy_a, 2, -2, 20000, 0, false);
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	limit = old;
	{
		char path[128];
		struct stat fst;

		snprintf(path, sizeof(path), "%s/samples.store", r.dir);
		limit.rlim_cur = stat(path, &fst) ? 4096 : (rlim_t)fst.st_size + 16;
	}
	setrlimit(RLIMIT_FSIZE, &limit);
	err = sample_store_tick(r.store, UINT64_MAX);
	setrlimit(RLIMIT_FSIZE, &old);
	sample_store_stats(r.store, &st);
	CHECK(err == -EFBIG, "the segment that does not fit fails (%s)", strerror(-err));
	CHECK(st.segments == 1 && st.samples_lost == 20000, "%llu segment written, %llu samples lost",
	      (unsigned long long)st.segments, (unsigned long long)st.samples_lost);
	add(&r, stack_a, 4, -2, 5, 0, false);
	v = write_views(&r, false);
	CHECK(v && slurp(&r, "all.folded") &&
	      !strcmp(slurp(&r, "all.folded"), "x-2;main;Foo.bar;read;do_sys_read_[k] 15\n"),
	      "the file reads back whole: the segments before and after, not the lost one");
	views_free(v);
	cleanup(&r);
}

/* A stage's first and last times: an off-CPU interval counts at its end,
 * when it was given its stage, not when its thread went to sleep. */
static void test_times(void)
{
	struct run r;
	struct views *v;
	const struct view_result *two, *three;
	uint64_t t0;

	if (open_run(&r, STORE_OFF_CPU, 64u << 20))
		return;
	t0 = r.t;
	add(&r, stack_a, 4, 2, 1, 0, false);
	add(&r, stack_a, 4, 3, 1, 500000000, false);
	v = write_views(&r, false);
	two = v ? result(v, "app-1/exec-1/stage-2") : NULL;
	three = v ? result(v, "app-1/exec-1/stage-3") : NULL;
	CHECK(two && two->first_ns == t0 + 1000000 && two->last_ns == t0 + 1000000,
	      "a CPU sample counts at its time");
	CHECK(three && three->first_ns == t0 + 502000000 - 1 && three->last_ns == three->first_ns,
	      "an off-CPU interval counts at its end (%llu ns after the start)",
	      three ? (unsigned long long)(three->first_ns - t0) : 0ULL);
	views_free(v);
	cleanup(&r);
}

/* Labels numbered in another order in each segment (stage 7's first in
 * one, stage 8's in the next) and interleaved within one: each sample
 * reaches its own stage's files and counts. */
static void test_label_order(void)
{
	const struct view_result *seven, *eight;
	struct run r;
	struct views *v;
	const char *text;

	if (open_run(&r, 0, 64u << 20))
		return;
	add(&r, stack_a, 4, 7, 2, 0, false);
	add(&r, stack_copy_a, 2, 8, 3, 0, false);
	add(&r, stack_a, 4, 7, 1, 0, true);
	add(&r, stack_copy_a, 2, 8, 4, 0, false);
	add(&r, stack_a, 4, 7, 5, 0, false);
	add(&r, stack_copy_a, 2, 8, 6, 0, true);
	v = write_views(&r, false);
	seven = v ? result(v, "app-1/exec-1/stage-7") : NULL;
	eight = v ? result(v, "app-1/exec-1/stage-8") : NULL;
	CHECK(seven && eight && seven->cpu_samples == 8 && eight->cpu_samples == 13,
	      "label order: stage 7 counts 8 samples, stage 8 13 (%llu, %llu)",
	      seven ? (unsigned long long)seven->cpu_samples : 0ULL,
	      eight ? (unsigned long long)eight->cpu_samples : 0ULL);
	text = slurp(&r, "app-1/exec-1/stage-7.folded");
	CHECK(text && !strcmp(text, "java-9;main;Foo.bar;read;do_sys_read_[k] 8\n"),
	      "label order: stage 7's file: %s", text ? text : "(none)");
	text = slurp(&r, "app-1/exec-1/stage-8.folded");
	CHECK(text && !strcmp(text, "java-9;main;libfoo_work 13\n"),
	      "label order: stage 8's file: %s", text ? text : "(none)");
	views_free(v);
	cleanup(&r);
}

int main(void)
{
	test_format();
	test_segments(64u << 20, "segments closed by time");
	test_segments(2048, "segments of 2 KiB");
	test_full();
	test_times();
	test_label_order();
	TAP_DONE();
}
