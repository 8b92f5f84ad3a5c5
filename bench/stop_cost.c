/* stop_cost.c - the stop of a long recording with many short stages,
 * without waiting an hour: a store shaped like the hour's soak beside a
 * Spark application (node_cost-20261128-0922: 632 segments, 87,454
 * stages, 610,656 CPU samples, 8.4 million off-CPU intervals, --wall), and
 * then every view written from it (views_write, as the stop does).
 *
 * Two executors; each segment (a second of sample time) runs new short
 * stages of 4 tasks each, whose threads run stacks drawn from the
 * executor's own 3,000, most from 200 hot ones (40-70 frames of
 * Spark-like names), and wait in 64.
 *
 * usage: stop_cost [--while-recording] [SEGMENTS [STAGES_PER_SEGMENT
 *                  [CPU_PER_SEGMENT [OFF_PER_CPU]]]]
 * (defaults 632 138 966 13). Prints the store's size, the write's wall
 * and CPU seconds, the files and bytes written, and the peak RSS. With
 * --while-recording, ended stages' files are written as the segments
 * close (output/stage_writer.h) and the node's and executors' JFR files
 * grow a segment at a time (views_live_new), as `record` does, and the
 * stop writes the rest; the time those writes took is printed too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/frame.h"
#include "output/sample_store.h"
#include "output/stage_writer.h"
#include "output/views.h"
#include "bench_clock.h"

#define STACKS 3000
#define HOT_STACKS 200
#define WAIT_STACKS 64   /* off-CPU: parked and waiting threads */
#define NAMES 4000

static char *names[NAMES];
static struct frame stacks[2][STACKS][70];
static int depth[2][STACKS];

static void make_stacks(void)
{
	static const char *const pkg[] = { "org.apache.spark.sql.execution.", "scala.collection.",
					   "org.apache.spark.rdd.", "java.util.concurrent." };

	for (int i = 0; i < NAMES; i++) {
		names[i] = malloc(96);
		snprintf(names[i], 96, "%sOperator%dExec$$anonfun$doExecute$%d.apply", pkg[i % 4],
			 i / 7, i % 13);
	}
	for (int e = 0; e < 2; e++)
		for (int s = 0; s < STACKS; s++) {
			depth[e][s] = 40 + (s * 7) % 31;
			/* Outer frames shared widely, inner ones spread. */
			for (int d = 0; d < depth[e][s]; d++) {
				int outer = depth[e][s] - 1 - d;
				int name = outer < 12 ? outer * 3 + (s % 3)
						      : (s * 131 + outer * 977 + e * 17) % NAMES;

				stacks[e][s][d] = (struct frame){ names[name],
					d == 0 && s % 5 == 0 ? FRAME_INLINED : FRAME_JIT };
			}
		}
}

static long folder_bytes(const char *dir, long *files)
{
	char cmd[256];
	long bytes = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "find %s -type f -printf '%%s\\n'", dir);
	p = popen(cmd, "r");
	*files = 0;
	for (long n; p && fscanf(p, "%ld", &n) == 1; (*files)++)
		bytes += n;
	if (p)
		pclose(p);
	return bytes;
}

/* One segment's samples: its stages' tasks, on CPU and off. */
static int fill_segment(struct sample_store *st, int seg, int stages, int cpu, int off_per_cpu)
{
	char thread[96];
	int err = 0;

	for (int k = 0; k < cpu && !err; k++) {
		int local = k % stages, stage = seg * stages + local, e = stage % 2;
		/* Most samples in a few hot stacks, as in a real segment. */
		unsigned h = (unsigned)(k + seg * cpu) * 2654435761u;
		int task = stage * 4 + k % 4, s = (int)(h % (k % 8 ? HOT_STACKS : STACKS));
		uint64_t t = (uint64_t)seg * 1000000000ULL + (uint64_t)k * (1000000000ULL / (uint64_t)cpu);
		struct resolved_sample rs = { .timestamp_ns = t, .pid = 1000 + e, .tid = 2000 + k % 8,
					      .kind = SAMPLE_CPU, .frames = stacks[e][s],
					      .nframes = (size_t)depth[e][s] };
		struct sample_labels l = { .pid = rs.pid, .tid = rs.tid,
					   .process = e ? "java-1001" : "java-1000", .thread = thread,
					   .app_id = "app-20261128082025-0000", .executor_id = e ? "1" : "0",
					   .stage = stage, .attempt = 0, .task = task,
					   .flags = LABEL_EXECUTOR_VIEWS };

		snprintf(thread, sizeof(thread),
			 "Executor task launch worker for task %d.0 in stage %d.0 (TID %d)", k % 4,
			 stage, task);
		err = sample_store_add(st, &rs, &l);
		rs.kind = SAMPLE_OFF_CPU;
		rs.thread_state = 2;
		for (int o = 0; o < off_per_cpu && !err; o++) {
			rs.timestamp_ns = t + (uint64_t)o * 1000;
			rs.off_cpu_ns = 20000 + (uint64_t)((k * 7 + o * 13) % 400) * 1000;
			rs.frames = stacks[e][(k + o) % WAIT_STACKS];
			rs.nframes = (size_t)depth[e][(k + o) % WAIT_STACKS];
			err = sample_store_add(st, &rs, &l);
		}
	}
	return err ? err : sample_store_tick(st, (uint64_t)(seg + 1) * 1000000000ULL);
}

