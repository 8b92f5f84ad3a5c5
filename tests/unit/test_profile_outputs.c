/* test_profile_outputs.c - outputs share one stack table; an output that
 * gets no samples for a while (a finished stage) writes its JFR chunk out
 * instead of holding it until the end, and still takes samples after;
 * after longer it writes all its files and parks its counts, and a late
 * sample brings them back; a parked output leaves memory (retired to a
 * record) and is read back by name; past a memory budget, the stack table
 * starts afresh and the files are the same; the budget counts JFR chunks,
 * and an epoch costs what it counted, not what the recording did. */
#include <stdbool.h>
#include <stdint.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output/profile_outputs.h"
#include "sparkprof_events.h"
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

static ino_t inode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

static char *slurp(const char *path, long *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	*len = file_size(path);
	if (!f || *len < 0 || !(buf = malloc((size_t)*len + 1))) {
		if (f)
			fclose(f);
		return NULL;
	}
	*len = (long)fread(buf, 1, (size_t)*len, f);
	buf[*len] = 0;
	fclose(f);
	return buf;
}

/* Whether path has line (with its newline). */
static int has_line(const char *path, const char *line)
{
	long len;
	char *text = slurp(path, &len), *p = text;
	int found = 0;

	while (p && !found && (p = strstr(p, line)))
		found = (p == text || p[-1] == '\n'), p++;
	free(text);
	return found;
}

static int failed_adds;

/* An output by name: a pointer from an earlier call may be gone, as the
 * sweep in each add retires parked outputs. */
static struct profile_output *out(struct profile_outputs *outs, const char *name)
{
	return profile_outputs_get(outs, name, NULL, 0);
}

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

static void add_off_cpu(struct profile_outputs *outs, struct profile_output *o, uint64_t ts,
			uint64_t ns, const char *leaf)
{
	const struct frame frames[] = { { leaf, FRAME_JIT }, { "main", FRAME_NATIVE } };
	struct resolved_sample s = {
		.timestamp_ns = ts, .pid = 5, .tid = 6, .ns_tid = 6, .kind = SAMPLE_OFF_CPU,
		.thread_state = SP_STATE_SLEEPING, .off_cpu_ns = ns, .thread_name = "worker",
		.root_label = "java-5", .frames = frames, .nframes = 2,
	};

	failed_adds += profile_output_add(outs, o, &s) != 0;
}

/* Parking: a stage without samples for 30 s has all its files written
 * during the recording and its counts out of memory; a late off-CPU
 * record (reported when its thread wakes) brings them back, and the
 * files are written again with both, the JFR file appended to. */
