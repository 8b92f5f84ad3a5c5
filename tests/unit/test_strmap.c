/* test_strmap.c - the string map: lookups, growth, insertion order. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/strmap.h"
#include "tap.h"

static int check_order(const char *key, void *value, void *ctx)
{
	int *next = ctx;
	char want[32];

	snprintf(want, sizeof(want), "key-%d", *next);
	if (strcmp(key, want) || (intptr_t)value != *next + 1)
		return -1;
	(*next)++;
	return 0;
}

int main(void)
{
	struct strmap *m = strmap_new();
	int inserted, bad = 0, next = 0;
	char key[32];

	for (int i = 0; i < 10000; i++) {
		void **slot;

		snprintf(key, sizeof(key), "key-%d", i);
		slot = strmap_slot(m, key, strlen(key), &inserted);
		if (!slot || !inserted)
			bad++;
		else
			*slot = (void *)(intptr_t)(i + 1);
	}
	CHECK(!bad && strmap_count(m) == 10000, "10000 distinct keys inserted");
	CHECK(strmap_get(m, "key-4242", 8) == (void *)(intptr_t)4243, "lookup after growth");
	CHECK(strmap_get(m, "key-10000", 9) == NULL, "missing key");
	CHECK(strmap_slot(m, "key-7", 5, &inserted) && !inserted, "existing key not reinserted");
	CHECK(strmap_get(m, "key-7\0x", 7) == NULL, "keys are compared by length too");
	CHECK(strmap_foreach(m, check_order, &next) == 0 && next == 10000,
	      "iteration in insertion order");
	strmap_free(m, NULL);
	TAP_DONE();
}
