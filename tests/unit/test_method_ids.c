/* test_method_ids.c - the helper's numbers for method names: one number
 * per method, in order, and a table that starts afresh instead of growing
 * past METHOD_IDS_MAX. */
#include <stdint.h>
#include <stdlib.h>

#include "method_ids.h"
#include "tap.h"

/* Fake jmethodIDs: HotSpot's are pointers 8 bytes apart. */
static const void *method(uintptr_t i)
{
	return (const void *)(0x7f0000001000u + 8 * i);
}

int main(void)
{
	struct method_ids t = { 0 };
	int found = 1, fresh = 1;

	CHECK(method_ids_find(&t, method(1)) == 0, "an empty table numbers nothing");
	CHECK(method_ids_add(&t, NULL) == 0, "no number for a NULL method");
	for (uintptr_t i = 0; i < 100000; i++)
		if (method_ids_add(&t, method(i)) != i + 1)
			fresh = 0;
	CHECK(fresh, "numbers count from 1 in the order methods come");
	for (uintptr_t i = 0; i < 100000; i++)
		if (method_ids_find(&t, method(i)) != i + 1)
			found = 0;
	CHECK(found, "each of 100000 methods keeps its number through the table's growth");
	CHECK(method_ids_find(&t, method(100000)) == 0, "a method never added has no number");
	CHECK(t.count * 2 <= t.cap, "at most half full (%zu of %zu)", t.count, t.cap);
	method_ids_set_span(&t, 777, (struct log_span){ 4096, 40 });
	method_ids_set_span(&t, 100001, (struct log_span){ 1, 1 });   /* not given: ignored */
	CHECK(method_ids_numbers(&t) == 100000 && t.spans[776].offset == 4096 &&
	      t.spans[776].len == 40 && t.spans[777].len == 0,
	      "each number's N record is found by number (rotation restates them)");

	for (uintptr_t i = 100000; i < METHOD_IDS_MAX; i++)
		method_ids_add(&t, method(i));
	size_t cap = t.cap;
	uint32_t n = method_ids_add(&t, method(METHOD_IDS_MAX));
	CHECK(n == METHOD_IDS_MAX + 1, "past the limit numbers go on (got %u)", n);
	CHECK(method_ids_find(&t, method(5)) == 0 && method_ids_find(&t, method(METHOD_IDS_MAX)) == n,
	      "past the limit the table starts afresh: old methods get new numbers");
	CHECK(t.count == 1 && t.cap == cap, "and does not grow (%zu slots)", t.cap);
	CHECK(method_ids_add(&t, method(5)) == n + 1, "an old method numbered again gets a newer number");
	CHECK(method_ids_first(&t) == n && method_ids_numbers(&t) == 2,
	      "the numbers held start at the first one since the table started afresh");
	free(t.spans);
	free(t.method);
	free(t.number);
	TAP_DONE();
}
