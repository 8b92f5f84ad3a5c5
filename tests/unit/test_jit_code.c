/* test_jit_code.c - the JIT code store's cache of inlined frames read
 * back: past its budget, the frames of methods no lookup landed in since
 * the last trim are dropped and read back when one does, with the same
 * names; frames whose records the reader can no longer reach are kept.
 * And its address index, brought up to date by merging the blobs added
 * since the last lookup, answers as one built once over all of them.
 * (Naming and deferral through a real helper log: test_jvm_helper_log.c.)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jvm/jit_code.h"
#include "tap.h"

#define METHODS 40
#define RANGES 16
#define BASE 0x7f0000000000ull
#define SIZE 0x1000ull

static const char *const callee[] = { "Callee.a", "Callee.b", "Callee.c", "Callee.d" };
static char method_names[METHODS][32];

/* The loader: "reads" method id's records, which here are made from id:
 * RANGES ranges of 0x40 bytes, each inlining a chain that depends on the
 * method and the range. */
struct loader {
	struct jit_code *jc;
	unsigned loads[METHODS + 1];
	unsigned total;
};

static void fake_load(void *ctx, uint64_t id, uint32_t offset, uint32_t length)
{
	struct loader *l = ctx;
	uint64_t start = BASE + (id - 1) * SIZE;

	(void)offset;
	(void)length;
	l->loads[id]++;
	l->total++;
	for (unsigned r = 0; r < RANGES; r++) {
		const char *chain[2] = { callee[(id + r) % 4], callee[r % 4] };

		jit_code_add_inline(l->jc, id, start + r * 0x40, start + r * 0x40 + 0x40, chain,
				    1 + r % 2);
	}
}

/* Method id's range r names its inlined frames and then the method. */
static int named_right(struct jit_code *jc, uint64_t id, unsigned r)
{
	struct frame f[8];
	int n = jit_code_resolve(jc, BASE + (id - 1) * SIZE + r * 0x40 + 5, 100, f, 8);
	int depth = 1 + r % 2;

	if (n != depth + 1 || strcmp(f[n - 1].name, method_names[id - 1]) ||
	    f[n - 1].type != FRAME_JIT)
		return 0;
	/* Innermost first, as the loader gave them. */
	return f[0].type == FRAME_INLINED && !strcmp(f[0].name, callee[(id + r) % 4]) &&
	       (depth == 1 || (f[1].type == FRAME_INLINED && !strcmp(f[1].name, callee[r % 4])));
}

static int all_named_right(struct jit_code *jc, uint64_t from, uint64_t to)
{
	for (uint64_t id = from; id <= to; id++)
		for (unsigned r = 0; r < RANGES; r++)
			if (!named_right(jc, id, r))
				return 0;
	return 1;
}

/* Two stores get the same blobs (overlapping, reusing addresses, some
 * unloaded, one compaction); one is looked up after every few adds, so
 * its index grows by merges, the other only at the end.  Every answer
 * must be the same. */
