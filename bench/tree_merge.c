/* tree_merge.c - what count trees cost a long recording.
 *   stream, memory: merging two, the way an epoch merges the node's
 *     layers now (folded_saved_merge, both trees read as streams) against
 *     building the merged tree in memory and saving it (what each merge
 *     did before).  Two trees of STACKS stacks each, half of them shared.
 *   stop: what the stop does for one output: builds its tree from a saved
 *     tree and eight layers (STACKS stacks each, half of them shared by
 *     all nine) and writes it as folded text.
 *   stages: what parking a stage costs to build its tree: 2,000 stage
 *     profiles, each counting every 300th of STACKS stacks in the node's
 *     table (200 of 60,000), each built into a tree and freed.
 * Stacks are 4 to 43 frames deep; the trees lie in a spill file in DIR.
 *
 * usage: tree_merge stream|memory|stop|stages STACKS [DIR]
 *   (defaults: 60000, /tmp)
 * Prints the wall time, CPU time and how far it raised the peak RSS
 * (VmHWM, reset just before it). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>
#include <unistd.h>

#include "base/stack_table.h"
#include "output/folded.h"
#include "bench_clock.h"

#define STOP_TREES 9    /* a saved tree and eight layers */
#define STAGES 2000
#define STAGE_EVERY 300

static long minor_faults(void)
{
	struct rusage u;

	return getrusage(RUSAGE_SELF, &u) ? 0 : u.ru_minflt;
}

static uint64_t next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* The next stack of a seed's sequence in frames (leaf first): its depth. */
static size_t random_stack(uint64_t *seed, char names[][16], struct frame *frames,
			   uint64_t *count)
{
	int depth = 4 + (int)(next_rand(seed) % 40);

	*count = 1 + next_rand(seed) % 1000;
	for (int d = 0; d < depth; d++) {
		int caller = depth - 1 - d;
		uint64_t r = next_rand(seed);
		int name = caller < 6 ? (int)(r % 3) + caller * 3 : (int)(r % 400);

		frames[d] = (struct frame){ names[name], FRAME_JIT };
	}
	return (size_t)depth;
}

static void add_stacks(struct folded_profile *p, uint64_t seed, int nstacks, char names[][16])
{
	struct frame frames[48];
	uint64_t count;

	for (int i = 0; i < nstacks; i++) {
		size_t depth = random_stack(&seed, names, frames, &count);

		folded_profile_add(p, "java-1", i % 2 ? "worker" : NULL, frames, depth, count);
	}
}

static int save(struct folded_profile *p, struct spill_file *spill, struct spill_ref *ref)
{
	struct folded_tree *t = folded_tree_build(p);
	int err = t ? folded_tree_save_spill(t, spill, ref) : -1;

	folded_tree_free(t);
	return err;
}

/* The stop's work on one output: its tree from the saved trees, written. */
static int build_and_write(struct spill_file *spill, const struct spill_ref *refs, int n,
			   const char *dir, double *build_wall)
{
	struct folded_tree *t = folded_tree_new();
	char path[4096];
	int err = t ? 0 : -1;

	*build_wall = seconds(CLOCK_MONOTONIC);
	for (int i = 0; i < n && !err; i++)
		err = folded_tree_add_spilled(t, spill, &refs[i]);
	if (!err)
		folded_tree_built(t);
	*build_wall = seconds(CLOCK_MONOTONIC) - *build_wall;
	snprintf(path, sizeof(path), "%s/tree_merge.folded", dir);
	if (!err)
		err = folded_tree_write(t, path, 1);
	unlink(path);
	folded_tree_free(t);
	return err;
}

/* Builds and frees the trees of 2,000 stages that share the node's table;
 * only the building and freeing are timed. */
