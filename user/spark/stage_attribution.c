/* stage_attribution.c - see stage_attribution.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "base/strmap.h"
#include "spark/stage_attribution.h"
#include "spark/task_thread_name.h"

/* A thread's state after one change: the task its name names (if any) and
 * whether that task is running. */
struct thread_state {
	uint64_t ts;
	enum task_thread_kind kind;   /* of the last name */
	struct stage_key stage;       /* TASK: from the name; else none */
	int64_t spark_tid;            /* TASK, TASK_TID */
	bool running;                 /* a task runs on the thread */
	bool ended;                   /* the thread ended (its tid may come back) */
};

/* Samples lag thread events by about a second; keep this much history per
 * thread (plus the state just before it) to answer them. */
#define HISTORY_NS (120ull * 1000000000ull)

struct thread_history {
	struct thread_state *states;  /* ascending ts */
	size_t n, cap;
	/* The Spark TID last counted on this thread, plus one (0: none): a
	 * task runs on one thread, and is named again (a busy mark, a log's
	 * restated names) only while that thread still runs it. */
	uint64_t counted_tid_plus1;
};

struct stage_attribution {
	enum attribution_mode mode;
	struct stage_epoch *epoch;
	struct strmap *threads;       /* pid_t -> struct thread_history */
	uint64_t tid_only_tasks;
	uint64_t late_thread_events;
};

int attribution_mode_parse(const char *s, enum attribution_mode *out)
{
	if (s && strcmp(s, "thread") == 0)
		*out = ATTRIBUTION_THREAD;
	else if (s && strcmp(s, "epoch") == 0)
		*out = ATTRIBUTION_EPOCH;
	else
		return -EINVAL;
	return 0;
}

const char *attribution_mode_name(enum attribution_mode mode)
{
	return mode == ATTRIBUTION_EPOCH ? "epoch" : "thread";
}

const char *attribution_method_name(enum attribution_method m)
{
	switch (m) {
	case ATTRIBUTED_THREAD_NAME: return "thread-name";
	case ATTRIBUTED_EPOCH: return "epoch";
	case ATTRIBUTED_TID_ONLY: return "tid-only-epoch";
	case ATTRIBUTED_SOLE_TASK: return "python-sole-task";
	case ATTRIBUTED_WORKER_EPOCH: return "python-epoch";
	default: return "unknown";
	}
}

struct stage_attribution *stage_attribution_new(enum attribution_mode mode,
						uint64_t start_ns,
						uint64_t epoch_interval_ns)
{
	struct stage_attribution *sa;

	if (mode != ATTRIBUTION_THREAD && mode != ATTRIBUTION_EPOCH) {
		errno = EINVAL;
		return NULL;
	}
	sa = calloc(1, sizeof(*sa));
	if (!sa)
		return NULL;
	sa->mode = mode;
	sa->epoch = stage_epoch_new(start_ns, epoch_interval_ns);
	sa->threads = strmap_new();
	if (!sa->epoch || !sa->threads) {
		int err = errno ? errno : ENOMEM;

		stage_attribution_free(sa);
		errno = err;
		return NULL;
	}
	return sa;
}

static void free_history(void *v)
{
	struct thread_history *h = v;

	if (h)
		free(h->states);
	free(h);
}

void stage_attribution_free(struct stage_attribution *sa)
{
	if (!sa)
		return;
	stage_epoch_free(sa->epoch);
	if (sa->threads)
		strmap_free(sa->threads, free_history);
	free(sa);
}

static struct thread_history *history_of(struct stage_attribution *sa, pid_t tid, bool create)
{
	void **slot;
	int inserted;

	if (!create)
		return strmap_get(sa->threads, (const char *)&tid, sizeof(tid));
	slot = strmap_slot(sa->threads, (const char *)&tid, sizeof(tid), &inserted);
	if (!slot)
		return NULL;
	if (!*slot)
		*slot = calloc(1, sizeof(struct thread_history));
	return *slot;
}

static const struct thread_state *current_state(const struct thread_history *h)
{
	return h && h->n ? &h->states[h->n - 1] : NULL;
}

