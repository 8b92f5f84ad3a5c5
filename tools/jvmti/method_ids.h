/* method_ids.h - the number the log gives each method's name.
 *
 * An inline record used to spell out every inlined method's name, so an
 * executor's log grew by about 165 bytes per PC range and 30 MB in its
 * first minutes; the helper also asked JVMTI for the same names on every
 * compile.  Now a name is written once, as an N record with its number,
 * and J records list numbers.  Keyed by jmethodID: HotSpot never gives an
 * ID to another method (up to JDK 25 the IDs of unloaded classes are kept,
 * from JDK 26 they are counted up), so a number never names two methods.
 * Not thread-safe: callers hold the publisher lock.
 */
#ifndef SPARKPROF_AGENT_METHOD_IDS_H
#define SPARKPROF_AGENT_METHOD_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "publish.h"   /* struct log_span */

struct method_ids {
	const void **method;  /* jmethodID per slot, NULL: empty */
	uint32_t *number;
	size_t count, cap;    /* cap a power of two, at most half full */
	uint32_t next;        /* the last number given (numbers start at 1) */
	struct log_span *spans;  /* N record of number method_ids_first() + i at [i] */
	size_t capspans;
};

/* Past this many methods the table starts afresh (names are then written
 * again under new numbers): it holds at most 6 MiB. */
#define METHOD_IDS_MAX (1u << 18)

/* The number of method, 0 if it has none yet. */
uint32_t method_ids_find(const struct method_ids *t, const void *method);

/* Gives method the next number and returns it; 0 when out of memory or
 * out of numbers. */
uint32_t method_ids_add(struct method_ids *t, const void *method);

/* Where the N record of number (the newest) was written. */
void method_ids_set_span(struct method_ids *t, uint32_t number, struct log_span span);

/* The numbers the table holds, method_ids_first()..next, one per method
 * since it last started afresh, and their N records (a zero span: not
 * written). */
static inline size_t method_ids_numbers(const struct method_ids *t)
{
	return t->count;
}

static inline uint32_t method_ids_first(const struct method_ids *t)
{
	return t->next - (uint32_t)t->count + 1;
}

#endif
