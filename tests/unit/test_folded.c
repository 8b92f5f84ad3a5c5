/* test_folded.c - folded stack aggregation and its file format. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "id_sums.h"
#include "output/folded.h"
#include "tap.h"

static char *slurp(const char *path)
{
	static char buf[1 << 20];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* What folded_tree_foreach reported: counts, order, and one text's type. */
struct visited {
	const char *text;       /* the text whose type is asked */
	int type;
	uint64_t sum;
	size_t nodes;
	int callers_first;
	uint8_t seen[64];
};

static int visit(uint32_t node, uint32_t parent, const char *text, size_t len, int type,
		 uint64_t self, void *ctx)
{
	struct visited *v = ctx;

	v->sum += self;
	v->nodes++;
	if (node < 64 && parent < 64) {
		v->callers_first &= !parent || v->seen[parent];
		v->seen[node] = 1;
	}
	if (len == strlen(v->text) && !memcmp(text, v->text, len))
		v->type = type;
	return 0;
}

static int type_of(const struct folded_profile *p, const char *text)
{
	struct folded_tree *t = folded_tree_build(p);
	struct visited v = { .text = text, .type = -2, .callers_first = 1 };

	if (!t || folded_tree_foreach(t, 1, visit, &v))
		v.type = -3;
	folded_tree_free(t);
	return v.type;
}

/* Counts kept as an array by id when the profile sees most ids (the
 * node's), as a table when it sees few far apart (a stage's), and moved
 * from one to the other when that changes, without losing a count. */
static void check_count_forms(void)
{
	struct stack_table *tab = stack_table_new();
	struct folded_profile *node = folded_profile_new(tab), *stage = folded_profile_new(tab);
	struct folded_profile *late = folded_profile_new(tab);
	struct frame f[2] = { { "leaf", FRAME_NATIVE }, { "main", FRAME_NATIVE } };
	char names[20000][8], a[] = "/tmp/sparkprof-test-forms-a-XXXXXX",
			      b[] = "/tmp/sparkprof-test-forms-b-XXXXXX";
	struct id_sums s;
	uint64_t weighted = 0;
	size_t mem;
	int fa = mkstemp(a), fb = mkstemp(b);
	char *text_a;

	close(fa);
	close(fb);
	for (int i = 0; i < 20000; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		f[0].name = names[i];
		if (stack_table_intern(tab, "java-1", NULL, f, 2) != i)
			break;
		folded_profile_add_id(node, (uint32_t)i, (uint64_t)i + 1);
		if (i % 100 == 0)
			folded_profile_add_id(stage, (uint32_t)i, 2);
	}
	s = id_sums_of(node);
	mem = folded_profile_memory(node);
	for (uint64_t i = 0; i < 20000; i++)
		weighted += i * (i + 1);
	CHECK(s.weighted == weighted, "each id keeps its own count");
	weighted += 19999999ull * 7;
	CHECK(s.ids == 20000 && s.count == 20000ull * 20001 / 2 && folded_profile_total(node) == s.count,
	      "a profile of every id keeps every count (%zu ids)", s.ids);
	CHECK(mem <= 20000 * 8 * 3 / 2 + 256, "as an array by id: %zu bytes for 20000 ids", mem);
	s = id_sums_of(stage);
	mem = folded_profile_memory(stage);
	CHECK(s.ids == 200 && s.count == 400, "a profile of every 100th id keeps its counts");
	CHECK(mem <= 200 * 4 * 12 + 256, "as a table: %zu bytes for 200 ids spread over 20000", mem);
	CHECK(folded_profile_add_id(node, 5, 0) == 0 && id_sums_of(node).ids == 20000,
	      "a count of 0 adds nothing");

	/* the node's counts, then a far id: too sparse for an array */
	CHECK(folded_profile_add_id(node, 19999999, 7) == 0, "add an id a thousand times further");
	s = id_sums_of(node);
	mem = folded_profile_memory(node);
	CHECK(s.ids == 20001 && s.count == 20000ull * 20001 / 2 + 7 && s.weighted == weighted,
	      "every count kept across the change");
	CHECK(mem <= 20001 * 4 * 12, "and held as a table (%zu bytes, not 160 MB of array)", mem);

	/* a profile that starts with late ids and then sees every one */
	for (int i = 19999; i >= 0; i--)
		folded_profile_add_id(late, (uint32_t)i, 1);
	s = id_sums_of(late);
	mem = folded_profile_memory(late);
	CHECK(s.ids == 20000 && s.count == 20000, "late ids first, then all: every count kept");
	CHECK(mem <= 20000 * 8 * 3 / 2 + 256, "and moved to an array (%zu bytes)", mem);

	/* the files read the same whichever form the counts take */
	CHECK(folded_profile_write(late, a) == 0 && folded_profile_write(stage, b) == 0, "write both");
	text_a = strdup(slurp(a));
	CHECK(strstr(text_a, "java-1;main;f0 1\n") && strstr(text_a, "java-1;main;f19999 1\n") &&
	      strstr(slurp(b), "java-1;main;f19900 2\n") && !strstr(slurp(b), "f19901"),
	      "an array's and a table's lines");
	folded_profile_free(late);
	late = folded_profile_new(tab);
	for (int i = 0; i < 20000; i += 100)
		folded_profile_add_id(late, (uint32_t)i, 2);
	CHECK(folded_profile_write(late, a) == 0 && !strcmp(slurp(a), slurp(b)) ? 1 : 0,
	      "ids added in another order write the same file");
	free(text_a);
	unlink(a);
	unlink(b);
	folded_profile_free(node);
	folded_profile_free(stage);
	folded_profile_free(late);
	stack_table_free(tab);
}

