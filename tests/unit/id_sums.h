/* id_sums.h - a folded profile's (id, count) pairs summed, for tests that
 * compare two profiles' contents without listing them. */
#ifndef SPARKPROF_TEST_ID_SUMS_H
#define SPARKPROF_TEST_ID_SUMS_H

#include <stddef.h>
#include <stdint.h>

#include "output/folded.h"

struct id_sums {
	uint64_t id_total, count, weighted; /* sums of id, count, id * count */
	size_t ids;
};

static int id_sums_add(uint32_t id, uint64_t count, void *ctx)
{
	struct id_sums *s = ctx;

	s->id_total += id;
	s->count += count;
	s->weighted += (uint64_t)id * count;
	s->ids++;
	return 0;
}

static inline struct id_sums id_sums_of(const struct folded_profile *p)
{
	struct id_sums s = { 0 };

	folded_profile_foreach_id(p, id_sums_add, &s);
	return s;
}

#endif
