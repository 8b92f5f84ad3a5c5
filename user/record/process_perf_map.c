/* process_perf_map.c - see process_perf_map.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/string_pool.h"
#include "record/process_perf_map.h"
#include "symbols/perf_map.h"

#define REREAD_NS 1000000000ull
#define MAX_NAME_BYTES (8u << 20)

struct perf_map_names {
	struct string_pool *pool;
};

struct perf_map_names *perf_map_names_new(void)
{
	struct perf_map_names *pn = calloc(1, sizeof(*pn));

	if (pn && !(pn->pool = string_pool_new())) {
		free(pn);
		pn = NULL;
	}
	if (!pn)
		errno = ENOMEM;
	return pn;
}

void perf_map_names_free(struct perf_map_names *pn)
{
	if (!pn)
		return;
	string_pool_free(pn->pool);
	free(pn);
}

size_t perf_map_names_memory(const struct perf_map_names *pn)
{
	return pn ? string_pool_memory(pn->pool) : 0;
}

static int lookup(struct perf_map_names *pn, const struct perf_map *map, uint64_t addr,
		  struct frame *out)
{
	if (!map || !perf_map_lookup(map, addr, out) ||
	    string_pool_memory(pn->pool) > MAX_NAME_BYTES)
		return 0;
	out->name = string_pool_intern(pn->pool, out->name, strlen(out->name));
	return out->name != NULL;
}

int process_perf_map_name(void *ctx, uint64_t addr, uint64_t ts, struct frame *out, int max)
{
	struct perf_map_ctx *c = ctx;
	struct process *p = c->process;
	uint64_t now;

	(void)ts;
	if (max < 1 || p->released)
		return 0;
	if (lookup(c->names, p->perf_map, addr, out))
		return 1;
	now = monotonic_ns();
	if (p->perf_map_read_ns && now - p->perf_map_read_ns < REREAD_NS)
		return 0;
	p->perf_map_read_ns = now;
	perf_map_free(p->perf_map);
	p->perf_map = perf_map_open(p->pid);
	return lookup(c->names, p->perf_map, addr, out);
}

void process_perf_map_release(struct process *p)
{
	perf_map_free(p->perf_map);
	p->perf_map = NULL;
}