/* A profile of few stacks in a large table (a stage's) places the table's
 * nodes it passes in a hash of its own: with stacks far deeper than its
 * first guess (50 of 300 frames, each frame its own), the hash grows and
 * the file reads the same as the same stacks in a table of their own. */
static void check_deep_sparse(void)
{
	static char names[50][300][12], fillers[20000][8]; /* the table keys names by address */
	struct stack_table *tab = stack_table_new();
	struct folded_profile *sparse = folded_profile_new(tab), *own = folded_profile_new(NULL);
	struct frame f[300];
	char a[] = "/tmp/sparkprof-test-sparse-a-XXXXXX", b[] = "/tmp/sparkprof-test-sparse-b-XXXXXX";
	char *text;
	size_t lines = 0;

	close(mkstemp(a));
	close(mkstemp(b));
	for (int i = 0; i < 20000; i++) {
		struct frame two[2] = { { fillers[i], FRAME_NATIVE }, { "main", FRAME_NATIVE } };

		snprintf(fillers[i], sizeof(fillers[i]), "f%d", i);
		stack_table_intern(tab, "java-1", NULL, two, 2);
	}
	CHECK(stack_table_node_count(tab) > 20000, "a table of 20,000 stacks (%zu nodes)",
	      stack_table_node_count(tab));
	for (int k = 0; k < 50; k++) {
		for (int d = 0; d < 300; d++) {
			snprintf(names[k][d], sizeof(names[k][d]), "d%d_%d", d, k);
			f[d] = (struct frame){ names[k][d], FRAME_JIT };
		}
		folded_profile_add(sparse, "java-1", NULL, f, 300, (uint64_t)k + 1);
		folded_profile_add(own, "java-1", NULL, f, 300, (uint64_t)k + 1);
	}
	CHECK(folded_profile_memory(sparse) < 16384,
	      "50 stacks of 20,050 counted as a table, not an array by id (%zu bytes)",
	      folded_profile_memory(sparse));
	CHECK(folded_profile_write(sparse, a) == 0 && folded_profile_write(own, b) == 0,
	      "both written");
	text = strdup(slurp(a));
	for (const char *c = text; (c = strchr(c, '\n')); c++)
		lines++;
	CHECK(lines == 50 && strstr(text, ";d1_49;d0_49 50\n") && !strncmp(text, "java-1;d299_0;", 14),
	      "every deep stack on a line of its own, callers first (%zu lines)", lines);
	CHECK(!strcmp(text, slurp(b)), "the same file as the stacks in a table of their own");
	free(text);
	unlink(a);
	unlink(b);
	folded_profile_free(sparse);
	folded_profile_free(own);
	stack_table_free(tab);
}

/* A tree built in steps, from a saved tree of one stack table and a
 * profile of another, reads as one profile holding both; a saved tree
 * keeps counts past 32 bits and each text's types; bytes that are not a
 * saved tree are refused. */
