/* tree_merge.c - what merging two saved count trees costs: the way an
 * epoch merges the node's layers now (folded_saved_merge, both trees read
 * as streams) against building the merged tree in memory and saving it
 * (what each merge did before).  Two trees of STACKS stacks each, half of
 * them shared, 4 to 43 frames deep, in a spill file in DIR.
 *
 * usage: tree_merge stream|memory STACKS [DIR]   (defaults: 60000, /tmp)
 * Prints the merge's wall time, CPU time and how far it raised the peak
 * RSS (VmHWM, reset just before it). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output/folded.h"
#include "bench_clock.h"

static uint64_t next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

static void add_stacks(struct folded_profile *p, uint64_t seed, int nstacks, char names[][16])
{
	struct frame frames[48];

	for (int i = 0; i < nstacks; i++) {
		int depth = 4 + (int)(next_rand(&seed) % 40);
		uint64_t count = 1 + next_rand(&seed) % 1000;

		for (int d = 0; d < depth; d++) {
			int caller = depth - 1 - d;
			uint64_t r = next_rand(&seed);
			int name = caller < 6 ? (int)(r % 3) + caller * 3 : (int)(r % 400);

			frames[d] = (struct frame){ names[name], FRAME_JIT };
		}
		folded_profile_add(p, "java-1", i % 2 ? "worker" : NULL, frames, (size_t)depth, count);
	}
}

static int save(struct folded_profile *p, struct spill_file *spill, struct spill_ref *ref)
{
	struct folded_tree *t = folded_tree_build(p);
	int err = t ? folded_tree_save_spill(t, spill, ref) : -1;

	folded_tree_free(t);
	return err;
}

int main(int argc, char **argv)
{
	static char names[400][16];
	int stacks = argc > 2 ? atoi(argv[2]) : 60000;
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	bool stream = argc > 1 && !strcmp(argv[1], "stream");
	struct folded_profile *a = folded_profile_new(NULL), *b = folded_profile_new(NULL);
	struct spill_file *spill = spill_file_new(dir, "bench trees");
	struct spill_ref ra, rb, merged = { 0, 0 };
	double wall, cpu;
	long base;
	int err;
	FILE *f;

	if (argc < 2 || (!stream && strcmp(argv[1], "memory")) || stacks <= 0) {
		fprintf(stderr, "usage: tree_merge stream|memory STACKS [DIR]\n");
		return 2;
	}
	for (int i = 0; i < 400; i++)
		snprintf(names[i], sizeof(names[i]), "f%d", i);
	add_stacks(a, 1, stacks / 2, names);
	add_stacks(a, 2, stacks / 2, names);
	add_stacks(b, 1, stacks / 2, names);
	add_stacks(b, 3, stacks / 2, names);
	if (!spill || save(a, spill, &ra) || save(b, spill, &rb)) {
		fprintf(stderr, "tree_merge: could not save the trees in %s\n", dir);
		return 1;
	}
	folded_profile_free(a);
	folded_profile_free(b);
	/* the peak from here on */
	if ((f = fopen("/proc/self/clear_refs", "w"))) {
		fputs("5", f);
		fclose(f);
	}
	base = status_kib("VmHWM:");
	wall = seconds(CLOCK_MONOTONIC);
	cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
	if (stream) {
		err = folded_saved_merge(spill, &ra, &rb, &merged);
	} else {
		struct folded_tree *t = folded_tree_new();

		err = t ? folded_tree_add_spilled(t, spill, &ra) : -1;
		if (!err)
			err = folded_tree_add_spilled(t, spill, &rb);
		if (!err)
			err = folded_tree_save_spill(t, spill, &merged);
		folded_tree_free(t);
	}
	wall = seconds(CLOCK_MONOTONIC) - wall;
	cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	if (err) {
		fprintf(stderr, "tree_merge: the merge failed (%d)\n", err);
		return 1;
	}
	printf("%s: trees of %.1f + %.1f MiB -> %.1f MiB: %.0f ms wall, %.0f ms CPU, "
	       "peak RSS +%.1f MiB\n",
	       argv[1], ra.bytes / 1048576.0, rb.bytes / 1048576.0, merged.bytes / 1048576.0,
	       wall * 1e3, cpu * 1e3, (status_kib("VmHWM:") - base) / 1024.0);
	spill_file_free(spill);
	return 0;
}