#define INDEX_BLOBS 3000
static void test_index_merges_answer_as_one_build(void)
{
	static char names[INDEX_BLOBS][16];
	struct jit_code *merged = jit_code_new(), *once = jit_code_new();
	uint64_t seed = 42, ts = 1;
	size_t lookups = 0, named = 0, differ = 0;

	if (!merged || !once) {
		CHECK(0, "stores made");
		return;
	}
#define NEXT() (seed = seed * 6364136223846793005ull + 1442695040888963407ull, seed >> 33)
	for (uint64_t id = 1; id <= INDEX_BLOBS; id++, ts++) {
		uint64_t start = BASE + NEXT() % 0x400000, size = 0x20 + NEXT() % 0x800;
		struct frame f[4];

		snprintf(names[id - 1], sizeof(names[id - 1]), "M%llu", (unsigned long long)id);
		jit_code_add(merged, id % 7 != 0, ts, id, start, size, names[id - 1]);
		jit_code_add(once, id % 7 != 0, ts, id, start, size, names[id - 1]);
		if (id % 5 == 0) {
			uint64_t victim = 1 + NEXT() % id;

			jit_code_unload(merged, ts, victim);
			jit_code_unload(once, ts, victim);
		}
		if (id == INDEX_BLOBS / 2) {
			jit_code_forget(merged, ts - 200);
			jit_code_forget(once, ts - 200);
		}
		if (NEXT() % 8 == 0) {
			jit_code_resolve(merged, BASE + NEXT() % 0x400800, ts, f, 4);
			lookups++;
		}
	}
	for (int q = 0; q < 20000; q++) {
		uint64_t addr = BASE + NEXT() % 0x400800, when = ts - NEXT() % 1000;
		struct frame a[4], b[4];
		int na = jit_code_resolve(merged, addr, when, a, 4);
		int nb = jit_code_resolve(once, addr, when, b, 4);

		named += na > 0;
		differ += na != nb || (na > 0 && a[na - 1].name != b[nb - 1].name);
	}
#undef NEXT
	CHECK(lookups > 300 && named > 2000 && differ == 0,
	      "an index merged %zu times answers as one built once (%zu of 20000 named, %zu differ)",
	      lookups, named, differ);
	jit_code_free(merged);
	jit_code_free(once);
}

/* Deep chains that share their outer frames, as a large compiled
 * method's ranges do: each frame is stored once, however many chains hold
 * it, and a lookup that has room for fewer frames keeps the outermost. */
#define DEEP_RANGES 400
static void test_deep_chains_share_frames(void)
{
	static const char *const outer[8] = { "O.a", "O.b", "O.c", "O.d", "O.e", "O.f", "O.g", "O.h" };
	static char leaf[50][16], mid[7][16];
	struct jit_code *jc = jit_code_new();
	struct jit_code_usage u;
	struct frame f[16];
	int ok = 1, n;

	if (!jc || jit_code_add(jc, 1, 10, 1, BASE, DEEP_RANGES * 0x10, "Big.run")) {
		CHECK(0, "store made");
		jit_code_free(jc);
		return;
	}
	for (int i = 0; i < 50; i++)
		snprintf(leaf[i], sizeof(leaf[i]), "Leaf%d.x", i);
	for (int i = 0; i < 7; i++)
		snprintf(mid[i], sizeof(mid[i]), "Mid%d.y", i);
	for (unsigned r = 0; r < DEEP_RANGES; r++) {
		const char *chain[10] = { leaf[r % 50], mid[r % 7] };

		memcpy(chain + 2, outer, sizeof(outer));
		ok &= jit_code_add_inline(jc, 1, BASE + r * 0x10, BASE + r * 0x10 + 0x10, chain, 10) == 0;
	}
	jit_code_usage(jc, &u);
	/* 350 distinct chains of 10 frames: 28 KB of names as arrays; as a
	 * tree 365 frames, ranges and the index about 16 KB. */
	CHECK(ok && u.ranges == DEEP_RANGES && u.frames == 365 && u.inline_bytes < 20 * 1024,
	      "%zu ranges of depth 10: %zu frames stored, %zu bytes", u.ranges, u.frames,
	      u.inline_bytes);
	n = jit_code_resolve(jc, BASE + 123 * 0x10 + 3, 100, f, 16);
	CHECK(n == 11 && !strcmp(f[0].name, leaf[123 % 50]) && !strcmp(f[1].name, mid[123 % 7]) &&
	      !strcmp(f[2].name, "O.a") && !strcmp(f[9].name, "O.h") && f[9].type == FRAME_INLINED &&
	      !strcmp(f[10].name, "Big.run") && f[10].type == FRAME_JIT,
	      "a range names its 10 inlined frames innermost first, then the method (%d)", n);
	n = jit_code_resolve(jc, BASE + 123 * 0x10 + 3, 100, f, 4);
	CHECK(n == 4 && !strcmp(f[0].name, "O.f") && !strcmp(f[2].name, "O.h") &&
	      !strcmp(f[3].name, "Big.run"), "room for 4: the 3 outermost inlined frames and the method");
	jit_code_free(jc);
}

