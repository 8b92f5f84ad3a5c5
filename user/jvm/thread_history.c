/* thread_history.c - see thread_history.h.  Per-thread event arrays in an
 * open-addressing table on tid, at most half full. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "jvm/thread_history.h"

struct thread_event {
	uint64_t ts;
	enum jvm_helper_thread_event_kind kind;
	const char *name;
};

struct thread_hist {
	pid_t tid;           /* 0: free slot */
	struct thread_event *v;   /* sorted by ts */
	size_t n, cap;
};

struct thread_history {
	struct thread_hist *threads; /* capacity a power of two */
	size_t nthreads, capthreads;
};

struct thread_history *thread_history_new(void)
{
	return calloc(1, sizeof(struct thread_history));
}

void thread_history_free(struct thread_history *th)
{
	if (!th)
		return;
	for (size_t i = 0; i < th->capthreads; i++)
		free(th->threads[i].v);
	free(th->threads);
	free(th);
}

static size_t slot_of(pid_t tid, size_t cap)
{
	return (size_t)tid * 2654435761u & (cap - 1);
}

/* The slot holding tid, or the free slot where it would go; NULL when the
 * table is empty. */
static struct thread_hist *find_slot(const struct thread_history *th, pid_t tid)
{
	if (!th->capthreads)
		return NULL;
	size_t j = slot_of(tid, th->capthreads);
	while (th->threads[j].tid && th->threads[j].tid != tid)
		j = (j + 1) & (th->capthreads - 1);
	return &th->threads[j];
}

static const struct thread_hist *find(const struct thread_history *th, pid_t tid)
{
	const struct thread_hist *h = find_slot(th, tid);
	return h && h->tid ? h : NULL;
}

/* Moves the threads into a table of cap slots; threads without events
 * (ended and forgotten, or never given one) are left out.  0 or -ENOMEM
 * (the table unchanged). */
static int rehash(struct thread_history *th, size_t cap)
{
	struct thread_hist *n = calloc(cap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < th->capthreads; i++) {
		struct thread_hist *h = &th->threads[i];

		if (!h->tid)
			continue;
		if (!h->n) {
			free(h->v);
			th->nthreads--;
			continue;
		}
		size_t j = slot_of(h->tid, cap);
		while (n[j].tid)
			j = (j + 1) & (cap - 1);
		n[j] = *h;
	}
	free(th->threads);
	th->threads = n;
	th->capthreads = cap;
	return 0;
}

static struct thread_hist *find_or_add(struct thread_history *th, pid_t tid)
{
	if (th->nthreads * 2 >= th->capthreads &&
	    rehash(th, th->capthreads ? th->capthreads * 2 : 256))
		return NULL;
	struct thread_hist *h = find_slot(th, tid);
	if (!h->tid) {
		h->tid = tid;
		th->nthreads++;
	}
	return h;
}

int thread_history_add(struct thread_history *th, const struct jvm_helper_thread_event *ev)
{
	if (ev->tid <= 0)
		return -EINVAL;
	struct thread_hist *h = find_or_add(th, ev->tid);
	if (!h || grow_array((void **)&h->v, &h->cap, h->n + 1, sizeof(*h->v)))
		return -ENOMEM;
	/* Keep each history sorted even if the file is not. */
	size_t i = h->n;
	while (i > 0 && h->v[i - 1].ts > ev->ts)
		i--;
	memmove(&h->v[i + 1], &h->v[i], (h->n - i) * sizeof(h->v[0]));
	h->v[i] = (struct thread_event){ ev->ts, ev->kind, ev->name };
	h->n++;
	return 0;
}

/* The latest event at or before ts that want() accepts. */
static const struct thread_event *event_at(const struct thread_history *th, pid_t tid, uint64_t ts,
					   int (*want)(enum jvm_helper_thread_event_kind))
{
	const struct thread_hist *h = find(th, tid);
	if (!h)
		return NULL;
	size_t lo = 0, hi = h->n;   /* first event after ts */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->v[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0)
		if (want(h->v[lo].kind))
			return &h->v[lo];
	return NULL;
}

