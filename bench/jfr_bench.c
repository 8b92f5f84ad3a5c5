/* jfr_bench.c - throughput and memory of the JFR writer (not a test).
 *
 * Usage: jfr_bench OUT.jfr [SAMPLES [DEPTH [DISTINCT_STACKS [GZIP]]]]
 * Writes SAMPLES CPU samples (default 1,000,000) with DEPTH-frame stacks
 * (default 64) drawn from DISTINCT_STACKS stacks (default 5000) over 2000
 * frame names and 64 threads, and prints samples/s, the writer's peak
 * buffer memory, the process's peak RSS growth and bytes per sample.
 * Build: gcc -O2 -D_GNU_SOURCE -Iinclude -Iuser -o build/bench/jfr_bench \
 *            bench/jfr_bench.c build/libsparkprof.a -lz
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "output/jfr/jfr_writer.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
	long nsamples = argc > 2 ? atol(argv[2]) : 1000000;
	int depth = argc > 3 ? atoi(argv[3]) : 64;
	int nstacks = argc > 4 ? atoi(argv[4]) : 5000;
	int gzip = argc > 5 ? atoi(argv[5]) : 0;
	enum { NNAMES = 2000, NTHREADS = 64 };
	static char names[NNAMES][96], threads[NTHREADS][64];
	struct frame *stacks;
	struct jfr_recording_info info = { 1000000000ULL, 1767225600000000000ULL, 10101010, 0,
					   NULL, 0 };
	struct jfr_writer_options opts = { .gzip = gzip };
	struct jfr_writer_stats st;
	struct jfr_writer *w;
	struct stat sb;
	unsigned seed = 1;
	long rss0;
	double t0, t1;

	if (argc < 2) {
		fprintf(stderr, "usage: jfr_bench OUT.jfr [SAMPLES [DEPTH [STACKS [GZIP]]]]\n");
		return 2;
	}
	for (int i = 0; i < NNAMES; i++)
		snprintf(names[i], sizeof(names[i]),
			 "org/apache/spark/sql/execution/generated/Class%d$Inner.method%d", i / 7, i);
	for (int i = 0; i < NTHREADS; i++)
		snprintf(threads[i], sizeof(threads[i]),
			 "Executor task launch worker for task %d.0 in stage 3.0", i);
	stacks = malloc(sizeof(*stacks) * depth * nstacks);
	if (!stacks)
		return 1;
	for (long i = 0; i < (long)depth * nstacks; i++) {
		seed = seed * 1103515245 + 12345;
		stacks[i].name = names[(seed >> 8) % NNAMES];
		stacks[i].type = (enum frame_type)((seed >> 4) % FRAME_TYPE_MAX);
	}
	rss0 = max_rss_kb();
	t0 = now();
	w = jfr_writer_open(argv[1], &info, &opts);
	if (!w)
		return 1;
	for (long i = 0; i < nsamples; i++) {
		struct jfr_sample s = {
			.timestamp_ns = info.start_monotonic_ns + i * 1000, .os_tid = 1000 + i % NTHREADS,
			.thread_name = threads[i % NTHREADS], .kind = JFR_SAMPLE_CPU, .weight = 1,
			.frames = stacks + (long)depth * ((i * 2654435761u) % nstacks),
			.nframes = depth,
		};

		if (jfr_writer_add_sample(w, &s))
			return 1;
	}
	if (jfr_writer_close_stats(w, &st))
		return 1;
	t1 = now();
	stat(argv[1], &sb);
	printf("samples %ld depth %d stacks %d gzip %d\n", nsamples, depth, nstacks, gzip);
	printf("time %.3f s, %.0f samples/s\n", t1 - t0, nsamples / (t1 - t0));
	printf("chunks %llu, file %lld bytes, %.2f bytes/sample\n",
	       (unsigned long long)st.chunks, (long long)sb.st_size,
	       (double)sb.st_size / nsamples);
	printf("writer peak buffers %.1f MiB, process peak RSS growth %.1f MiB\n",
	       st.peak_memory / 1048576.0, (max_rss_kb() - rss0) / 1024.0);
	return 0;
}