/* The state in force at ts, or NULL when the history starts after ts. */
static const struct thread_state *state_at(const struct thread_history *h, uint64_t ts)
{
	size_t lo = 0, hi;

	if (!h)
		return NULL;
	hi = h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->states[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &h->states[lo - 1] : NULL;
}

/* Drops the states before cut but the newest of them: it is in force at
 * the cut. */
static void drop_before(struct thread_history *h, uint64_t cut)
{
	size_t keep_from = 0;

	while (keep_from + 1 < h->n && h->states[keep_from + 1].ts <= cut)
		keep_from++;
	if (keep_from) {
		memmove(h->states, h->states + keep_from, (h->n - keep_from) * sizeof(h->states[0]));
		h->n -= keep_from;
	}
}

/* Appends a state (kept in ts order; an out-of-order one is clamped to the
 * last ts so the history stays sorted) and drops what is too old. */
static int push_state(struct thread_history *h, struct thread_state st)
{
	if (h->n && st.ts < h->states[h->n - 1].ts)
		st.ts = h->states[h->n - 1].ts;
	if (h->n >= 8 && st.ts > HISTORY_NS)
		drop_before(h, st.ts - HISTORY_NS);
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 4;
		struct thread_state *s = realloc(h->states, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		h->states = s;
		h->cap = cap;
	}
	h->states[h->n++] = st;
	return 0;
}

/* The stage key a task name carries; Spark's ids are ints, anything larger
 * is not a name Spark wrote, so its stage is unknown rather than cut. */
static struct stage_key key_of(const struct task_thread_name *t)
{
	if (t->kind != TASK_THREAD_TASK || t->stage > INT32_MAX || t->stage_attempt > INT32_MAX)
		return stage_key_none();
	return (struct stage_key){ (int32_t)t->stage, (int32_t)t->stage_attempt };
}

static void count_task_seen(struct stage_attribution *sa, struct thread_history *h,
			    const struct thread_state *st)
{
	if (h->counted_tid_plus1 == (uint64_t)st->spark_tid + 1)
		return;
	h->counted_tid_plus1 = (uint64_t)st->spark_tid + 1;
	if (stage_key_is_none(st->stage))
		sa->tid_only_tasks++;
}

/* Moves a thread from its current state to `next`, telling the epoch rule
 * about tasks that stop or start running. */
static int change_state(struct stage_attribution *sa, pid_t tid, struct thread_state next)
{
	struct thread_history *h = history_of(sa, tid, true);
	const struct thread_state *cur;
	bool same_task;
	uint64_t late_before = stage_epoch_late_events(sa->epoch);

	if (!h)
		return -ENOMEM;
	cur = current_state(h);
	same_task = cur && cur->running && next.running && cur->spark_tid == next.spark_tid &&
		    stage_key_eq(cur->stage, next.stage);
	if (same_task)
		return 0; /* the same name reported again */
	if (cur && cur->running)
		stage_epoch_task_end(sa->epoch, next.ts, cur->stage);
	if (next.running) {
		int ret = stage_epoch_task_start(sa->epoch, next.ts, next.stage);

		if (ret < 0)
			return ret;
	}
	if (stage_epoch_late_events(sa->epoch) != late_before)
		sa->late_thread_events++;
	return push_state(h, next);
}

int stage_attribution_thread_name(struct stage_attribution *sa, uint64_t ts, pid_t tid,
				  const char *name, size_t len)
{
	struct task_thread_name t;
	struct thread_state next = { .ts = ts, .stage = stage_key_none(), .spark_tid = -1 };
	int ret;

	next.kind = task_thread_name_parse(name, len, &t);
	if (next.kind == TASK_THREAD_TASK || next.kind == TASK_THREAD_TASK_TID) {
		next.stage = key_of(&t);
		next.spark_tid = t.tid;
		next.running = true;
	}
	ret = change_state(sa, tid, next);
	if (ret == 0 && next.running)
		count_task_seen(sa, history_of(sa, tid, false), &next);
	return ret;
}

static int mark(struct stage_attribution *sa, uint64_t ts, pid_t tid, bool busy)
{
	struct thread_history *h = history_of(sa, tid, false);
	const struct thread_state *cur = current_state(h);
	struct thread_state next;

	if (!cur)
		return -ENOENT; /* a mark for a thread never named: nothing to do */
	next = *cur;
	next.ts = ts;
	/* busy only restores a task the name still names */
	next.running = busy && (cur->kind == TASK_THREAD_TASK || cur->kind == TASK_THREAD_TASK_TID);
	if (next.running == cur->running)
		return 0;
	return change_state(sa, tid, next);
}

int stage_attribution_thread_idle(struct stage_attribution *sa, uint64_t ts, pid_t tid)
{
	return mark(sa, ts, tid, false);
}

int stage_attribution_thread_busy(struct stage_attribution *sa, uint64_t ts, pid_t tid)
{
	return mark(sa, ts, tid, true);
}

int stage_attribution_thread_exit(struct stage_attribution *sa, uint64_t ts, pid_t tid)
{
	struct thread_history *h = history_of(sa, tid, false);
	const struct thread_state *cur = current_state(h);
	struct thread_state next;

	if (!cur)
		return 0;
	/* The tid may be reused by a new thread: it starts with no name. */
	next = (struct thread_state){ .ts = ts, .kind = TASK_THREAD_NONE,
				      .stage = stage_key_none(), .spark_tid = -1, .ended = true };
	return change_state(sa, tid, next);
}

static void attribute(struct stage_attribution *sa, uint64_t ts, pid_t tid,
		      const char *name, size_t len, struct stage_attribution_result *out)
{
	const struct thread_state *st = NULL;
	struct task_thread_name t;
	enum task_thread_kind kind = TASK_THREAD_NONE;
	struct stage_key key = stage_key_none();
	bool running;
	if (sa->mode == ATTRIBUTION_THREAD) {
		st = state_at(history_of(sa, tid, false), ts);
		if (name) {
			kind = task_thread_name_parse(name, len, &t);
			key = key_of(&t);
		} else if (st) {
			kind = st->kind;
			key = st->stage;
		}
		running = kind == TASK_THREAD_TASK || kind == TASK_THREAD_TASK_TID;
		/* An idle mark or exit after the last rename wins over the
		 * (stale) name: Spark < 4.2 does not rename idle threads. */
		if (running && st && !st->running)
			running = false;
	} else {
		running = false;
	}
	if (running && !stage_key_is_none(key)) {
		out->stage = key;
		out->how = ATTRIBUTED_THREAD_NAME;
	} else {
		out->stage = stage_epoch_stage_at(sa->epoch, ts);
		out->how = running ? ATTRIBUTED_TID_ONLY : ATTRIBUTED_EPOCH;
	}
}

void stage_attribution_sample(struct stage_attribution *sa, uint64_t ts, pid_t tid,
			      const char *name, size_t len,
			      struct stage_attribution_result *out)
{
	attribute(sa, ts, tid, name, len, out);
}

struct sole_task_ctx {
	uint64_t ts;
	unsigned running;
	struct stage_key stage;
	int64_t task;
};

static int count_running(const char *key, void *value, void *ctx)
{
	const struct thread_state *st = state_at(value, ((struct sole_task_ctx *)ctx)->ts);
	struct sole_task_ctx *c = ctx;

	(void)key;
	if (!st || !st->running || (st->kind != TASK_THREAD_TASK && st->kind != TASK_THREAD_TASK_TID))
		return 0;
	c->stage = st->stage;
	c->task = st->spark_tid;
	return ++c->running > 1; /* a second one: no sole task */
}

void stage_attribution_served(struct stage_attribution *sa, uint64_t ts,
			      struct stage_attribution_result *out, int64_t *task)
{
	struct sole_task_ctx c = { .ts = ts, .task = -1 };

	strmap_foreach(sa->threads, count_running, &c);
	if (c.running == 1 && !stage_key_is_none(c.stage)) {
		out->stage = c.stage;
		out->how = ATTRIBUTED_SOLE_TASK;
		*task = c.task;
		return;
	}
	out->stage = stage_epoch_stage_at(sa->epoch, ts);
	out->how = ATTRIBUTED_WORKER_EPOCH;
	*task = -1;
}

struct forget_ctx {
	uint64_t cut;
	pid_t *ended;
	size_t nended, cap;
};

static int forget_history(const char *key, void *value, void *ctx)
{
	struct thread_history *h = value;
	struct forget_ctx *fc = ctx;
	pid_t tid;

	if (!h || !h->n)
		return 0;
	drop_before(h, fc->cut);
	if (h->n == 1 && h->states[0].ended && h->states[0].ts <= fc->cut) {
		memcpy(&tid, key, sizeof(tid));
		if (!grow_array((void **)&fc->ended, &fc->cap, fc->nended + 1, sizeof(*fc->ended)))
			fc->ended[fc->nended++] = tid;
	} else if (h->cap > 8 && h->n * 4 < h->cap) {
		struct thread_state *s = realloc(h->states, h->n * 2 * sizeof(*s));

		if (s) {
			h->states = s;
			h->cap = h->n * 2;
		}
	}
	return 0;
}

size_t stage_attribution_forget_threads(struct stage_attribution *sa, uint64_t now_ns)
{
	struct forget_ctx fc = { .cut = now_ns > HISTORY_NS ? now_ns - HISTORY_NS : 0 };

	if (!fc.cut)
		return 0;
	strmap_foreach(sa->threads, forget_history, &fc);
	for (size_t i = 0; i < fc.nended; i++)
		free_history(strmap_remove(sa->threads, (const char *)&fc.ended[i],
					   sizeof(fc.ended[i])));
	free(fc.ended);
	return fc.nended;
}

static int add_history_memory(const char *key, void *value, void *ctx)
{
	const struct thread_history *h = value;

	(void)key;
	*(size_t *)ctx += sizeof(*h) + (h ? h->cap * sizeof(*h->states) : 0);
	return 0;
}

size_t stage_attribution_memory(const struct stage_attribution *sa)
{
	size_t n = sizeof(*sa) + strmap_memory(sa->threads);

	strmap_foreach(sa->threads, add_history_memory, &n);
	return n;
}

uint64_t stage_attribution_tid_only_tasks(const struct stage_attribution *sa)
{
	return sa->tid_only_tasks;
}

uint64_t stage_attribution_late_events(const struct stage_attribution *sa)
{
	return sa->late_thread_events;
}
