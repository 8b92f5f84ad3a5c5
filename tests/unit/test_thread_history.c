/* test_thread_history.c - names and marks as of a moment, in time order
 * whatever the order of arrival; forgetting keeps every answer at or after
 * its horizon (and never gives another name before it), drops ended
 * threads, keeps memory flat over an executor's hour of task renames; names
 * moved to a new pool read the same. */
#include <stdio.h>
#include <string.h>

#include "base/string_pool.h"
#include "jvm/thread_history.h"
#include "tap.h"

#define S 1000000000ull

static void add(struct thread_history *th, pid_t tid, uint64_t ts,
		enum jvm_helper_thread_event_kind kind, const char *name)
{
	struct jvm_helper_thread_event ev = { .ts = ts, .tid = tid, .kind = kind, .name = name };

	if (thread_history_add(th, &ev))
		CHECK(0, "add failed");
}

static int name_is(const struct thread_history *th, pid_t tid, uint64_t ts, const char *want)
{
	const char *got = thread_history_name(th, tid, ts);

	return want ? got && !strcmp(got, want) : !got;
}

/* One task per second on each of 8 task threads for an hour, its name
 * unique as Spark's are (the TID), each task a busy and an idle mark. */
static void run_tasks(struct thread_history *th, struct string_pool *pool, uint64_t from_s,
		      uint64_t to_s, size_t *peak_memory, uint64_t forget_every_s)
{
	char name[96];

	for (uint64_t t = from_s; t < to_s; t++) {
		for (pid_t tid = 100; tid < 108; tid++) {
			int n = snprintf(name, sizeof(name),
					 "Executor task launch worker for task 0.0 in stage %llu.0 (TID %llu)",
					 (unsigned long long)t, (unsigned long long)t * 8 + tid);
			add(th, tid, t * S, JVM_THREAD_NAMED, string_pool_intern(pool, name, n));
			add(th, tid, t * S + 1, JVM_THREAD_BUSY, NULL);
			add(th, tid, t * S + S / 2, JVM_THREAD_IDLE, NULL);
		}
		if (forget_every_s && t % forget_every_s == 0 && t >= 120) {
			thread_history_forget(th, (t - 120) * S);
			size_t m = thread_history_memory(th);
			if (m > *peak_memory)
				*peak_memory = m;
		}
	}
}

int main(void)
{
	struct thread_history *th = thread_history_new();
	struct string_pool *pool = string_pool_new(), *fresh = string_pool_new();
	size_t peak = 0, dropped;
	int ok = 1;

	CHECK(th && pool && fresh, "a history and pools");
	if (!th || !pool || !fresh)
		TAP_DONE();

	/* Out of order: kept sorted. */
	add(th, 7, 30 * S, JVM_THREAD_NAMED, "b");
	add(th, 7, 10 * S, JVM_THREAD_NAMED, "a");
	add(th, 7, 20 * S, JVM_THREAD_IDLE, NULL);
	add(th, 7, 40 * S, JVM_THREAD_BUSY, NULL);
	add(th, 7, 50 * S, JVM_THREAD_IDLE, NULL);
	CHECK(name_is(th, 7, 5 * S, NULL) && name_is(th, 7, 15 * S, "a") &&
	      name_is(th, 7, 35 * S, "b"), "names as of a moment");
	CHECK(thread_history_idle(th, 7, 25 * S) == 1 && thread_history_idle(th, 7, 35 * S) == 0 &&
	      thread_history_idle(th, 7, 45 * S) == 0 && thread_history_idle(th, 7, 55 * S) == 1,
	      "marks as of a moment, a rename counts as busy");

	/* Thread 8 ended at 25 s; thread 9's id was reused after it ended. */
	add(th, 8, 10 * S, JVM_THREAD_NAMED, "gone");
	add(th, 8, 25 * S, JVM_THREAD_ENDED, NULL);
	add(th, 9, 10 * S, JVM_THREAD_NAMED, "old");
	add(th, 9, 20 * S, JVM_THREAD_ENDED, NULL);
	add(th, 9, 60 * S, JVM_THREAD_NAMED, "new");

	dropped = thread_history_forget(th, 45 * S);
	/* 7 keeps "b" (30 s) and the busy mark (40 s) and its idle at 50 s;
	 * 8 goes (2); 9 keeps its end and its new name. */
	CHECK(dropped == 2 + 2 + 1, "dropped %zu events", dropped);
	CHECK(name_is(th, 7, 45 * S, "b") && name_is(th, 7, 99 * S, "b") &&
	      thread_history_idle(th, 7, 45 * S) == 0 && thread_history_idle(th, 7, 55 * S) == 1,
	      "every answer at or after the horizon stands");
	CHECK(name_is(th, 7, 15 * S, NULL) && thread_history_idle(th, 7, 25 * S) == -1,
	      "before it: unknown, not another name or mark");
	CHECK(name_is(th, 8, 30 * S, NULL) && name_is(th, 8, 15 * S, NULL),
	      "an ended thread is gone");
	CHECK(name_is(th, 9, 50 * S, NULL) && name_is(th, 9, 70 * S, "new"),
	      "a reused id keeps its end and its new name");
	CHECK(thread_history_forget(th, 45 * S) == 0, "forgetting again drops nothing");

	/* An hour of tasks, forgotten every 10 s: memory stays what 120 s of
	 * events take; without forgetting it grows with the tasks. */
	run_tasks(th, pool, 100, 3700, &peak, 10);
	/* 120 s of 8 threads' 3 events a second: 23,000 events of 24 bytes. */
	CHECK(peak < 200 << 10, "an hour of task renames holds %zu bytes at most", peak);
	CHECK(name_is(th, 103, 3699 * S + 10,
		      "Executor task launch worker for task 0.0 in stage 3699.0 (TID 29695)"),
	      "the newest name");
	CHECK(name_is(th, 103, 3000 * S, NULL), "an hour-old name is forgotten");
	{
		struct thread_history *kept_all = thread_history_new();
		size_t unused = 0;

		run_tasks(kept_all, pool, 100, 3700, &unused, 0);
		CHECK(thread_history_memory(kept_all) > 16 * peak,
		      "without forgetting: %zu bytes", thread_history_memory(kept_all));
		thread_history_free(kept_all);
	}

	/* Names moved to a new pool read the same from there; the old pool
	 * can go. */
	CHECK(thread_history_move_names(th, fresh) == 0, "names moved");
	CHECK(string_pool_memory(fresh) * 8 < string_pool_memory(pool),
	      "the new pool holds the kept names: %zu bytes of %zu", string_pool_memory(fresh),
	      string_pool_memory(pool));
	string_pool_free(pool);
	for (uint64_t t = 3590; t < 3700 && ok; t++) {
		char want[96];

		snprintf(want, sizeof(want),
			 "Executor task launch worker for task 0.0 in stage %llu.0 (TID %llu)",
			 (unsigned long long)t, (unsigned long long)t * 8 + 105);
		ok = name_is(th, 105, t * S + 5, want) &&
		     thread_history_name(th, 105, t * S + 5) ==
			     string_pool_intern(fresh, want, strlen(want));
	}
	CHECK(ok, "every name kept reads the same, from the new pool");

	thread_history_free(th);
	string_pool_free(fresh);
	TAP_DONE();
}
