/* test_views_live.c - the node's and executors' JFR files written as
 * the store's segments close (views_live_new), as `record` does: while
 * recording only their .tmp files exist; after the stop they are the same
 * bytes as when every view is written at once (`report`), wall time
 * carried across segments included; live files that missed a segment
 * (or got one that did not read back) are left to the stop, which writes
 * the same bytes, as it does for a recording without samples; live files
 * never closed leave nothing. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output/sample_store.h"
#include "output/views.h"
#include "tap.h"

static const struct frame stack[] = { { "work", FRAME_JIT }, { "main", FRAME_NATIVE } };
static const struct frame wait_stack[] = { { "park", FRAME_KERNEL }, { "Thread.run", FRAME_JIT } };

struct run {
	char dir[64], store_path[128];
	struct views_settings settings;
	struct views *live;
	struct sample_store *store;
	size_t skip;          /* segments not given to the live files */
	bool unread;          /* given, as the store gives one that did not read back */
	uint64_t t;
};

static void segment_written(void *ctx, const struct store_segment_written *seg)
{
	struct run *r = ctx;
	struct store_segment_written unread = *seg;

	unread.labels = NULL;
	unread.samples = NULL;
	unread.read_err = -EINVAL;
	if (r->skip && r->unread)
		views_live_segment(r->live, &unread);
	if (r->skip)
		r->skip--;
	else
		views_live_segment(r->live, seg);
}

static int open_run(struct run *r, size_t skip)
{
	struct sample_store_settings s = {
		.info = { .flags = STORE_WALL | STORE_OFF_CPU, .cpu_period_ns = 10000000,
			  .wall_interval_ns = 10000000, .frequency_hz = 100, .host = "h" },
		.segment_bytes = 64u << 20,
		.segment_ns = 1,    /* a segment closes when a tick asks */
		.segment_written = segment_written,
		.segment_ctx = r,
		.segment_samples = true,
	};

	*r = (struct run){ 0 };
	snprintf(r->dir, sizeof(r->dir), "/tmp/test_views_live.XXXXXX");
	if (!mkdtemp(r->dir))
		return -1;
	snprintf(r->store_path, sizeof(r->store_path), "%s/samples.store", r->dir);
	r->settings = (struct views_settings){ .dir = r->dir, .jfr = true, .attribution = "thread" };
	r->live = views_live_new(&r->settings);
	r->skip = skip;
	r->t = 1000000000ULL;
	s.dir = r->dir;
	r->store = r->live ? sample_store_open(&s) : NULL;
	return r->store ? 0 : -1;
}

/* n samples of executor exec's stage (exec 0: a process that is no
 * executor): on CPU, and off CPU for 3.7 ms each, which is no whole
 * number of wall intervals. */
static void add(struct run *r, int exec, int stage, int n)
{
	char id[8];

	snprintf(id, sizeof(id), "%d", exec);
	for (int i = 0; i < n; i++) {
		struct resolved_sample s = { .timestamp_ns = r->t += 1000000, .pid = 9 + exec,
					     .tid = 20 + exec, .kind = SAMPLE_CPU, .frames = stack,
					     .nframes = 2 };
		struct sample_labels l = { .pid = s.pid, .tid = s.tid, .process = "java",
					   .thread = "t", .app_id = exec ? "app-1" : "",
					   .executor_id = exec ? id : "", .stage = stage,
					   .attempt = 0, .task = stage >= 0 ? 100 + stage : -1,
					   .flags = exec ? LABEL_EXECUTOR_VIEWS : 0 };

		sample_store_add(r->store, &s, &l);
		s.kind = SAMPLE_OFF_CPU;
		s.thread_state = 2;
		s.off_cpu_ns = 3700000;
		s.frames = wait_stack;
		sample_store_add(r->store, &s, &l);
	}
}

static void record(struct run *r)
{
	add(r, 1, 3, 5);
	add(r, 0, -1, 2);
	sample_store_tick(r->store, UINT64_MAX);
	add(r, 1, 3, 3);
	add(r, 2, 4, 4);
	sample_store_tick(r->store, UINT64_MAX);
	add(r, 2, 4, 1);
	add(r, 1, 5, 6);
}

static bool exists(const char *dir, const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !stat(path, &st);
}

/* dir/name's bytes, with dir's own name blanked out (a JFR file names
 * where it was written); NULL when none. */
static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[256], *buf = malloc(1 << 20), *at;
	size_t dlen = strlen(dir);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!buf || !(f = fopen(path, "rb"))) {
		free(buf);
		return NULL;
	}
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	buf[*len] = '\0';
	for (at = buf; (at = memmem(at, *len - (size_t)(at - buf), dir, dlen)); at += dlen)
		memset(at, '*', dlen);
	return buf;
}

