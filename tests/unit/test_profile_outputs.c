/* test_profile_outputs.c - outputs share one stack table; an output that
 * gets no samples for a while (a finished stage) writes its JFR chunk out
 * instead of holding it until the end, and still takes samples after. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output/profile_outputs.h"
#include "tap.h"

#define NS 1000000000ULL

static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

static uint64_t be64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* Chunks in a JFR file whose chunk headers chain to its exact end; -1 when
 * they do not. */
static int count_chunks(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char head[16];
	long size = file_size(path), at = 0;
	int n = 0;

	if (!f)
		return -1;
	while (at < size) {
		uint64_t chunk;

		if (fseek(f, at, SEEK_SET) || fread(head, 1, 16, f) != 16 || memcmp(head, "FLR", 4))
			break;
		chunk = be64(head + 8);
		if (!chunk || chunk > (uint64_t)(size - at))
			break;
		at += (long)chunk;
		n++;
	}
	fclose(f);
	return at == size ? n : -1;
}

static int failed_adds;

static void add(struct profile_outputs *outs, struct profile_output *o, uint64_t ts,
		const char *leaf)
{
	const struct frame frames[] = { { leaf, FRAME_JIT }, { "main", FRAME_NATIVE } };
	struct resolved_sample s = {
		.timestamp_ns = ts, .pid = 5, .tid = 6, .ns_tid = 6, .kind = SAMPLE_CPU,
		.thread_name = "worker", .root_label = "java-5", .frames = frames, .nframes = 2,
	};

	failed_adds += profile_output_add(outs, o, &s) != 0;
}

int main(void)
{
	char dir[] = "/tmp/sparkprof-test-outputs-XXXXXX";
	struct output_settings settings = {
		.dir = mkdtemp(dir), .cpu_period_ns = 10000000, .jfr = true,
	};
	struct output_label label = { "scope", "stage" };
	struct profile_outputs *outs = profile_outputs_new(&settings);
	struct profile_output *node = profile_outputs_get(outs, "all", &label, 1);
	struct profile_output *stage = profile_outputs_get(outs, "stage-1", &label, 1);
	char stage_tmp[256], stage_jfr[256], folded[256], cmd[300];
	FILE *f;
	char line[256];
	int found = 0;

	snprintf(stage_tmp, sizeof(stage_tmp), "%s/stage-1.jfr.tmp", dir);
	snprintf(stage_jfr, sizeof(stage_jfr), "%s/stage-1.jfr", dir);
	snprintf(folded, sizeof(folded), "%s/stage-1.folded", dir);
	for (int i = 0; i < 100; i++) {
		add(outs, node, NS + (uint64_t)i * 10000000, "Stage.run");
		add(outs, stage, NS + (uint64_t)i * 10000000, "Stage.run");
	}
	CHECK(file_size(stage_tmp) == 0, "a busy stage's JFR chunk is still in memory");
	/* The node goes on; the stage has finished. */
	for (uint64_t t = 2 * NS; t <= 14 * NS; t += NS / 10)
		add(outs, node, t, "Other.run");
	CHECK(file_size(stage_tmp) > 0,
	      "an output idle for over 10 s has written its chunk (%ld bytes on disk)",
	      file_size(stage_tmp));
	/* A straggler sample after the stage went idle still counts. */
	add(outs, stage, 15 * NS, "Late.run");
	CHECK(failed_adds == 0, "every sample added");
	CHECK(profile_outputs_write(outs) == 0, "outputs written");
	CHECK(count_chunks(stage_jfr) == 2, "the stage's JFR file is its spilled chunk and a last one");
	CHECK(count_chunks(stage_jfr) == 2 && file_size(stage_jfr) > file_size(folded),
	      "the JFR file holds the samples");
	f = fopen(folded, "r");
	while (f && fgets(line, sizeof(line), f))
		found += !strcmp(line, "java-5;main;Stage.run 100\n") + !strcmp(line, "java-5;main;Late.run 1\n");
	if (f)
		fclose(f);
	CHECK(found == 2, "the stage's folded profile has every sample, before and after");
	CHECK(profile_output_stats(stage)->cpu_samples == 101, "stats count every sample");
	profile_outputs_free(outs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "clean up");
	TAP_DONE();
}