static void check_saved_trees(void)
{
	struct folded_profile *first = folded_profile_new(NULL), *second = folded_profile_new(NULL);
	struct folded_profile *both = folded_profile_new(NULL);
	const struct frame a[] = { { "Foo.bar", FRAME_JIT }, { "main", FRAME_NATIVE } };
	const struct frame b[] = { { "Foo.bar", FRAME_INTERPRETED }, { "main", FRAME_NATIVE } };
	const struct frame k[] = { { "schedule", FRAME_KERNEL }, { "main", FRAME_NATIVE } };
	char pa[] = "/tmp/sparkprof-test-saved-a-XXXXXX", pb[] = "/tmp/sparkprof-test-saved-b-XXXXXX";
	struct folded_tree *t = NULL, *merged = NULL;
	struct visited v = { .text = "Foo.bar", .type = -2, .callers_first = 1 };
	void *data = NULL;
	size_t len = 0;
	uint8_t *bad;
	char *text_a;

	close(mkstemp(pa));
	close(mkstemp(pb));
	/* first: one stack table; second: another, whose name pointers differ */
	folded_profile_add(first, "java-1", "worker", a, 2, 5ull << 40);
	folded_profile_add(first, "java-1", NULL, k, 2, 3);
	folded_profile_add(second, "java-1", "worker", b, 2, 7);
	folded_profile_add(second, "java-2", NULL, k, 2, 1);
	folded_profile_add(both, "java-1", "worker", a, 2, 5ull << 40);
	folded_profile_add(both, "java-1", NULL, k, 2, 3);
	folded_profile_add(both, "java-1", "worker", b, 2, 7);
	folded_profile_add(both, "java-2", NULL, k, 2, 1);
	t = folded_tree_build(first);
	CHECK(t && folded_tree_save(t, &data, &len) == 0 && len > 0, "a tree saved (%zu bytes)", len);
	folded_tree_free(t);
	merged = folded_tree_new();
	CHECK(merged && folded_tree_add_saved(merged, data, len) == 0 &&
	      folded_tree_add_profile(merged, second) == 0, "the saved tree and a profile merged");
	CHECK(folded_tree_write(merged, pa, 1) == 0 && folded_profile_write(both, pb) == 0,
	      "both written");
	text_a = strdup(slurp(pa));
	/* a saved tree keeps its stacks in text order, a profile in the order
	 * first seen */
	CHECK(!strcmp(text_a, "java-1;main;schedule_[k] 3\n"
			      "java-1;worker;main;Foo.bar 5497558138887\n"
			      "java-2;main;schedule_[k] 1\n") &&
	      !strcmp(slurp(pb), "java-1;worker;main;Foo.bar 5497558138887\n"
				 "java-1;main;schedule_[k] 3\n"
				 "java-2;main;schedule_[k] 1\n"),
	      "the same lines as one profile of both:\n%s", text_a);
	CHECK(strstr(text_a, "java-1;worker;main;Foo.bar 5497558138887\n") != NULL,
	      "a count over 32 bits, and one stack from both steps");
	CHECK(folded_tree_foreach(merged, 1, visit, &v) == 0 && v.type == FRAME_JIT,
	      "a text keeps the types of both steps (JIT before interpreted)");
	/* root; java-1, worker, main, Foo.bar; java-1's main, schedule; java-2,
	 * main, schedule */
	CHECK(folded_tree_node_count(merged) == 10, "shared callers are one node each (%zu)",
	      folded_tree_node_count(merged));
	free(text_a);
	/* a step after the tree was said built: its index is made again, and
	 * the same stacks land on the same nodes */
	folded_tree_built(merged);
	CHECK(folded_tree_add_saved(merged, data, len) == 0 && folded_tree_node_count(merged) == 10 &&
	      folded_tree_write(merged, pa, 1) == 0,
	      "the saved tree added again after built: the same nodes (%zu)",
	      folded_tree_node_count(merged));
	CHECK(!strcmp(slurp(pa), "java-1;main;schedule_[k] 6\n"
				 "java-1;worker;main;Foo.bar 10995116277767\n"
				 "java-2;main;schedule_[k] 1\n"),
	      "its counts added once more:\n%s", slurp(pa));
	bad = malloc(len);
	memcpy(bad, data, len);
	CHECK(folded_tree_add_saved(merged, bad, len - 1) == -EINVAL, "a tree cut short: -EINVAL");
	CHECK(folded_tree_add_saved(merged, bad, 3) == -EINVAL, "less than a header: -EINVAL");
	bad[0] ^= 1;
	CHECK(folded_tree_add_saved(merged, bad, len) == -EINVAL, "not a saved tree: -EINVAL");
	bad[0] ^= 1;
	/* the last node's depth (its 16 bytes end the tree) */
	memset(bad + len - 16, 0xff, 4);
	CHECK(folded_tree_add_saved(merged, bad, len) == -EINVAL,
	      "a node below a level it is not under: -EINVAL");
	free(bad);
	free(data);
	folded_tree_free(merged);
	folded_profile_free(first);
	folded_profile_free(second);
	folded_profile_free(both);
	unlink(pa);
	unlink(pb);
}

