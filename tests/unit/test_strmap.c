/* test_strmap.c - the string map: lookups, growth, insertion order,
 * removal. */
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

/* Keys "key-N" with value N + 1, N rising. */
static int check_rising(const char *key, void *value, void *ctx)
{
	int *last = ctx, n;

	if (sscanf(key, "key-%d", &n) != 1 || n <= *last || (intptr_t)value != n + 1)
		return -1;
	*last = n;
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

	/* Removing keeps the others findable (their index slots were filed
	 * after the removed one's) and in insertion order. */
	m = strmap_new();
	for (int i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		*strmap_slot(m, key, strlen(key), &inserted) = (void *)(intptr_t)(i + 1);
	}
	bad = 0;
	for (int i = 0; i < 300; i += 3) {
		snprintf(key, sizeof(key), "key-%d", i);
		bad += strmap_remove(m, key, strlen(key)) != (void *)(intptr_t)(i + 1);
	}
	CHECK(!bad && strmap_count(m) == 200, "every third key removed, with its value");
	CHECK(strmap_remove(m, "key-0", 5) == NULL, "a key removed twice: nothing");
	bad = 0;
	for (int i = 0; i < 300; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		bad += strmap_get(m, key, strlen(key)) !=
		       (i % 3 ? (void *)(intptr_t)(i + 1) : NULL);
	}
	CHECK(!bad, "the others are still found, the removed ones not");
	next = -1;
	CHECK(strmap_foreach(m, check_rising, &next) == 0 && next == 299,
	      "and they are visited in insertion order");
	void **back = strmap_slot(m, "key-3", 5, &inserted);
	CHECK(back && inserted && !*back && strmap_count(m) == 201,
	      "a removed key can come back, as a new entry");
	strmap_free(m, NULL);
	TAP_DONE();
}
