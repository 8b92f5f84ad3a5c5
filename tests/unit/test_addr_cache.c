/* test_addr_cache.c - the address -> answer cache behind the resolver:
 * answers come back as stored, it grows up to its limit and then starts
 * over (bounded memory), and clearing forgets everything. */
#include <stdint.h>

#include "symbols/addr_cache.h"
#include "tap.h"

int main(void)
{
	struct addr_cache c;
	const struct addr_cache_entry *e;
	int all_found = 1, none_found = 1;

	addr_cache_init(&c, 1024);
	CHECK(addr_cache_find(&c, 0x1000) == NULL, "an empty cache knows nothing");
	addr_cache_put(&c, 0x1000, "f", FRAME_CPP, 2);
	addr_cache_put(&c, 0, "zero", FRAME_KERNEL, 0);
	e = addr_cache_find(&c, 0x1000);
	CHECK(e && e->name && e->name[0] == 'f' && e->type == FRAME_CPP && e->tag == 2,
	      "an answer comes back as stored");
	e = addr_cache_find(&c, 0);
	CHECK(e && e->type == FRAME_KERNEL, "address 0 is an address like any other");
	addr_cache_put(&c, UINT64_MAX, "max", FRAME_NATIVE, 0);
	CHECK(addr_cache_find(&c, UINT64_MAX) == NULL, "the one address that cannot be a key is not cached");
	addr_cache_put(&c, 0x1000, "g", FRAME_NATIVE, 1);
	e = addr_cache_find(&c, 0x1000);
	CHECK(e && e->name[0] == 'g' && e->tag == 1, "a second answer replaces the first");

	for (uint64_t a = 0; a < 500; a++)
		addr_cache_put(&c, 0x400000 + a * 16, "x", FRAME_NATIVE, 0);
	for (uint64_t a = 0; a < 500; a++)
		all_found &= addr_cache_find(&c, 0x400000 + a * 16) != NULL;
	CHECK(all_found && c.used == 502, "500 more answers all kept while under the limit");
	CHECK(addr_cache_memory(&c) <= 1024 * sizeof(struct addr_cache_entry),
	      "at most the limit's slots (%zu bytes)", addr_cache_memory(&c));
	for (uint64_t a = 0; a < 5000; a++)
		addr_cache_put(&c, 0x800000 + a * 16, "y", FRAME_NATIVE, 0);
	CHECK(c.used <= 512 && addr_cache_memory(&c) <= 1024 * sizeof(struct addr_cache_entry),
	      "past the limit it starts over instead of growing (%u kept)", c.used);
	CHECK(addr_cache_find(&c, 0x800000 + 4999 * 16) != NULL, "the newest answer is kept");
	addr_cache_clear(&c);
	for (uint64_t a = 0; a < 5000; a++)
		none_found &= addr_cache_find(&c, 0x800000 + a * 16) == NULL;
	CHECK(none_found && c.used == 0, "clearing forgets every answer");
	addr_cache_release(&c);
	TAP_DONE();
}