static int stage_trees(int stacks, char names[][16])
{
	struct stack_table *table = stack_table_new();
	struct folded_profile *node = folded_profile_new(table);
	uint32_t *ids = calloc((size_t)stacks, sizeof(*ids));
	struct frame frames[48];
	uint64_t seed = 1, count;
	double wall = 0, cpu = 0;
	long faults = 0;
	int err = node && ids ? 0 : -1;

	for (int i = 0; i < stacks && !err; i++) {
		size_t depth = random_stack(&seed, names, frames, &count);
		int64_t id = stack_table_intern(table, "java-1", i % 2 ? "worker" : NULL, frames,
						depth);

		err = id < 0 ? -1 : folded_profile_add_id(node, ids[i] = (uint32_t)id, count);
	}
	for (int s = 0; s < STAGES && !err; s++) {
		struct folded_profile *stage = folded_profile_new(table);
		struct folded_tree *t;

		for (int i = s % STAGE_EVERY; i < stacks; i += STAGE_EVERY)
			folded_profile_add_id(stage, ids[i], 1);
		faults -= minor_faults();
		wall -= seconds(CLOCK_MONOTONIC);
		cpu -= seconds(CLOCK_PROCESS_CPUTIME_ID);
		t = folded_tree_build(stage);
		err = t ? 0 : -1;
		folded_tree_free(t);
		cpu += seconds(CLOCK_PROCESS_CPUTIME_ID);
		wall += seconds(CLOCK_MONOTONIC);
		faults += minor_faults();
		folded_profile_free(stage);
	}
	if (!err)
		printf("stages: %d stages of %d stacks in a table of %zu nodes: %.0f µs wall, "
		       "%.0f µs CPU, %.1f page faults to build and free a stage's tree\n",
		       STAGES, stacks / STAGE_EVERY, stack_table_node_count(table),
		       wall * 1e6 / STAGES, cpu * 1e6 / STAGES, (double)faults / STAGES);
	free(ids);
	folded_profile_free(node);
	stack_table_free(table);
	return err;
}

int main(int argc, char **argv)
{
	static char names[400][16];
	int stacks = argc > 2 ? atoi(argv[2]) : 60000;
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	const char *mode = argc > 1 ? argv[1] : "";
	bool stream = !strcmp(mode, "stream"), stop = !strcmp(mode, "stop");
	bool stages = !strcmp(mode, "stages");
	int ntrees = stop ? STOP_TREES : 2;
	struct spill_file *spill = spill_file_new(dir, "bench trees");
	struct spill_ref refs[STOP_TREES], merged = { 0, 0 };
	double wall, cpu, build_wall = 0, bytes = 0;
	long base;
	int err = 0;
	FILE *f;

	if ((!stream && !stop && !stages && strcmp(mode, "memory")) || stacks <= 0) {
		fprintf(stderr, "usage: tree_merge stream|memory|stop|stages STACKS [DIR]\n");
		return 2;
	}
	for (int i = 0; i < 400; i++)
		snprintf(names[i], sizeof(names[i]), "f%d", i);
	if (stages) {
		spill_file_free(spill);
		return stage_trees(stacks, names) ? 1 : 0;
	}
	/* Tree i: the stacks of seed 1, shared by all, and its own (seed i + 2). */
	for (int i = 0; i < ntrees && spill && !err; i++) {
		struct folded_profile *p = folded_profile_new(NULL);

		add_stacks(p, 1, stacks / 2, names);
		add_stacks(p, (uint64_t)i + 2, stacks / 2, names);
		if (!(err = save(p, spill, &refs[i])))
			bytes += refs[i].bytes;
		folded_profile_free(p);
	}
	if (!spill || err) {
		fprintf(stderr, "tree_merge: could not save the trees in %s\n", dir);
		spill_file_free(spill);
		return 1;
	}
	/* the peak from here on */
	if ((f = fopen("/proc/self/clear_refs", "w"))) {
		fputs("5", f);
		fclose(f);
	}
	base = status_kib("VmHWM:");
	wall = seconds(CLOCK_MONOTONIC);
	cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
	if (stop) {
		err = build_and_write(spill, refs, ntrees, dir, &build_wall);
	} else if (stream) {
		err = folded_saved_merge(spill, &refs[0], &refs[1], &merged);
	} else {
		struct folded_tree *t = folded_tree_new();

		err = t ? folded_tree_add_spilled(t, spill, &refs[0]) : -1;
		if (!err)
			err = folded_tree_add_spilled(t, spill, &refs[1]);
		if (!err)
			err = folded_tree_save_spill(t, spill, &merged);
		folded_tree_free(t);
	}
	wall = seconds(CLOCK_MONOTONIC) - wall;
	cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	if (err) {
		fprintf(stderr, "tree_merge: %s failed (%d)\n", mode, err);
		spill_file_free(spill);
		return 1;
	}
	if (stop)
		printf("stop: %d trees of %.1f MiB in all: %.0f ms wall (%.0f building), "
		       "%.0f ms CPU, peak RSS +%.1f MiB\n",
		       ntrees, bytes / 1048576.0, wall * 1e3, build_wall * 1e3, cpu * 1e3,
		       (status_kib("VmHWM:") - base) / 1024.0);
	else
		printf("%s: trees of %.1f + %.1f MiB -> %.1f MiB: %.0f ms wall, %.0f ms CPU, "
		       "peak RSS +%.1f MiB\n",
		       mode, refs[0].bytes / 1048576.0, refs[1].bytes / 1048576.0,
		       merged.bytes / 1048576.0, wall * 1e3, cpu * 1e3,
		       (status_kib("VmHWM:") - base) / 1024.0);
	spill_file_free(spill);
	return 0;
}