static void test_parking(void)
{
	char dir[] = "/tmp/sparkprof-test-parking-XXXXXX", path[256], cmd[300];
	struct output_settings settings = {
		.dir = mkdtemp(dir), .cpu_period_ns = 10000000, .jfr = true, .wall = true,
		.wall_interval_ns = 10000000, .html = true,
	};
	struct profile_outputs *outs = profile_outputs_new(&settings);
	struct profile_output *node = out(outs, "all"), *stage;
	uint64_t generation;
	const char *kinds[] = { "folded", "wall.folded", "html", "wall.html", "jfr" };
	char first_jfr[256], folded[256], wall[256];
	char *jfr_before = NULL, *jfr_after = NULL;
	long before_len = 0, after_len = 0;
	ino_t done_inode;
	int on_disk = 0;

	snprintf(first_jfr, sizeof(first_jfr), "%s/stage-1.jfr", dir);
	snprintf(folded, sizeof(folded), "%s/stage-1.folded", dir);
	snprintf(wall, sizeof(wall), "%s/stage-1.wall.folded", dir);
	failed_adds = 0;
	for (int i = 0; i < 100; i++) {
		add(outs, out(outs, "stage-1"), NS + (uint64_t)i * 10000000, "Stage.run");
		add(outs, out(outs, "stage-2"), NS + (uint64_t)i * 10000000, "Done.run");
	}
	/* their last samples at 1.99 s */
	for (uint64_t t = 2 * NS; t <= OUTPUT_PARK_NS + NS; t += NS / 10)
		add(outs, node, t, "Other.run");
	generation = profile_outputs_generation(outs);
	CHECK(!profile_output_parked(out(outs, "stage-1")) && file_size(folded) < 0,
	      "just under %llu s after its last sample the stage is still in memory",
	      OUTPUT_PARK_NS / NS);
	for (uint64_t t = OUTPUT_PARK_NS + NS; t <= 36 * NS; t += NS / 10)
		add(outs, node, t, "Other.run");
	CHECK(profile_outputs_generation(outs) != generation,
	      "longer without samples, outputs left memory");
	CHECK(profile_output_parked(out(outs, "stage-1")) &&
	      profile_output_parked(out(outs, "stage-2")) && !profile_output_parked(node),
	      "both stages parked, read back by name");
	for (int k = 0; k < 5; k++) {
		snprintf(path, sizeof(path), "%s/stage-1.%s", dir, kinds[k]);
		on_disk += file_size(path) > 0;
	}
	CHECK(on_disk == 5, "its folded files, pages and JFR are written while recording (%d of 5)",
	      on_disk);
	CHECK(has_line(folded, "java-5;main;Stage.run 100\n"), "with its samples");
	snprintf(path, sizeof(path), "%s/stage-2.folded", dir);
	done_inode = inode_of(path);
	jfr_before = slurp(first_jfr, &before_len);
	/* A thread of stage 1 that went to sleep at 1.5 s for 35 s. */
	stage = out(outs, "stage-1");
	add_off_cpu(outs, stage, NS + NS / 2, 35 * NS, "Sleep.wait");
	CHECK(!profile_output_parked(stage) && profile_output_stats(stage)->unparked == 1 &&
	      profile_output_stats(stage)->cpu_samples == 100,
	      "a late sample brings the stage back, with its stats");
	for (uint64_t t = 36 * NS; t <= 70 * NS; t += NS / 10)
		add(outs, node, t, "Other.run");
	CHECK(profile_output_parked(out(outs, "stage-1")), "and it is parked again");
	CHECK(failed_adds == 0, "every sample added");
	CHECK(profile_outputs_write(outs) == 0, "outputs written");
	CHECK(has_line(folded, "java-5;main;Stage.run 100\n"),
	      "the folded file keeps the samples from before parking");
	CHECK(has_line(wall, "java-5;main;Stage.run 100\n") &&
	      has_line(wall, "java-5;main;Sleep.wait 3500\n"),
	      "the wall profile has both parts (100 on-CPU + 3,500 sleeping intervals)");
	snprintf(path, sizeof(path), "%s/stage-1.wall.html", dir);
	long page_len;
	char *page = slurp(path, &page_len);
	CHECK(page && strstr(page, "Sleep.wait") && strstr(page, "Stage.run") &&
	      strstr(page, "[sleeping]"), "its wall page shows both, with thread states");
	free(page);
	jfr_after = slurp(first_jfr, &after_len);
	CHECK(jfr_before && jfr_after && after_len > before_len &&
	      !memcmp(jfr_before, jfr_after, (size_t)before_len),
	      "the JFR file starts with what was written at parking (%ld of %ld bytes)", before_len,
	      after_len);
	CHECK(count_chunks(first_jfr) >= 2, "and its chunks chain to its end (%d)",
	      count_chunks(first_jfr));
	snprintf(path, sizeof(path), "%s/stage-2.folded", dir);
	CHECK(done_inode && inode_of(path) == done_inode,
	      "a parked output is not written again at the end");
	free(jfr_before);
	free(jfr_after);
	profile_outputs_free(outs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "clean up");
}