/* Whether dir/name and other/name (folders named alike) hold the same
 * bytes, and some. */
static bool same_bytes(const char *dir, const char *other, const char *name)
{
	size_t alen = 0, blen = 0;
	char *a = slurp(dir, name, &alen), *b = slurp(other, name, &blen);
	bool same = a && b && alen && alen == blen && !memcmp(a, b, alen);

	free(a);
	free(b);
	return same;
}

/* The stop (with the live files), or `report` into dir (without). */
static struct views *write_views(struct run *r, const char *dir, bool live)
{
	struct views_settings s = r->settings;
	struct store_reader *reader = store_reader_open(r->store_path);
	struct views *v;

	s.dir = dir;
	s.live_jfr = live ? r->live : NULL;
	v = reader ? views_write(reader, &s) : NULL;
	store_reader_close(reader);
	return v;
}

static void cleanup(struct run *r, const char *also)
{
	char cmd[256];

	sample_store_free(r->store);
	views_free(r->live);
	snprintf(cmd, sizeof(cmd), "%s %s %s", getenv("KEEP") ? "true" : "rm -rf", r->dir, also ? also : "");
	if (system(cmd))
		printf("# could not remove %s\n", r->dir);
}

static const char *const jfr_files[] = { "all.jfr", "app-1/exec-1/all.jfr",
					 "app-1/exec-2/all.jfr", "app-1/exec-1/stage-3.jfr",
					 "app-1/exec-2/stage-4.jfr" };

static bool all_same(const char *dir, const char *other)
{
	bool same = true;

	for (size_t i = 0; i < sizeof(jfr_files) / sizeof(jfr_files[0]); i++)
		if (!same_bytes(dir, other, jfr_files[i])) {
			printf("# %s differs\n", jfr_files[i]);
			same = false;
		}
	return same;
}

/* Records with live files that miss the first skip segments (unread: get
 * them as not read back), stops, and writes every view at once beside:
 * the stop's files are those bytes. */
static void check_stop(size_t skip, bool unread, const char *what)
{
	char report[64] = "/tmp/test_views_live.XXXXXX";
	struct views *v, *all;
	struct run r;

	if (open_run(&r, skip) || !mkdtemp(report))
		return;
	r.unread = unread;
	record(&r);
	if (!skip)
		CHECK(exists(r.dir, "all.jfr.tmp") && exists(r.dir, "app-1/exec-2/all.jfr.tmp") &&
		      !exists(r.dir, "all.jfr"),
		      "while recording: the node's and executors' .tmp files");
	if (unread)
		CHECK(!exists(r.dir, "all.jfr.tmp") && !exists(r.dir, "app-1/exec-2/all.jfr.tmp"),
		      "%s: given up at once, while recording", what);
	sample_store_finish(r.store);
	v = write_views(&r, r.dir, true);
	all = write_views(&r, report, false);
	CHECK(v && all && !views_first_error(v) && !views_first_error(all), "%s: the stop's files",
	      what);
	CHECK(all_same(r.dir, report), "%s: every JFR file the same bytes as every view written "
	      "at once", what);
	CHECK(!exists(r.dir, "all.jfr.tmp") && !exists(r.dir, "app-1/exec-1/all.jfr.tmp"),
	      "%s: no .tmp file left", what);
	views_free(v);
	views_free(all);
	cleanup(&r, report);
}

static void test_never_closed(void)
{
	struct run r;

	if (open_run(&r, 0))
		return;
	record(&r);
	sample_store_finish(r.store);
	views_free(r.live);
	r.live = NULL;
	CHECK(!exists(r.dir, "all.jfr.tmp") && !exists(r.dir, "all.jfr") &&
	      !exists(r.dir, "app-1/exec-1/all.jfr"),
	      "live files freed without a stop leave nothing");
	cleanup(&r, NULL);
}

/* A recording without a sample: the stop writes the node's empty file. */
static void test_no_segment(void)
{
	struct views *v;
	struct run r;

	if (open_run(&r, 0))
		return;
	sample_store_finish(r.store);
	v = write_views(&r, r.dir, true);
	CHECK(v && !views_first_error(v) && exists(r.dir, "all.jfr"),
	      "no segment: the node's JFR file, empty");
	views_free(v);
	cleanup(&r, NULL);
}

int main(void)
{
	check_stop(0, false, "live files");
	check_stop(1, false, "live files that missed the first segment, written by the stop");
	check_stop(1, true, "live files given a segment that did not read back, written by "
		   "the stop");
	test_no_segment();
	test_never_closed();
	TAP_DONE();
}
