/* tap.h - minimal TAP-style assertions for the C unit tests.
 *
 * Each check prints "ok N - what" or "not ok N - what (file:line)"; the
 * program exits non-zero when any check failed.  tests/test_unit.py runs
 * every binary and reports each failed check by name.
 */
#ifndef SPARKPROF_TAP_H
#define SPARKPROF_TAP_H

#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

/* cond is evaluated once: checks may have side effects. */
#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		int passed_ = !!(cond);                                        \
		tap_count++;                                                   \
		if (passed_) {                                                 \
			printf("ok %d - ", tap_count);                         \
		} else {                                                       \
			tap_failed++;                                          \
			printf("not ok %d - ", tap_count);                     \
		}                                                              \
		printf(__VA_ARGS__);                                           \
		if (!passed_)                                                  \
			printf(" (%s:%d: %s)", __FILE__, __LINE__, #cond);     \
		printf("\n");                                                  \
	} while (0)

#define CHECK_STR(got, want, ...)                                              \
	do {                                                                   \
		const char *g_ = (got), *w_ = (want);                          \
		int same_ = g_ && w_ ? strcmp(g_, w_) == 0 : g_ == w_;         \
		CHECK(same_, __VA_ARGS__);                                     \
		if (!same_)                                                    \
			printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)",   \
			       w_ ? w_ : "(null)");                             \
	} while (0)

#define TAP_DONE()                                                             \
	do {                                                                   \
		printf("1..%d\n", tap_count);                                  \
		return tap_failed ? 1 : 0;                                     \
	} while (0)

#endif