int main(void)
{
	test_deep_chains_share_frames();
	test_index_merges_answer_as_one_build();

	struct jit_code *jc = jit_code_new();
	struct loader l = { .jc = jc };
	size_t full, dropped;
	int deferred = 0;

	CHECK(jc != NULL, "store made");
	if (!jc)
		TAP_DONE();
	jit_code_set_inline_loader(jc, fake_load, &l);
	for (uint64_t id = 1; id <= METHODS; id++) {
		snprintf(method_names[id - 1], sizeof(method_names[id - 1]), "Method%llu.run",
			 (unsigned long long)id);
		jit_code_add(jc, 1, 10, id, BASE + (id - 1) * SIZE, SIZE, method_names[id - 1]);
		deferred += jit_code_defer_inline(jc, id, (uint32_t)id * 100, 100) == 0;
	}
	CHECK(deferred == METHODS, "every method's frames deferred");
	CHECK(all_named_right(jc, 1, METHODS) && l.total == METHODS,
	      "every method read back once and named with its inlined frames (%u loads)", l.total);
	full = jit_code_memory(jc);

	/* Under the budget: nothing is dropped, used or not. */
	CHECK(jit_code_trim_inline(jc, 1u << 30) == 0, "under the budget nothing is dropped");
	CHECK(jit_code_trim_inline(jc, 1u << 30) == 0 && all_named_right(jc, 1, METHODS) &&
	      l.total == METHODS, "and nothing is read again");

	/* Over it: only the methods no lookup landed in since the last trim. */
	jit_code_trim_inline(jc, 1u << 30);
	for (unsigned r = 0; r < RANGES; r++)
		named_right(jc, 1, r), named_right(jc, 2, r);
	dropped = jit_code_trim_inline(jc, 0);
	CHECK(dropped == METHODS - 2, "the %d unused methods' frames dropped (%zu)", METHODS - 2,
	      dropped);
	CHECK(jit_code_memory(jc) < full, "the store holds less: %zu bytes, was %zu",
	      jit_code_memory(jc), full);
	CHECK(all_named_right(jc, 1, 2) && l.total == METHODS,
	      "the two used methods named as before, not read again");
	CHECK(all_named_right(jc, 3, METHODS) && l.total == METHODS + METHODS - 2 &&
	      l.loads[3] == 2 && l.loads[1] == 1,
	      "a dropped method is read back when a lookup lands in it, named the same (%u loads)",
	      l.total);

	/* Everything was used since: a trim drops nothing, the next one all. */
	CHECK(jit_code_trim_inline(jc, 0) == 0, "used since the last trim: kept");
	CHECK(jit_code_trim_inline(jc, 0) == METHODS, "unused for a whole trim: all dropped");
	CHECK(all_named_right(jc, 1, METHODS), "and all named right again");

	/* The reader leaves its file: spans point nowhere, so frames stay
	 * until a new file restates where they lie. */
	jit_code_load_ended(jc);
	unsigned before = l.total;
	jit_code_trim_inline(jc, 0);
	CHECK(jit_code_trim_inline(jc, 0) == 0 && all_named_right(jc, 1, METHODS) &&
	      l.total == before, "frames whose records the reader left are never dropped");
	CHECK(jit_code_defer_inline(jc, 5, 500, 100) == -EEXIST,
	      "a restated place for method 5 (its frames are loaded)");
	jit_code_trim_inline(jc, 0);
	CHECK(jit_code_trim_inline(jc, 0) == 1 && all_named_right(jc, 1, METHODS) &&
	      l.total == before + 1 && l.loads[5] == 4,
	      "then only method 5 can be dropped, and is read back from its new place");
	jit_code_free(jc);
	TAP_DONE();
}
