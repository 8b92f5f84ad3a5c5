/* stage_archive.c - see stage_archive.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "base/log.h"
#include "base/spill_file.h"
#include "record/stage_archive.h"

/* One executor's batches in the file. */
struct owner_batches {
	const void *owner;
	struct spill_ref *refs;
	size_t n, cap;
	size_t stages;
};

struct stage_archive {
	struct spill_file *spill;
	struct owner_batches *owners;   /* a few executors: found by a scan */
	size_t nowners, capowners;
	bool failed;                    /* a write failed: stages stay in memory */
};

struct stage_archive *stage_archive_new(const char *dir)
{
	struct stage_archive *a = calloc(1, sizeof(*a));

	if (!a || !(a->spill = spill_file_new(dir, "stage counters"))) {
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	return a;
}

void stage_archive_free(struct stage_archive *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nowners; i++)
		free(a->owners[i].refs);
	free(a->owners);
	spill_file_free(a->spill);
	free(a);
}

static struct owner_batches *batches_of(struct stage_archive *a, const void *owner, bool create)
{
	for (size_t i = 0; i < a->nowners; i++)
		if (a->owners[i].owner == owner)
			return &a->owners[i];
	if (!create || grow_array((void **)&a->owners, &a->capowners, a->nowners + 1,
				  sizeof(*a->owners)))
		return NULL;
	a->owners[a->nowners] = (struct owner_batches){ .owner = owner };
	return &a->owners[a->nowners++];
}

int stage_archive_put(struct stage_archive *a, const void *owner, const struct stage_stats *stats,
		      size_t n)
{
	struct owner_batches *b;
	struct spill_ref ref;
	int err;

	if (a->failed)
		return -ENOSPC;
	if (!n)
		return 0;
	b = batches_of(a, owner, true);
	if (!b || grow_array((void **)&b->refs, &b->cap, b->n + 1, sizeof(*b->refs))) {
		sp_err("stage archive: out of memory: stages stay in memory");
		a->failed = true;
		return -ENOMEM;
	}
	err = spill_file_put(a->spill, stats, n * sizeof(*stats), &ref);
	if (err) {
		/* spill_file said why; what is in memory stays there. */
		a->failed = true;
		return err;
	}
	b->refs[b->n++] = ref;
	b->stages += n;
	return 0;
}

int stage_archive_get(struct stage_archive *a, const void *owner, const struct stage_stats *live,
		      size_t n_live, struct stage_stats **out, size_t *n, size_t *unreadable)
{
	struct owner_batches *b = a ? batches_of(a, owner, false) : NULL;
	size_t total = n_live + (b ? b->stages : 0), have = n_live;
	struct stage_stats *all;

	*out = NULL;
	*n = *unreadable = 0;
	if (!total)
		return 0;
	if (!(all = malloc(total * sizeof(*all)))) {
		*unreadable = b ? b->stages : 0;
		return -ENOMEM;
	}
	if (n_live)
		memcpy(all, live, n_live * sizeof(*all));
	for (size_t i = 0; b && i < b->n; i++) {
		size_t count = b->refs[i].bytes / sizeof(*all);
		void *data;

		if (spill_file_get(a->spill, &b->refs[i], &data) || !data) {
			*unreadable += count;
			continue;
		}
		memcpy(all + have, data, count * sizeof(*all));
		have += count;
		free(data);
	}
	*n = stage_stats_combine(all, have);
	*out = all;
	return 0;
}

size_t stage_archive_memory(const struct stage_archive *a, size_t *stages)
{
	size_t n = sizeof(*a) + a->capowners * sizeof(*a->owners);

	*stages = 0;
	for (size_t i = 0; i < a->nowners; i++) {
		n += a->owners[i].cap * sizeof(*a->owners[i].refs);
		*stages += a->owners[i].stages;
	}
	return n;
}
