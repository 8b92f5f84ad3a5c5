/* test_folded.c - folded stack aggregation and its file format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/folded.h"
#include "tap.h"

static char *slurp(const char *path)
{
	static char buf[65536];
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
	TAP_DONE();
}
