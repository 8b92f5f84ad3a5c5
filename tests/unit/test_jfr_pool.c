/* test_jfr_pool.c - constant pool interning, keys, reset; the u64 map. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "output/jfr/jfr_map.h"
#include "output/jfr/jfr_pool.h"
#include "tap.h"

int main(void)
{
	struct jfr_pool *p = jfr_pool_new(31);
	struct jfr_map m;
	uint64_t a, b, c;
	char v[64];
	int bad = 0;

	CHECK(p != NULL, "pool created");
	CHECK(jfr_pool_count(p) == 0, "new pool is empty");
	a = jfr_pool_intern(p, "\x03\x03run", 5, 0);
	b = jfr_pool_intern(p, "\x03\x04main", 6, 0);
	c = jfr_pool_intern(p, "\x03\x03run", 5, 0);
	CHECK(a == 1 && b == 2, "sequential keys start at 1 (0 means null)");
	CHECK(c == a, "equal values get the same key");
	CHECK(jfr_pool_count(p) == 2, "two distinct entries");
	CHECK(jfr_pool_entries(p)->len == 1 + 5 + 1 + 6 &&
	      !memcmp(jfr_pool_entries(p)->data, "\x01\x03\x03run\x02\x03\x04main", 13),
	      "entries are 'key value' in insertion order");

	/* Many entries: growth keeps every key. */
	for (int i = 0; i < 50000; i++) {
		int n = snprintf(v, sizeof(v), "sym%d", i);

		if (jfr_pool_intern(p, v, n, 0) != (uint64_t)i + 3)
			bad++;
	}
	for (int i = 0; i < 50000; i += 7) {
		int n = snprintf(v, sizeof(v), "sym%d", i);

		if (jfr_pool_intern(p, v, n, 0) != (uint64_t)i + 3)
			bad++;
	}
	CHECK(!bad && jfr_pool_count(p) == 50002, "50000 entries keep their keys through growth");

	jfr_pool_reset(p);
	CHECK(jfr_pool_count(p) == 0 && jfr_pool_entries(p)->len == 0, "reset empties the pool");
	a = jfr_pool_intern(p, "\x03\x04main", 6, 0);
	CHECK(a == 50003, "keys keep counting after a reset (unique in the file): %llu",
	      (unsigned long long)a);
	jfr_pool_free(p);

	/* Wanted keys (thread ids): taken keys move to the spare range. */
	p = jfr_pool_new(22);
	a = jfr_pool_intern(p, "thread-a", 8, 4242);
	b = jfr_pool_intern(p, "thread-b", 8, 4242);
	c = jfr_pool_intern(p, "thread-a", 8, 4242);
	CHECK(a == 4242, "a free wanted key is used");
	CHECK(b == JFR_POOL_SPARE_KEYS, "a taken wanted key gives a spare key");
	CHECK(c == 4242, "the same value finds its key again");
	CHECK(jfr_pool_intern(p, "thread-c", 8, JFR_POOL_SPARE_KEYS) == JFR_POOL_SPARE_KEYS + 1,
	      "a wanted key equal to a spare key in use is not reused");
	for (int i = 1; i <= 3000; i++) {
		int n = snprintf(v, sizeof(v), "t%d", i);

		if (jfr_pool_intern(p, v, n, 100000 + i) != 100000 + (uint64_t)i)
			bad++;
	}
	CHECK(!bad, "3000 wanted keys through growth of the key set");
	jfr_pool_reset(p);
	a = jfr_pool_intern(p, "thread-b", 8, 4242);
	b = jfr_pool_intern(p, "thread-a", 8, 4242);
	CHECK(a != 4242 && b == 4242,
	      "after a reset a wanted key still belongs to its first value (%llu, %llu)",
	      (unsigned long long)a, (unsigned long long)b);
	CHECK(jfr_pool_count(p) == 2, "the new chunk holds both entries");
	jfr_pool_free(p);

	/* A Spark task thread is renamed for every task: one thread id,
	 * a new value each time, over many chunks of one file. */
	{
		size_t first = 0;
		uint64_t prev = 0;
		int repeated = 0;

		p = jfr_pool_new(22);
		bad = 0;
		for (int i = 0; i < 200000; i++) {
			int n = snprintf(v, sizeof(v), "Executor task launch worker for task %d", i);
			uint64_t k = jfr_pool_intern(p, v, n, 4242);

			if (i == 0 ? k != 4242 : k < JFR_POOL_SPARE_KEYS)
				bad++;
			repeated += i && k == prev;
			prev = k;
			if (i % 100 == 99)
				jfr_pool_reset(p);
			if (i == 999)
				first = jfr_pool_memory(p);
		}
		CHECK(!bad && !repeated, "each new name of thread 4242 gets a new spare key");
		CHECK(jfr_pool_memory(p) == first,
		      "200,000 renames over 2,000 chunks keep the pool at its size after 1,000 "
		      "(%zu bytes, then %zu)", first, jfr_pool_memory(p));
		jfr_pool_free(p);
	}

	/* Distinct thread ids: wanted keys are kept up to JFR_POOL_WANTED_MAX. */
	p = jfr_pool_new(22);
	bad = 0;
	for (int i = 1; i <= JFR_POOL_WANTED_MAX + 5000; i++) {
		int n = snprintf(v, sizeof(v), "t%d", i);
		uint64_t k = jfr_pool_intern(p, v, n, (uint64_t)i);

		if (i <= JFR_POOL_WANTED_MAX ? k != (uint64_t)i : k < JFR_POOL_SPARE_KEYS)
			bad++;
		if (i % 1000 == 0)
			jfr_pool_reset(p);
	}
	CHECK(!bad, "%d thread ids keep their keys, the next 5000 get spare keys",
	      JFR_POOL_WANTED_MAX);
	a = jfr_pool_intern(p, "t7", 2, 7);
	CHECK(a == 7, "a thread id kept before the bound still finds its key (%llu)",
	      (unsigned long long)a);
	CHECK(jfr_pool_memory(p) <= (2u << 20) + (128u << 10),
	      "the kept keys stay within 2 MiB, beside the chunk's entries (%zu bytes)", jfr_pool_memory(p));
	jfr_pool_free(p);

	CHECK(jfr_hash("abc", 3, 1) != jfr_hash("abd", 3, 1), "hash differs for different bytes");
	CHECK(jfr_hash("abc", 3, 1) != jfr_hash("abc", 3, 2), "hash depends on the seed");

	jfr_map_init(&m);
	CHECK(jfr_map_get(&m, 5) == 0, "empty map has nothing");
	for (uint64_t k = 1; k <= 20000; k++)
		if (jfr_map_put(&m, k * 16 + 3, k))
			bad++;
	for (uint64_t k = 1; k <= 20000; k++)
		if (jfr_map_get(&m, k * 16 + 3) != k)
			bad++;
	CHECK(!bad && m.count == 20000, "20000 map entries survive growth");
	jfr_map_put(&m, 19, 77);
	CHECK(jfr_map_get(&m, 19) == 77 && m.count == 20000, "put overwrites an existing key");
	jfr_map_clear(&m);
	CHECK(jfr_map_get(&m, 19) == 0 && m.count == 0, "clear empties the map");
	jfr_map_free(&m);
	TAP_DONE();
}