/* A Spark application starts stages by the thousand: a parked stage leaves
 * memory but for its place (8 bytes and an index slot).  Heap bytes each
 * holds, as malloc counts them; then every output is still visited, in
 * creation order, with its name, labels and stats. */
struct visit_check {
	int next;      /* -1: the node's output comes first */
};

static int check_visit(const char *name, struct profile_output *o, void *ctx)
{
	struct visit_check *vc = ctx;
	char want[64], id[16];
	int n = 0;

	if (vc->next < 0) {
		vc->next++;
		return strcmp(name, "all");
	}
	snprintf(want, sizeof(want), "app-20261124101500-0003/exec-17/stage-%d.0", vc->next);
	snprintf(id, sizeof(id), "%d", vc->next);
	/* The labels come back too: profile_output_failures names files by
	 * name, and the JFR file's labels are its writer's. */
	const struct output_label *l = profile_output_labels(o, &n);

	if (strcmp(name, want) || n != 4 || strcmp(l[2].key, "stageId") || strcmp(l[2].value, id) ||
	    strcmp(l[0].value, "app-20261124101500-0003") ||
	    profile_output_stats(o)->cpu_samples != 1 || !profile_output_parked(o))
		return -1;
	vc->next++;
	return 0;
}

static void test_parked_memory(void)
{
	char dir[] = "/tmp/sparkprof-test-parked-XXXXXX", name[64], stage_id[16], cmd[300];
	struct output_settings settings = {
		.dir = mkdtemp(dir), .cpu_period_ns = 10000000, .jfr = true, .wall = true,
		.wall_interval_ns = 10000000,
	};
	struct profile_outputs *outs = profile_outputs_new(&settings);
	struct profile_output *node = profile_outputs_get(outs, "all", NULL, 0);
	struct output_label labels[] = { { "applicationId", "app-20261124101500-0003" },
					 { "executorId", "17" }, { "stageId", stage_id },
					 { "stageAttemptId", "0" } };
	enum { STAGES = 500 };
	size_t heap[2], per_stage;
	int parked = 0;
	struct visit_check vc = { .next = -1 };

	/* Two rounds of stages, each parked and retired before the next: the
	 * second's cost is what each new stage adds (the first also grows
	 * the tables of outputs in memory at once to their highest). */
	for (int round = 0; round < 2; round++) {
		uint64_t t0 = (uint64_t)round * 40 * NS;

		add(outs, node, t0 + NS, "Other.run");
		heap[round] = mallinfo2().uordblks;
		for (int i = round * STAGES; i < (round + 1) * STAGES; i++) {
			snprintf(name, sizeof(name), "app-20261124101500-0003/exec-17/stage-%d.0", i);
			snprintf(stage_id, sizeof(stage_id), "%d", i);
			add(outs, profile_outputs_get(outs, name, labels, 4),
			    t0 + NS + (uint64_t)(i % STAGES) * 1000000, "Stage.run");
		}
		for (uint64_t t = t0 + 2 * NS; t <= t0 + 40 * NS; t += NS / 2)
			add(outs, node, t, "Other.run");
	}
	per_stage = (mallinfo2().uordblks - heap[1]) / STAGES;
	CHECK(profile_outputs_foreach(outs, check_visit, &vc) == 0 && vc.next == 2 * STAGES,
	      "every output visited in creation order, with its labels and stats (%d)", vc.next);
	for (int i = 0; i < 2 * STAGES; i++) {
		snprintf(name, sizeof(name), "app-20261124101500-0003/exec-17/stage-%d.0", i);
		parked += profile_output_parked(profile_outputs_get(outs, name, NULL, 0));
	}
	CHECK(parked == 2 * STAGES, "%d stages parked, read back by name", parked);
	CHECK(per_stage < 16,
	      "a parked stage holds %zu heap bytes (about 500 before stages retired, 33 before "
	      "their index went to the spill file)", per_stage);
	profile_outputs_free(outs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "clean up");
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The text's lines sorted, joined again (in place). */
static void sort_lines(char *text, long len)
{
	char **lines = malloc(((size_t)len + 1) * sizeof(*lines)), *copy = malloc((size_t)len + 1);
	size_t n = 0, at = 0;

	if (!lines || !copy)
		abort();
	for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n"))
		lines[n++] = p;
	qsort(lines, n, sizeof(*lines), by_text);
	for (size_t i = 0; i < n; i++)
		at += (size_t)sprintf(copy + at, "%s\n", lines[i]);
	memcpy(text, copy, at);
	free(lines);
	free(copy);
}

/* Files of every output that read the same in run a and run b: folded
 * files line for line (lines come in the order stacks were first seen,
 * which an epoch can change, or in a saved tree's order), pages byte for
 * byte. */
static int same_files(const char *a, const char *b, const char *const *names, int nnames)
{
	static const char *const suffixes[] = { ".folded", ".wall.folded", ".offcpu.folded",
						".html", ".wall.html", ".offcpu.html" };
	char pa[256], pb[256];
	int same = 0;

	for (int i = 0; i < nnames; i++)
		for (size_t k = 0; k < sizeof(suffixes) / sizeof(suffixes[0]); k++) {
			long la, lb;
			char *ta, *tb;

			snprintf(pa, sizeof(pa), "%s/%s%s", a, names[i], suffixes[k]);
			snprintf(pb, sizeof(pb), "%s/%s%s", b, names[i], suffixes[k]);
			ta = slurp(pa, &la);
			tb = slurp(pb, &lb);
			if (ta && tb && !strstr(suffixes[k], ".html")) {
				sort_lines(ta, la);
				sort_lines(tb, lb);
			}
			if (ta && tb && la > 0 && la == lb && !memcmp(ta, tb, (size_t)la))
				same++;
			else
				printf("# %s and %s differ\n", pa, pb);
			free(ta);
			free(tb);
		}
	return same;
}

/* The same samples into two recordings, one without a budget and one
 * whose budget is passed at every sweep: the second starts its stack
 * table afresh again and again, and still writes the same files.  The
 * samples bring new stacks all along (a leaf per 5 s, a thread per
 * 2 s), a stage runs early, parks, and comes back late, another stage
 * runs between epochs, and off-CPU time fills the wall and off-CPU
 * files, with 327 rare stacks too narrow for the pages.  The stop writes
 * the second recording's files from its saved trees as streams. */
static void test_epochs(void)
{
	static const char *const names[] = { "all", "stage-1", "stage-2" };
	char da[] = "/tmp/sparkprof-test-epochs-a-XXXXXX";
	char db[] = "/tmp/sparkprof-test-epochs-b-XXXXXX", cmd[300], jfr_a[300], jfr_b[300];
	struct output_settings settings = {
		.cpu_period_ns = 10000000, .wall = true, .wall_interval_ns = 10000000,
		.off_cpu = true, .jfr = true, .per_thread = true, .html = true,
	};
	struct output_memory ma, mb;
	struct profile_outputs *outs[2];
	static char leaves[24][16], rare[400][16]; /* frame names live as long as the recording */
	char thread[32], *page;
	long page_len;

	CHECK(mkdtemp(da) && mkdtemp(db), "two folders");
	settings.dir = da;
	outs[0] = profile_outputs_new(&settings);
	settings.dir = db;
	settings.stack_budget = 1;
	outs[1] = profile_outputs_new(&settings);
	for (int i = 0; i < 24; i++)
		snprintf(leaves[i], sizeof(leaves[i]), "Leaf%d.run", i);
	for (int i = 0; i < 400; i++)
		snprintf(rare[i], sizeof(rare[i]), "Rare%d.run", i);
	for (uint64_t t = NS; t < 50 * NS; t += NS / 20) {
		uint64_t i = t / (NS / 20);
		const char *leaf = leaves[i % 7 + t / (5 * NS)];

		snprintf(thread, sizeof(thread), "worker-%llu", (unsigned long long)(t / (2 * NS)));
		for (int r = 0; r < 2; r++) {
			const struct frame frames[] = { { leaf, FRAME_JIT }, { "Task.run", FRAME_INLINED },
							{ "main", FRAME_NATIVE } };
			struct resolved_sample s = {
				.timestamp_ns = t, .pid = 5, .tid = 6, .kind = SAMPLE_CPU,
				.thread_name = thread, .root_label = "java-5", .frames = frames,
				.nframes = 3,
			};
			const char *stage = NULL;

			if (t < 8 * NS || t == 45 * NS)
				stage = "stage-1";
			else if (t >= 20 * NS && t < 26 * NS)
				stage = "stage-2";
			failed_adds += profile_output_add(outs[r], out(outs[r], "all"), &s) != 0;
			if (stage)
				failed_adds +=
					profile_output_add(outs[r], out(outs[r], stage), &s) != 0;
			if (i % 3)
				continue;
			s.kind = SAMPLE_OFF_CPU;
			s.thread_state = i % 2 ? SP_STATE_SLEEPING : SP_STATE_UNINTERRUPTIBLE;
			s.off_cpu_ns = 100000000 + i * 791900;
			failed_adds += profile_output_add(outs[r], out(outs[r], "all"), &s) != 0;
			if (stage)
				failed_adds +=
					profile_output_add(outs[r], out(outs[r], stage), &s) != 0;
			/* 1 ms in each: about 0.002% of the pages' width */
			s.off_cpu_ns = 1000000;
			s.frames = (const struct frame[]){ { rare[(i / 3) % 400], FRAME_JIT },
							   { "main", FRAME_NATIVE } };
			s.nframes = 2;
			failed_adds += profile_output_add(outs[r], out(outs[r], "all"), &s) != 0;
		}
	}
	profile_outputs_memory(outs[0], &ma);
	profile_outputs_memory(outs[1], &mb);
	CHECK(failed_adds == 0, "every sample added");
	CHECK(ma.epochs == 0 && mb.epochs >= 40, "epochs: none without a budget, %llu with one",
	      (unsigned long long)mb.epochs);
	CHECK(mb.stacks < ma.stacks / 4, "the table holds one second's stacks: %zu bytes, not %zu",
	      mb.stacks, ma.stacks);
	CHECK(profile_output_stats(profile_outputs_get(outs[1], "stage-1", NULL, 0))->unparked == 1,
	      "stage-1 was parked and came back");
	CHECK(profile_outputs_write(outs[0]) == 0 && profile_outputs_write(outs[1]) == 0,
	      "both written");
	CHECK(profile_output_stats(profile_outputs_get(outs[0], "all", NULL, 0))->streamed == 0 &&
	      profile_output_stats(profile_outputs_get(outs[1], "all", NULL, 0))->streamed == 6,
	      "the second's node output was written as streams (its three folded files and pages)");
	CHECK(same_files(da, db, names, 3) == 18,
	      "every folded file has the same lines, and every page the same bytes");
	snprintf(jfr_a, sizeof(jfr_a), "%s/all.offcpu.html", db);
	page = slurp(jfr_a, &page_len);
	CHECK(page && strstr(page, "\"shown_nodes\":") && strstr(page, "\"all_nodes\":") &&
	      atol(strstr(page, "\"shown_nodes\":") + 14) + 300 < atol(strstr(page, "\"all_nodes\":") + 12),
	      "the rare stacks were left out of the page, and it says how many");
	free(page);
	snprintf(jfr_a, sizeof(jfr_a), "%s/all.jfr", da);
	snprintf(jfr_b, sizeof(jfr_b), "%s/all.jfr", db);
	CHECK(count_chunks(jfr_a) == 1 && count_chunks(jfr_b) > 40,
	      "the node's JFR file ends a chunk at each epoch (%d chunks, %d without)",
	      count_chunks(jfr_b), count_chunks(jfr_a));
	profile_outputs_free(outs[0]);
	profile_outputs_free(outs[1]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", da, db);
	CHECK(system(cmd) == 0, "clean up");
}

/* Feeds 100 Hz samples to the node's output, 20 s with distinct (a new
 * leaf every sample: a table that keeps growing), else 60 s of one
 * stack.  Returns the largest stacks + counts and the largest JFR memory
 * seen after any sample. */
static void feed(struct profile_outputs *outs, bool distinct, size_t *table_peak, size_t *jfr_peak)
{
	static char leaves[2000][24]; /* frame names live as long as the recording */
	struct output_memory m;
	int i = 0;

	*table_peak = *jfr_peak = 0;
	for (uint64_t t = NS; t < (distinct ? 21 : 61) * NS; t += NS / 100, i++) {
		const char *leaf = leaves[distinct ? i : 0];
		const struct frame frames[] = { { leaf, FRAME_JIT }, { "Task.run", FRAME_INLINED },
						{ "main", FRAME_NATIVE } };
		struct resolved_sample s = {
			.timestamp_ns = t, .pid = 5, .tid = 6, .kind = SAMPLE_CPU,
			.thread_name = "worker", .root_label = "java-5", .frames = frames,
			.nframes = 3,
		};

		snprintf(leaves[distinct ? i : 0], sizeof(leaves[0]), "Gen%d.apply", distinct ? i : 0);
		failed_adds += profile_output_add(outs, out(outs, "all"), &s) != 0;
		profile_outputs_memory(outs, &m);
		if (m.stacks + m.counts > *table_peak)
			*table_peak = m.stacks + m.counts;
		if (m.jfr > *jfr_peak)
			*jfr_peak = m.jfr;
	}
}

/* The budget counts the JFR chunks beside the table: a budget just over
 * the largest the table and counts ever were still starts epochs, as the
 * chunks (whose pools grow with the same stacks) pass it.  One stack
 * sampled all along fills a chunk with events only: its table stays under
 * a quarter of the budget, so no epoch starts however full the chunk. */
static void test_budget_counts_jfr(void)
{
	char dir[] = "/tmp/sparkprof-test-budget-XXXXXX", cmd[300];
	struct output_settings settings = {
		.cpu_period_ns = 10000000, .jfr = true, .dir = mkdtemp(dir),
	};
	size_t table_free, jfr_free, table, jfr;
	struct profile_outputs *outs;
	struct output_memory m;

	CHECK(settings.dir != NULL, "a folder");
	outs = profile_outputs_new(&settings);
	feed(outs, true, &table_free, &jfr_free);
	profile_outputs_free(outs);
	settings.stack_budget = table_free + 1;
	outs = profile_outputs_new(&settings);
	feed(outs, true, &table, &jfr);
	profile_outputs_memory(outs, &m);
	CHECK(m.epochs >= 1 && table + jfr < table_free + jfr_free,
	      "a budget the table alone never passed: %llu epochs, peak %zu bytes (%zu without)",
	      (unsigned long long)m.epochs, table + jfr, table_free + jfr_free);
	CHECK(m.epoch_longest_ns > 0 && m.epoch_ns >= m.epoch_longest_ns, "their time is kept");
	profile_outputs_free(outs);
	settings.stack_budget = 64 << 10;
	outs = profile_outputs_new(&settings);
	feed(outs, false, &table, &jfr);
	profile_outputs_memory(outs, &m);
	CHECK(m.epochs == 0 && jfr > settings.stack_budget && table < settings.stack_budget / 4,
	      "one stack: a %zu-byte chunk over the budget and no epoch (table %zu bytes)", jfr,
	      table);
	profile_outputs_free(outs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "clean up");
}

/* An output that runs all along (the node's) while every second brings
 * new stacks and ends an epoch: what each epoch writes to the spill file
 * stays about the same.  Merging every epoch into one tree wrote the
 * whole recording's tree at each, so the second half of the epochs wrote
 * 2.6 times what the first half did. */
static void test_epoch_cost(void)
{
	/* frame names live as long as the recording; long ones, so that each
	 * epoch's tree spans pages of the spill file */
	static char leaves[48 * 20][6144];
	char dir[] = "/tmp/sparkprof-test-epoch-cost-XXXXXX", cmd[300];
	struct output_settings settings = {
		.cpu_period_ns = 10000000, .dir = mkdtemp(dir), .stack_budget = 1,
	};
	struct output_memory half = { 0 }, m;
	struct profile_outputs *outs = profile_outputs_new(&settings);
	int i = 0;

	CHECK(settings.dir != NULL && outs != NULL, "a recording");
	for (uint64_t t = NS; t < 49 * NS; t += NS / 100, i++) {
		int leaf = (int)(t / NS - 1) * 20 + i % 20;
		const struct frame frames[] = { { leaves[leaf], FRAME_JIT },
						{ "Task.run", FRAME_INLINED }, { "main", FRAME_NATIVE } };
		struct resolved_sample s = {
			.timestamp_ns = t, .pid = 5, .tid = 6, .kind = SAMPLE_CPU,
			.thread_name = "worker", .root_label = "java-5", .frames = frames,
			.nframes = 3,
		};

		snprintf(leaves[leaf], sizeof(leaves[0]), "Gen%d.apply%06000d", leaf, 0);
		failed_adds += profile_output_add(outs, out(outs, "all"), &s) != 0;
		if (t == 25 * NS)
			profile_outputs_memory(outs, &half);
	}
	profile_outputs_memory(outs, &m);
	CHECK(half.epochs >= 20 && m.epochs >= 44, "an epoch a second: %llu, %llu at half time",
	      (unsigned long long)m.epochs, (unsigned long long)half.epochs);
	CHECK(m.epoch_bytes - half.epoch_bytes < 2 * half.epoch_bytes,
	      "epochs wrote %llu bytes in the second half, %llu in the first",
	      (unsigned long long)(m.epoch_bytes - half.epoch_bytes),
	      (unsigned long long)half.epoch_bytes);
	/* without holes it takes what was written; layers under 256 KiB keep
	 * their room */
	CHECK(m.spill_disk_bytes < m.spill_bytes / 4 * 3,
	      "the spill file takes %llu KiB on disk of the %llu KiB written to it: large "
	      "merged layers are given back", (unsigned long long)m.spill_disk_bytes >> 10,
	      (unsigned long long)m.spill_bytes >> 10);
	CHECK(profile_outputs_write(outs) == 0, "written");
	snprintf(cmd, sizeof(cmd), "awk '{ n += $NF } END { exit n != %d }' '%s/all.folded'", i,
		 dir);
	CHECK(system(cmd) == 0, "the folded file counts all %d samples", i);
	profile_outputs_free(outs);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "clean up");
}

int main(void)
{
	test_parking();
	test_parked_memory();
	test_epochs();
	test_budget_counts_jfr();
	test_epoch_cost();
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
	/* The node goes on; the stage has finished (its last sample at 1.99 s). */
	for (uint64_t t = 2 * NS; t <= 3 * NS + NS / 2; t += NS / 10)
		add(outs, node, t, "Other.run");
	CHECK(file_size(stage_tmp) == 0, "an output idle for 1.5 s still holds its chunk");
	for (uint64_t t = 3 * NS + 6 * NS / 10; t <= NS + OUTPUT_PARK_NS; t += NS / 10)
		add(outs, node, t, "Other.run");
	CHECK(file_size(stage_tmp) > 0,
	      "an output idle for over 2 s has written its chunk (%ld bytes on disk)",
	      file_size(stage_tmp));
	/* A straggler sample after the stage went idle still counts. */
	add(outs, stage, NS + OUTPUT_PARK_NS + NS / 2, "Late.run");
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
