/* test_stack_table.c - interned stacks: ids, read-back, what makes two
 * stacks differ, and the storage that deep stacks sharing callers take. */
#include <stdio.h>
#include <string.h>

#include "base/stack_table.h"
#include "tap.h"

static const char *const names[] = { "main", "run", "recurse", "leaf_a", "leaf_b", "other" };

/* frames leaf first: each character of spec picks a name. */
static size_t make(struct frame *out, const char *spec)
{
	size_t n = strlen(spec);

	for (size_t i = 0; i < n; i++)
		out[i] = (struct frame){ names[spec[i] - '0'],
					 spec[i] == '3' ? FRAME_JIT : FRAME_NATIVE };
	return n;
}

/* Stack id read back along its path: frames leaf first, as interned. */
static size_t read_back(const struct stack_table *t, uint32_t id, const char **root,
			const char **thread, struct frame *frames, size_t cap)
{
	size_t n = 0;
	struct stack_node sn = { 0 };

	for (uint32_t node = stack_table_leaf(t, id); node; node = sn.parent) {
		sn = stack_table_node(t, node);
		if (sn.kind == STACK_NODE_FRAME && n < cap)
			frames[n++] = sn.frame;
		else if (sn.kind == STACK_NODE_THREAD)
			*thread = sn.frame.name;
		else if (sn.kind == STACK_NODE_ROOT)
			*root = sn.frame.name;
	}
	return n;
}

static int reads_back(struct stack_table *t, int64_t id, const char *root, const char *thread,
		      const char *spec)
{
	struct frame want[64], got[64];
	size_t n = make(want, spec), got_n;
	const char *r = NULL, *th = NULL;

	if (id < 0)
		return 0;
	got_n = read_back(t, (uint32_t)id, &r, &th, got, 64);
	if (got_n != n || strcmp(r, root) || (thread ? !th || strcmp(th, thread) : th != NULL))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (got[i].name != want[i].name || got[i].type != want[i].type)
			return 0;
	return 1;
}

static int64_t intern(struct stack_table *t, const char *root, const char *thread,
		      const char *spec)
{
	struct frame f[64];
	size_t n = make(f, spec);

	return stack_table_intern(t, root, thread, f, n);
}

static void test_ids(void)
{
	struct stack_table *t = stack_table_new();
	char root_copy[] = "java-17", thread_copy[] = "worker-1";
	int64_t a, b, c, d, e, g, h;

	a = intern(t, "java-17", "worker-1", "3210");
	b = intern(t, "java-17", "worker-1", "4210");
	c = intern(t, "java-17", "worker-1", "210");    /* a's callers: a stack of its own */
	d = intern(t, "java-17", "worker-2", "3210");
	e = intern(t, "java-18", "worker-1", "3210");
	g = intern(t, "java-17", NULL, "3210");
	h = intern(t, root_copy, thread_copy, "3210");  /* same text, other copies */
	CHECK(a == 0 && b == 1 && c == 2 && d == 3 && e == 4 && g == 5,
	      "ids 0, 1, 2... in order of first sight");
	CHECK(h == a, "the same stack from other copies of its texts: the same id");
	CHECK(stack_table_count(t) == 6, "6 stacks (%zu)", stack_table_count(t));
	CHECK(reads_back(t, a, "java-17", "worker-1", "3210") &&
	      reads_back(t, b, "java-17", "worker-1", "4210") &&
	      reads_back(t, c, "java-17", "worker-1", "210") &&
	      reads_back(t, d, "java-17", "worker-2", "3210") &&
	      reads_back(t, e, "java-18", "worker-1", "3210") &&
	      reads_back(t, g, "java-17", NULL, "3210"), "each reads back leaf first, as given");
	CHECK(intern(t, "java-17", "worker-1", "") == 6 &&
	      reads_back(t, 6, "java-17", "worker-1", ""), "a stack of no frames");
	{
		struct frame f[4];
		size_t n = make(f, "3210");

		f[0].type = FRAME_NATIVE;
		CHECK(stack_table_intern(t, "java-17", "worker-1", f, n) == 7,
		      "the same names with another frame type: another stack");
	}
	{
		/* Stacks are found by hash and checked at their ends only: one
		 * that differs between them, or in its thread or root, is still
		 * its own. */
		int64_t mid = intern(t, "java-17", "worker-1", "3120");
		int64_t mid_again = intern(t, "java-17", "worker-1", "3120");

		CHECK(mid == 8 && mid_again == 8 && intern(t, "java-17", "worker-1", "3210") == a,
		      "a stack that differs only between its ends is another (%lld)", (long long)mid);
		CHECK(intern(t, "java-17", "worker-3", "3120") == 9 &&
		      intern(t, "java-19", "worker-1", "3120") == 10 &&
		      intern(t, "java-17", NULL, "3120") == 11,
		      "so is one with another thread or root");
	}
	strcpy(root_copy, "java-99");
	CHECK(reads_back(t, a, "java-17", "worker-1", "3210"),
	      "the table keeps its own copies of roots and threads");
	stack_table_free(t);
}

/* 1000 stacks 1200 frames deep that differ only in their 10 innermost
 * frames, as samples of one deep recursion do. */
static void test_deep_sharing(void)
{
	static struct frame f[1200];
	struct stack_table *t = stack_table_new();
	int64_t last = -1;
	int wrong = 0;

	for (int s = 0; s < 1000; s++) {
		/* The 10 innermost frames spell s in base 6. */
		for (int i = 0, v = s; i < 1200; i++, v /= 6)
			f[i] = (struct frame){ names[i < 10 ? v % 6 : 2], FRAME_JIT };
		last = stack_table_intern(t, "java-1", "worker", f, 1200);
		wrong += last != s;
	}
	CHECK(!wrong, "every stack stored under its own id (%d wrong)", wrong);
	CHECK(stack_table_memory(t) < 8u << 20,
	      "1000 x 1200 frames sharing callers take %zu KiB (copied: 18750 KiB)",
	      stack_table_memory(t) >> 10);
	CHECK(stack_table_intern(t, "java-1", "worker", f, 1200) == last && last == 999,
	      "the last stack is found again");
	{
		static struct frame got[1300];
		const char *root = NULL, *thread = NULL;
		size_t n, same = 0;

		n = read_back(t, 999, &root, &thread, got, 1300);
		for (size_t i = 0; i < n && n == 1200; i++)
			same += got[i].name == f[i].name && got[i].type == f[i].type;
		CHECK(n == 1200 && same == 1200 && !strcmp(root, "java-1") &&
		      !strcmp(thread, "worker"), "and reads back whole (%zu of %zu frames)", same, n);
	}
	stack_table_free(t);
}

int main(void)
{
	test_ids();
	test_deep_sharing();
	TAP_DONE();
}