/* What record does as a segment closes. */
struct while_recording {
	struct stage_writer *stages;
	struct views *live_jfr;
	double cpu;               /* seconds the live JFR files took */
};

static void segment_written(void *ctx, const struct store_segment_written *seg)
{
	struct while_recording *w = ctx;

	stage_writer_segment(w->stages, seg);
	w->cpu -= seconds(CLOCK_PROCESS_CPUTIME_ID);
	views_live_segment(w->live_jfr, seg);
	w->cpu += seconds(CLOCK_PROCESS_CPUTIME_ID);
}

int main(int argc, char **argv)
{
	bool early = argc > 1 && !strcmp(argv[1], "--while-recording");
	int nargs = argc - early;
	char **args = argv + early;
	int segments = nargs > 1 ? atoi(args[1]) : 632, stages = nargs > 2 ? atoi(args[2]) : 138;
	int cpu = nargs > 3 ? atoi(args[3]) : 966, off = nargs > 4 ? atoi(args[4]) : 13;
	char dir[] = "/tmp/sparkprof-stop-cost-XXXXXX", path[96];
	struct sample_store_settings settings = {
		.info = { .flags = STORE_WALL | STORE_OFF_CPU,
			  .cpu_period_ns = 10101010, .wall_interval_ns = 10000000,
			  .frequency_hz = 99, .host = "bench" },
		.segment_bytes = 64u << 20, .segment_ns = 1000000000ULL,
	};
	struct views_settings vs = { .jfr = true, .html = true, .attribution = "thread" };
	struct while_recording w = { 0 };
	struct stage_writer *writer = NULL;
	struct stage_writer_stats ws = { 0 };
	struct stat store_stat;
	struct sample_store *st;
	struct store_reader *r;
	struct views *v;
	FILE *clear;
	double wall, cpu0, early_cpu = 0;
	long files, bytes, store_bytes;
	int err = 0;

	if (segments < 1 || stages < 1 || cpu < stages || off < 0) {
		fprintf(stderr, "stop_cost: SEGMENTS >= 1, STAGES_PER_SEGMENT >= 1, "
				"CPU_PER_SEGMENT >= STAGES_PER_SEGMENT, OFF_PER_CPU >= 0\n");
		return 2;
	}
	make_stacks();
	settings.dir = vs.dir = mkdtemp(dir);
	snprintf(path, sizeof(path), "%s/%s", dir, STORE_FILE_NAME);
	if (early && settings.dir && (writer = stage_writer_new(path, &vs)) &&
	    (w.live_jfr = views_live_new(&vs))) {
		w.stages = writer;
		settings.segment_written = segment_written;
		settings.segment_ctx = &w;
		settings.segment_samples = true;
		vs.stage_wanted = stage_writer_wanted;
		vs.stage_ctx = writer;
		vs.live_jfr = w.live_jfr;
	}
	st = settings.dir && (w.live_jfr || !early) ? sample_store_open(&settings) : NULL;
	for (int seg = 0; st && seg < segments && !err; seg++) {
		if ((err = fill_segment(st, seg, stages, cpu, off)) || !writer)
			continue;
		early_cpu -= seconds(CLOCK_PROCESS_CPUTIME_ID);
		err = stage_writer_tick(writer);
		early_cpu += seconds(CLOCK_PROCESS_CPUTIME_ID);
	}
	if (!st || err || sample_store_finish(st))
		return 1;
	sample_store_free(st);
	store_bytes = stat(path, &store_stat) ? 0 : (long)store_stat.st_size;
	/* The peak from here on: the write's, not the store's making. */
	clear = fopen("/proc/self/clear_refs", "w");
	if (clear)
		fputs("5", clear), fclose(clear);
	wall = seconds(CLOCK_MONOTONIC);
	cpu0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
	r = store_reader_open(path);
	v = r ? views_write(r, &vs) : NULL;
	wall = seconds(CLOCK_MONOTONIC) - wall;
	cpu0 = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	bytes = folder_bytes(dir, &files) - store_bytes;
	printf("stop_cost: %d segments, %d stages, %ld MB store; views %s: %.1f s wall, "
	       "%.1f s CPU, %ld files, %ld MB; peak RSS %ld MiB\n", segments, segments * stages,
	       store_bytes / 1000000, v && !views_first_error(v) ? "written" : "FAILED", wall, cpu0,
	       files - 1, bytes / 1000000, status_kib("VmHWM:") / 1024);
	if (writer) {
		stage_writer_stats(writer, &ws);
		printf("stop_cost: while recording, before the stop: %llu stages' files in %.1f s "
		       "wall, %.1f s CPU; the node's and executors' JFR files %.1f s CPU\n",
		       (unsigned long long)ws.written, (double)ws.write_ns / 1e9, early_cpu, w.cpu);
	}
	views_free(v);
	stage_writer_free(writer);
	views_free(w.live_jfr);
	store_reader_close(r);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	return system(path) || !v;
}