static int is_name_event(enum jvm_helper_thread_event_kind k)
{
	return k == JVM_THREAD_NAMED || k == JVM_THREAD_ENDED;
}

static int is_state_event(enum jvm_helper_thread_event_kind k)
{
	return k != JVM_THREAD_ENDED;
}

const char *thread_history_name(const struct thread_history *th, pid_t tid, uint64_t ts)
{
	const struct thread_event *e = event_at(th, tid, ts, is_name_event);
	return e && e->kind == JVM_THREAD_NAMED ? e->name : NULL;
}

int thread_history_idle(const struct thread_history *th, pid_t tid, uint64_t ts)
{
	if (!thread_history_name(th, tid, ts))
		return -1;
	const struct thread_event *e = event_at(th, tid, ts, is_state_event);
	if (!e)
		return -1;
	return e->kind == JVM_THREAD_IDLE;
}

/* Drops the events of h that no lookup at ts or later needs: those before
 * ts except the latest name event and the latest mark.  A thread that ended
 * before ts and has nothing after needs none. */
static void forget_events(struct thread_hist *h, uint64_t ts, size_t *dropped)
{
	size_t first_at_ts = 0, kept = 0, last_name = SIZE_MAX, last_state = SIZE_MAX;

	while (first_at_ts < h->n && h->v[first_at_ts].ts < ts)
		first_at_ts++;
	if (first_at_ts == h->n && h->n && h->v[h->n - 1].kind == JVM_THREAD_ENDED) {
		*dropped += h->n;
		h->n = 0;
		return;
	}
	for (size_t i = first_at_ts; i-- > 0 && (last_name == SIZE_MAX || last_state == SIZE_MAX);) {
		if (last_name == SIZE_MAX && is_name_event(h->v[i].kind))
			last_name = i;
		if (last_state == SIZE_MAX && is_state_event(h->v[i].kind))
			last_state = i;
	}
	/* After an end, only a new name makes marks count again. */
	if (last_name != SIZE_MAX && h->v[last_name].kind == JVM_THREAD_ENDED &&
	    (last_state == SIZE_MAX || last_state < last_name))
		last_state = SIZE_MAX;
	for (size_t i = 0; i < h->n; i++)
		if (i >= first_at_ts || i == last_name || i == last_state)
			h->v[kept++] = h->v[i];
	*dropped += h->n - kept;
	h->n = kept;
	shrink_array((void **)&h->v, &h->cap, h->n, sizeof(*h->v));
}

size_t thread_history_forget(struct thread_history *th, uint64_t ts)
{
	size_t dropped = 0, empty = 0;

	for (size_t i = 0; i < th->capthreads; i++) {
		if (!th->threads[i].tid)
			continue;
		forget_events(&th->threads[i], ts, &dropped);
		empty += th->threads[i].n == 0;
	}
	if (!empty)
		return dropped;
	/* Threads without events leave the table.  Open addressing has no
	 * tombstones, so the others move to a new table; without memory for
	 * it the empty ones stay (a lookup finds no event: unknown). */
	size_t cap = 256;
	while ((th->nthreads - empty) * 2 >= cap)
		cap *= 2;
	rehash(th, cap);
	return dropped;
}

int thread_history_move_names(struct thread_history *th, struct string_pool *pool)
{
	/* Twice: the first pass copies every name (and may fail with nothing
	 * changed), the second finds each copy again, which cannot fail. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < th->capthreads; i++) {
			struct thread_hist *h = &th->threads[i];

			for (size_t k = 0; h->tid && k < h->n; k++) {
				const char *name = h->v[k].name;
				const char *copy;

				if (!name)
					continue;
				copy = string_pool_intern(pool, name, strlen(name));
				if (!copy)
					return -ENOMEM;
				if (pass)
					h->v[k].name = copy;
			}
		}
	}
	return 0;
}

size_t thread_history_memory(const struct thread_history *th)
{
	size_t n = sizeof(*th) + th->capthreads * sizeof(*th->threads);

	for (size_t i = 0; i < th->capthreads; i++)
		n += th->threads[i].cap * sizeof(*th->threads[i].v);
	return n;
}
