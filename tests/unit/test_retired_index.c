/* test_retired_index.c - the places and names of retired outputs, kept in
 * the spill file: every place and name comes back right after pages went
 * out and runs were merged, in order or not; memory does not grow with
 * the count (300,000 outputs), nor the file with pages changed again; a tag shared by many outputs gives each;
 * a spill file that cannot be written keeps every place in memory and
 * refuses a name without losing those added. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/spill_file.h"
#include "output/retired_index.h"
#include "tap.h"

enum { OUTPUTS = 300000 };

static uint64_t place_of(uint32_t seq)
{
	return (uint64_t)seq * 7919 + 1;
}

/* Tags as name hashes give them, with every 16th output sharing tag 5. */
static uint32_t tag_of(uint32_t seq)
{
	uint64_t h = (seq + 1) * 0x9e3779b97f4a7c15ULL;

	return seq % 16 == 3 ? 5 : (uint32_t)(h >> 32);
}

struct look {
	uint32_t want, tag;
	int found, wrong_tag, calls;
	int stop_after;        /* return 7 after this many calls (0: never) */
};

static int visit(uint32_t seq, void *ctx)
{
	struct look *l = ctx;

	l->calls++;
	l->found += seq == l->want;
	l->wrong_tag += tag_of(seq) != l->tag;
	return l->stop_after && l->calls == l->stop_after ? 7 : 0;
}

static int find(struct retired_index *ix, uint32_t seq, struct look *l)
{
	*l = (struct look){ .want = seq, .tag = tag_of(seq) };
	return retired_index_find(ix, l->tag, visit, l);
}

int main(void)
{
	char dir[] = "/tmp/sparkprof-test-retired-XXXXXX", cmd[100];
	struct spill_file *spill;
	struct retired_index *ix;
	int bad = 0, missing = 0, wrong = 0, shared = 0, ret;
	size_t mem_early = 0, mem;
	uint64_t place;
	struct look l;

	CHECK(mkdtemp(dir) != NULL, "a folder");
	spill = spill_file_new(dir, "outputs");
	ix = retired_index_new(spill);
	CHECK(ix != NULL, "an index");

	for (uint32_t s = 0; s < OUTPUTS; s++) {
		if (retired_index_set_place(ix, s, place_of(s)) ||
		    retired_index_add_name(ix, tag_of(s), s))
			bad++;
		if (s == OUTPUTS / 3)
			mem_early = retired_index_memory(ix);
	}
	mem = retired_index_memory(ix);
	CHECK(!bad, "%d places and names added", OUTPUTS);
	CHECK(mem < 320 << 10, "the index holds %zu bytes of heap for %d outputs", mem, OUTPUTS);
	/* A fence a 512 names and a page entry a 4096 places: 0.02 bytes an
	 * output (36 before). */
	CHECK(mem - mem_early < (OUTPUTS - OUTPUTS / 3) / 20,
	      "and grew by %zu bytes from %d outputs on: under 0.05 bytes an output",
	      mem - mem_early, OUTPUTS / 3);

	for (uint32_t s = 0; s < OUTPUTS; s++)
		if (retired_index_place(ix, s, &place) || place != place_of(s))
			bad++;
	for (uint32_t i = 0, s = 12345; i < 20000; i++, s = (s * 1103515245u + 12345u) % OUTPUTS)
		if (retired_index_place(ix, s, &place) || place != place_of(s))
			bad++;
	CHECK(!bad, "every place reads back, in order and at random");
	CHECK(retired_index_place(ix, OUTPUTS + 10, &place) == 0 && place == 0,
	      "a seq never set reads as none");
	CHECK(retired_index_set_place(ix, OUTPUTS + 1, 1) == -EINVAL,
	      "a seq past the next one is refused");
	CHECK(retired_index_set_place(ix, 17, 99) == 0 &&
	      retired_index_set_place(ix, OUTPUTS - 1, 98) == 0 &&
	      retired_index_set_place(ix, 200000, 97) == 0 &&
	      retired_index_place(ix, 17, &place) == 0 && place == 99 &&
	      retired_index_place(ix, 200000, &place) == 0 && place == 97 &&
	      retired_index_place(ix, OUTPUTS - 1, &place) == 0 && place == 98,
	      "a place changed on a page that went out reads back changed");
	retired_index_set_place(ix, 17, place_of(17));
	retired_index_set_place(ix, 200000, place_of(200000));
	retired_index_set_place(ix, OUTPUTS - 1, place_of(OUTPUTS - 1));
	{
		uint64_t before = spill_file_bytes(spill);

		/* Outputs read back and retired again, all over the run: each
		 * changes a page that has gone out before. */
		for (int round = 0; round < 3; round++)
			for (uint32_t s = 5; s < OUTPUTS; s += 4096)
				if (retired_index_set_place(ix, s, place_of(s) + round + 1))
					bad++;
		for (uint32_t s = 5; s < OUTPUTS; s += 4096)
			if (retired_index_place(ix, s, &place) || place != place_of(s) + 3)
				bad++;
		CHECK(!bad && spill_file_bytes(spill) == before,
		      "pages changed again are written over their copies: the file stays at "
		      "%llu bytes (%llu)", (unsigned long long)before,
		      (unsigned long long)spill_file_bytes(spill));
		for (uint32_t s = 5; s < OUTPUTS; s += 4096)
			retired_index_set_place(ix, s, place_of(s));
	}

	for (uint32_t s = 0; s < OUTPUTS; s++) {
		ret = find(ix, s, &l);
		missing += ret || l.found != 1;
		wrong += l.wrong_tag;
		if (s % 16 == 3)
			shared += l.calls == OUTPUTS / 16;
	}
	CHECK(!missing && !wrong, "each output is found by its tag, once, and only outputs of "
	      "that tag come (%d missing, %d of another tag)", missing, wrong);
	CHECK(shared == OUTPUTS / 16, "a tag shared by %d outputs gives all of them (%d times)",
	      OUTPUTS / 16, shared);
	l = (struct look){ .tag = 5, .stop_after = 3 };
	CHECK(retired_index_find(ix, 5, visit, &l) == 7 && l.calls == 3,
	      "fn's value stops the search and is returned");
	l = (struct look){ .tag = 6 };
	CHECK(retired_index_find(ix, 6, visit, &l) == 0 && l.calls == 0, "an absent tag finds none");
	retired_index_free(ix);
	spill_file_free(spill);

	/* A spill file that cannot be written (its folder is gone). */
	spill = spill_file_new("/nonexistent-sparkprof-dir", "outputs");
	ix = retired_index_new(spill);
	for (uint32_t s = 0; s < 5 * 4096; s++)
		if (retired_index_set_place(ix, s, place_of(s)))
			bad++;
	for (uint32_t s = 0; s < 5 * 4096; s++)
		if (retired_index_place(ix, s, &place) || place != place_of(s))
			bad++;
	CHECK(!bad, "pages that cannot go out stay in memory: no place is lost");
	for (uint32_t s = 0; s < 20000 && !(ret = retired_index_add_name(ix, tag_of(s), s)); s++)
		;
	CHECK(ret < 0, "a name that cannot be written out is refused (%s)", strerror(-ret));
	missing = 0;
	for (uint32_t s = 0; s < 8192; s++) {
		ret = find(ix, s, &l);
		missing += ret || l.found != 1;
	}
	CHECK(!missing, "the names added before are all still found (%d missing)", missing);
	retired_index_free(ix);
	spill_file_free(spill);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "clean up");
	TAP_DONE();
}
