/* stage_epoch.c - see stage_epoch.h. */
#include <errno.h>
#include <stdlib.h>

#include "spark/stage_epoch.h"

/* From epoch first_k on (until the next run), the epoch stage is key. */
struct epoch_run {
	uint64_t first_k;
	struct stage_key key;
};

struct stage_count {
	struct stage_key key;
	uint32_t running;
};

struct stage_epoch {
	uint64_t start, interval;
	uint64_t next_k;              /* first boundary not decided yet */
	struct stage_key last;        /* decision of epoch next_k - 1 */
	struct epoch_run *runs;       /* decisions, run-length coded */
	size_t nruns, runs_cap;
	struct stage_count *counts;   /* running tasks per stage (few stages) */
	size_t ncounts, counts_cap;
	uint32_t unknown;             /* running tasks of unknown stage */
	uint32_t total;               /* all running tasks */
	uint64_t late;
};

struct stage_epoch *stage_epoch_new(uint64_t start_ns, uint64_t interval_ns)
{
	struct stage_epoch *se;

	if (interval_ns == 0) {
		errno = EINVAL;
		return NULL;
	}
	se = calloc(1, sizeof(*se));
	if (!se)
		return NULL;
	se->start = start_ns;
	se->interval = interval_ns;
	se->last = stage_key_none();
	return se;
}

void stage_epoch_free(struct stage_epoch *se)
{
	if (!se)
		return;
	free(se->runs);
	free(se->counts);
	free(se);
}

/* The stage with more than half of the running tasks, or none. */
static struct stage_key majority(const struct stage_epoch *se)
{
	for (size_t i = 0; i < se->ncounts; i++)
		if ((uint64_t)se->counts[i].running * 2 > se->total)
			return se->counts[i].key;
	return stage_key_none();
}

/* Index of the last boundary before ts (inclusive: at or before); -1 when
 * there is none. */
static int64_t last_boundary(const struct stage_epoch *se, uint64_t ts, bool inclusive)
{
	if (ts < se->start || (!inclusive && ts == se->start))
		return -1;
	return (int64_t)((ts - se->start - (inclusive ? 0 : 1)) / se->interval);
}

/* Decides every open boundary up to index k from the current counts: they
 * all see the same running tasks, so one decision covers them all. */
static int decide_through(struct stage_epoch *se, int64_t k)
{
	struct stage_key d;

	if (k < 0 || (uint64_t)k < se->next_k)
		return 0;
	d = majority(se);
	if (stage_key_is_none(d))
		d = se->last;
	if (!stage_key_eq(d, se->last)) {
		if (se->nruns == se->runs_cap) {
			size_t cap = se->runs_cap ? se->runs_cap * 2 : 16;
			struct epoch_run *r = realloc(se->runs, cap * sizeof(*r));

			if (!r)
				return -ENOMEM;
			se->runs = r;
			se->runs_cap = cap;
		}
		se->runs[se->nruns++] = (struct epoch_run){ se->next_k, d };
		se->last = d;
	}
	se->next_k = (uint64_t)k + 1;
	return 0;
}

static int before_event(struct stage_epoch *se, uint64_t ts)
{
	if (se->next_k > 0 &&
	    ts - se->start <= (se->next_k - 1) * se->interval && ts >= se->start)
		se->late++;
	else if (se->next_k > 0 && ts < se->start)
		se->late++;
	return decide_through(se, last_boundary(se, ts, false));
}

static struct stage_count *find_count(struct stage_epoch *se, struct stage_key key)
{
	for (size_t i = 0; i < se->ncounts; i++)
		if (stage_key_eq(se->counts[i].key, key))
			return &se->counts[i];
	return NULL;
}

int stage_epoch_task_start(struct stage_epoch *se, uint64_t ts, struct stage_key key)
{
	struct stage_count *c;
	int ret = before_event(se, ts);

	if (ret < 0)
		return ret;
	if (stage_key_is_none(key)) {
		se->unknown++;
		se->total++;
		return 0;
	}
	c = find_count(se, key);
	if (!c) {
		if (se->ncounts == se->counts_cap) {
			size_t cap = se->counts_cap ? se->counts_cap * 2 : 8;
			struct stage_count *n = realloc(se->counts, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			se->counts = n;
			se->counts_cap = cap;
		}
		c = &se->counts[se->ncounts++];
		*c = (struct stage_count){ key, 0 };
	}
	c->running++;
	se->total++;
	return 0;
}

int stage_epoch_task_end(struct stage_epoch *se, uint64_t ts, struct stage_key key)
{
	struct stage_count *c;
	int ret = before_event(se, ts);

	if (ret < 0)
		return ret;
	if (stage_key_is_none(key)) {
		if (!se->unknown)
			return -ENOENT;
		se->unknown--;
		se->total--;
		return 0;
	}
	c = find_count(se, key);
	if (!c || !c->running)
		return -ENOENT;
	c->running--;
	se->total--;
	if (!c->running) /* keep the list to the stages running now */
		*c = se->counts[--se->ncounts];
	return 0;
}

struct stage_key stage_epoch_stage_at(struct stage_epoch *se, uint64_t ts)
{
	int64_t k = last_boundary(se, ts, true);
	size_t lo = 0, hi;

	if (k < 0)
		return stage_key_none();
	/* On ENOMEM the boundary stays open and the last decision answers. */
	if (decide_through(se, k) < 0 && se->nruns)
		return se->runs[se->nruns - 1].key;
	/* last run with first_k <= k */
	hi = se->nruns;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (se->runs[mid].first_k <= (uint64_t)k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? se->runs[lo - 1].key : stage_key_none();
}

uint32_t stage_epoch_running(const struct stage_epoch *se)
{
	return se->total;
}

uint32_t stage_epoch_running_in(const struct stage_epoch *se, struct stage_key key)
{
	if (stage_key_is_none(key))
		return se->unknown;
	for (size_t i = 0; i < se->ncounts; i++)
		if (stage_key_eq(se->counts[i].key, key))
			return se->counts[i].running;
	return 0;
}

uint64_t stage_epoch_late_events(const struct stage_epoch *se)
{
	return se->late;
}
