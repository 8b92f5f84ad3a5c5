/* test_string_pool.c - equal bytes give one copy, at one address for the
 * pool's life, through table growth and across chunks; bytes with NULs
 * compare by length; a pool of method names costs about its text. */
#include <stdio.h>
#include <string.h>

#include "base/string_pool.h"
#include "tap.h"

#define NAMES 20000

int main(void)
{
	static const char *first[NAMES];
	struct string_pool *pool = string_pool_new();
	char name[96], big[100000];
	const char *a, *b, *empty, *with_nul, *prefix;
	size_t text = 0;
	int same = 1, terminated = 1;

	CHECK(pool != NULL, "a pool");
	if (!pool)
		TAP_DONE();
	a = string_pool_intern(pool, "java/lang/Thread.run", 20);
	b = string_pool_intern(pool, "java/lang/Thread.run", 20);
	CHECK(a && a == b && !strcmp(a, "java/lang/Thread.run"), "equal bytes, one copy");
	CHECK(string_pool_intern(pool, "java/lang/Thread.run", 15) != a,
	      "a prefix is another string");
	empty = string_pool_intern(pool, "", 0);
	CHECK(empty && !*empty && empty == string_pool_intern(pool, "x", 0), "the empty string");
	with_nul = string_pool_intern(pool, "a\0b", 3);
	prefix = string_pool_intern(pool, "a", 1);
	CHECK(with_nul && prefix && with_nul != prefix && !memcmp(with_nul, "a\0b", 4),
	      "bytes with a NUL compare by length, not as C strings");
	CHECK(with_nul == string_pool_intern(pool, "a\0b", 3), "and are found again");

	/* 20k distinct names: the table grows several times and the copies
	 * fill many chunks; every one is found again at its first address. */
	for (int i = 0; i < NAMES; i++) {
		int n = snprintf(name, sizeof(name), "org/apache/spark/sql/execution/Gen%05d.apply", i);

		first[i] = string_pool_intern(pool, name, (size_t)n);
		terminated &= first[i] && first[i][n] == '\0' && !memcmp(first[i], name, (size_t)n);
		text += (size_t)n;
	}
	for (int i = 0; i < NAMES; i++) {
		int n = snprintf(name, sizeof(name), "org/apache/spark/sql/execution/Gen%05d.apply", i);

		same &= string_pool_intern(pool, name, (size_t)n) == first[i];
	}
	CHECK(terminated, "each copy holds its bytes and a NUL");
	CHECK(same, "after growing, each name is found at its first address");
	CHECK(a == string_pool_intern(pool, "java/lang/Thread.run", 20), "and so is the first one");

	/* A string larger than a chunk gets a chunk of its own. */
	memset(big, 'x', sizeof(big));
	a = string_pool_intern(pool, big, sizeof(big));
	CHECK(a && a[sizeof(big)] == '\0' && a == string_pool_intern(pool, big, sizeof(big)),
	      "a 100 kB string");

	/* The text, a 4-byte length each, and 8-byte slots at most half full
	 * (64k of them for 20k names): about 1.9 MB.  16-byte slots would
	 * take 2.4 MB. */
	CHECK(string_pool_memory(pool) < text + NAMES * 5 + 65536 * 8 + 100 * 1024 + sizeof(big),
	      "20k names take %zu bytes for %zu of text", string_pool_memory(pool), text);
	string_pool_free(pool);
	TAP_DONE();
}
