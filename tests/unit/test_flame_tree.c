/* test_flame_tree.c - the folded parser and call tree behind flame graphs:
 * frame types from suffixes and names, merging, self counts, diff columns
 * and one-line errors for malformed input. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/flame_tree.h"
#include "tap.h"

static int type_of(const char *text)
{
	size_t n;

	return flame_frame_type(text, strlen(text), &n);
}

static const struct flame_node *find(struct flame_tree *t, const char *name, int type)
{
	size_t n;
	const struct flame_node *nodes = flame_tree_nodes(t, &n);

	for (size_t i = 1; i < n; i++)
		if (!strcmp(flame_tree_name(t, nodes[i].name), name) && nodes[i].type == type)
			return &nodes[i];
	return NULL;
}

static int parse(const char *text, char *err)
{
	struct flame_tree *t = flame_tree_new();
	int rc = flame_tree_parse(t, text, strlen(text), 0, err, 128);

	flame_tree_free(t);
	return rc;
}

int main(void)
{
	struct flame_tree *t = flame_tree_new();
	const char *text = "main;foo_[j];bar_[i] 10\nmain;foo_[j] 5\n\nmain;foo_[0] 2\r\nmain;baz 3\n";
	const struct flame_node *n;
	size_t nn, len;
	char err[128];

	CHECK(type_of("do_sys_read_[k]") == FRAME_KERNEL, "_[k] is kernel");
	CHECK(type_of("Foo.bar_[j]") == FRAME_JIT, "_[j] is JIT");
	CHECK(type_of("Foo.bar_[1]") == FRAME_JIT, "_[1] (C1) is JIT");
	CHECK(type_of("Foo.bar_[i]") == FRAME_INLINED, "_[i] is inlined");
	CHECK(type_of("Foo.bar_[0]") == FRAME_INTERPRETED, "_[0] is interpreted");
	CHECK(type_of("java/lang/Thread.run") == FLAME_JAVA, "a/b/C.m is Java");
	CHECK(type_of("java.lang.Thread.run") == FLAME_JAVA, "a.b.C.m is Java");
	CHECK(type_of("Executor$TaskRunner.run") == FRAME_NATIVE, "C.m alone is not sure Java");
	CHECK(type_of("JavaThread::run()") == FRAME_CPP, "x::y is C++");
	CHECK(type_of("[unknown]") == FRAME_NATIVE, "[unknown] is native");
	CHECK(type_of("main.cold") == FRAME_NATIVE, "gcc's main.cold is native");
	flame_frame_type("foo_[k]", 7, &len);
	CHECK(len == 3, "the suffix is not part of the name");

	CHECK(flame_tree_parse(t, text, strlen(text), 0, err, sizeof(err)) == 0, "parses");
	flame_tree_nodes(t, &nn);
	CHECK(flame_tree_nodes(t, &nn)[0].total[0] == 20, "root total is the sum of counts");
	n = find(t, "foo", FRAME_JIT);
	CHECK(n && n->total[0] == 15 && n->self[0] == 5, "foo_[j]: total 15, self 5");
	n = find(t, "foo", FRAME_INTERPRETED);
	CHECK(n && n->total[0] == 2, "the same name with another type is another node");
	n = find(t, "bar", FRAME_INLINED);
	CHECK(n && n->self[0] == 10, "leaf self is its count");
	n = find(t, "main", FRAME_NATIVE);
	CHECK(n && n->total[0] == 20 && n->self[0] == 0, "stacks merge from the root");
	CHECK(nn == 6, "6 nodes: root, main, foo_[j], bar, foo_[0], baz (%zu)", nn);

	CHECK(flame_tree_parse(t, "main;baz 7\nmain;new 1\n", 22, 1, err, sizeof(err)) == 0,
	      "a second column parses");
	n = find(t, "baz", FRAME_NATIVE);
	CHECK(n && n->total[0] == 3 && n->total[1] == 7, "columns count apart");
	CHECK(flame_tree_nodes(t, &nn)[0].total[1] == 8, "second column total");
	flame_tree_free(t);

	CHECK(parse("a;b 1\nno count here\n", err) == -EINVAL && strstr(err, "line 2"),
	      "a line without a count is an error naming its line: %s", err);
	CHECK(parse("a;b x1\n", err) == -EINVAL && strstr(err, "whole number"),
	      "a count that is not a number: %s", err);
	CHECK(parse("a 99999999999999999999\n", err) == -EINVAL && strstr(err, "too large"),
	      "a count beyond 2^64: %s", err);
	CHECK(parse("a 18446744073709551615\nb 1\n", err) == -EINVAL && strstr(err, "2^64"),
	      "counts adding up beyond 2^64: %s", err);
	CHECK(parse("a;b 5\n", err) == 0, "a well-formed line parses");
	CHECK(parse(" 5\n", err) == -EINVAL, "a count with no stack is an error");

	{
		/* deeper than FLAME_DEPTH_MAX */
		size_t depth = FLAME_DEPTH_MAX + 1, cap = depth * 2 + 16, pos = 0;
		char *deep = malloc(cap);

		for (size_t i = 0; i < depth; i++) {
			deep[pos++] = 'f';
			deep[pos++] = i + 1 < depth ? ';' : ' ';
		}
		deep[pos++] = '1';
		deep[pos] = '\0';
		CHECK(parse(deep, err) == -E2BIG && strstr(err, "deeper"), "too deep: %s", err);
		free(deep);
	}
	{
		/* Node by node, as a recording's own profiles are built. */
		struct flame_tree *b = flame_tree_new();
		uint32_t top, mid, leaf, again;

		CHECK(b && flame_tree_child(b, 0, "java-7", 6, -1, &top) == 0 &&
		      flame_tree_child(b, top, "Foo.bar", 7, FRAME_INTERPRETED, &mid) == 0 &&
		      flame_tree_child(b, mid, "do_read_[k]", 11, FRAME_KERNEL, &leaf) == 0,
		      "children one by one");
		CHECK(flame_tree_child(b, top, "Foo.bar", 7, FRAME_INTERPRETED, &again) == 0 &&
		      again == mid, "the same child is found again");
		CHECK(find(b, "Foo.bar", FRAME_INTERPRETED) && find(b, "do_read", FRAME_KERNEL) &&
		      !find(b, "Foo.bar", FRAME_NATIVE),
		      "a given type replaces the guess; the suffix still leaves the name");
		CHECK(flame_tree_add_self(b, leaf, 4, 0) == 0 && flame_tree_add_self(b, mid, 1, 0) == 0,
		      "add self counts");
		n = flame_tree_nodes(b, &nn);
		CHECK(n[0].total[0] == 5 && n[top].total[0] == 5 && n[mid].total[0] == 5 &&
		      n[mid].self[0] == 1 && n[leaf].self[0] == 4 && n[leaf].total[0] == 4,
		      "self counts reach every caller's total");
		CHECK(flame_tree_add_self(b, leaf, UINT64_MAX, 0) == -EOVERFLOW,
		      "a total past 2^64 is refused");
		flame_tree_free(b);
	}
	TAP_DONE();
}