int main(void)
{
	struct folded_profile *p = folded_profile_new(NULL);
	const struct frame stack[] = {
		{ "do_sys_read", FRAME_KERNEL }, { "read", FRAME_NATIVE },
		{ "Foo.bar", FRAME_JIT }, { "main", FRAME_NATIVE },
	};
	const struct frame odd[] = { { "a;b\nc", FRAME_NATIVE }, { "", FRAME_NATIVE } };
	char path[] = "/tmp/sparkprof-test-folded-XXXXXX";
	int fd = mkstemp(path);
	const char *text;

	close(fd);
	CHECK(folded_profile_add(p, "java-1", NULL, stack, 4, 2) == 0, "add a stack");
	CHECK(folded_profile_add(p, "java-1", NULL, stack, 4, 3) == 0, "add it again");
	CHECK(folded_profile_add(p, "java-1", "worker-0", stack + 2, 2, 1) == 0,
	      "add with a thread frame");
	CHECK(folded_profile_add(p, "x-2", NULL, odd, 2, 1) == 0, "add awkward names");
	CHECK(folded_profile_add(p, NULL, NULL, NULL, 0, 1) == 0, "add an empty stack");
	CHECK(folded_profile_total(p) == 8, "total counts every sample");
	CHECK(folded_profile_write(p, path) == 0, "write");
	text = slurp(path);
	CHECK(strstr(text, "java-1;main;Foo.bar;read;do_sys_read_[k] 5\n") != NULL,
	      "root first, kernel frames suffixed, counts merged");
	CHECK(strstr(text, "java-1;worker-0;main;Foo.bar 1\n") != NULL, "thread frame");
	CHECK(strstr(text, "x-2;[unknown];a_b_c 1\n") != NULL,
	      "';' and newlines in names cannot split the line, empty names read [unknown]");
	CHECK(strstr(text, "[no stack] 1\n") != NULL, "an empty stack is kept and said");
	CHECK(access(strcat(strcpy(malloc(strlen(path) + 8), path), ".tmp"), F_OK) != 0,
	      "no temporary file left");
	CHECK(folded_profile_write_scaled(p, path, 3) == 0, "write scaled");
	text = slurp(path);
	CHECK(strstr(text, "do_sys_read_[k] 2\n") && !strstr(text, "worker-0"),
	      "counts divided and rounded, zeros left out");
	CHECK(folded_profile_write(p, "/proc/no-such-dir/x.folded") < 0,
	      "an unwritable path fails with a message");
	unlink(path);
	/* the types the texts were written with, for the flame graph pages */
	CHECK(type_of(p, "Foo.bar") == FRAME_JIT, "a JIT frame's type");
	CHECK(type_of(p, "read") == FRAME_NATIVE, "a native frame's type");
	CHECK(type_of(p, "do_sys_read_[k]") == FRAME_KERNEL, "a kernel frame's type, under its text");
	CHECK(type_of(p, "java-1") == -1, "root labels have no type");
	{
		const struct frame interp[] = { { "Foo.bar", FRAME_INTERPRETED } };
		struct folded_tree *t;
		struct visited v = { .text = "", .callers_first = 1 };

		CHECK(folded_profile_add(p, "java-1", NULL, interp, 1, 1) == 0, "add an interpreted twin");
		CHECK(type_of(p, "Foo.bar") == FRAME_JIT, "a name seen JIT and interpreted reads as JIT");
		t = folded_tree_build(p);
		CHECK(t && folded_tree_foreach(t, 1, visit, &v) == 0 && v.sum == folded_profile_total(p),
		      "foreach visits every count (%llu)", (unsigned long long)v.sum);
		CHECK(v.callers_first && v.nodes == folded_tree_node_count(t) - 1,
		      "every node once (%zu of %zu), each after its caller", v.nodes,
		      t ? folded_tree_node_count(t) - 1 : 0);
		folded_tree_free(t);
	}
	{
		/* Two copies of one name (two copies of a library) and a stack
		 * sharing the callers of another. */
		static char copy_a[] = "libfoo_work", copy_b[] = "libfoo_work";
		const struct frame a[] = { { copy_a, FRAME_NATIVE }, { "main", FRAME_NATIVE } };
		const struct frame b[] = { { copy_b, FRAME_NATIVE }, { "main", FRAME_NATIVE } };
		const struct frame c[] = { { "other", FRAME_NATIVE }, { "main", FRAME_NATIVE } };
		struct folded_profile *q = folded_profile_new(NULL);
		struct folded_tree *t;

		CHECK(q && folded_profile_add(q, "py-9", NULL, a, 2, 4) == 0 &&
		      folded_profile_add(q, "py-9", NULL, b, 2, 5) == 0 &&
		      folded_profile_add(q, "py-9", NULL, c, 2, 1) == 0, "add same-reading stacks");
		CHECK(folded_profile_write(q, path) == 0, "write them");
		text = slurp(path);
		CHECK(!strcmp(text, "py-9;main;libfoo_work 9\npy-9;main;other 1\n"),
		      "names that read the same are one line, lines first seen first: %s", text);
		t = folded_tree_build(q);
		CHECK(t && folded_tree_node_count(t) == 5,
		      "shared callers are one node each (%zu nodes: root, py-9, main, 2 leaves)",
		      t ? folded_tree_node_count(t) : 0);
		folded_tree_free(t);
		folded_profile_free(q);
		unlink(path);
	}
	folded_profile_free(p);
	check_count_forms();
	check_deep_sparse();
	check_saved_trees();
	TAP_DONE();
}
