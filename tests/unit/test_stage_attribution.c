/* test_stage_attribution.c - per-sample stage attribution on a synthetic
 * executor timeline: task renames, concurrent stages, idle marks, 4.2 idle
 * names, TID-only names, retried attempts, thread exit, lagging samples. */
#include <errno.h>
#include <string.h>

#include "spark/stage_attribution.h"
#include "tap.h"

#define S 1000000000ull
#define T0 (500 * S)
#define AT(sec) (T0 + (uint64_t)((sec) * (double)S))

static const char *task_name(int idx, int att, int stage, int sat, int tid)
{
	static char buf[8][128];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]),
		 "Executor task launch worker for task %d.%d in stage %d.%d (TID %d)", idx, att,
		 stage, sat, tid);
	return buf[i];
}

static void name(struct stage_attribution *sa, double sec, pid_t tid, const char *n)
{
	stage_attribution_thread_name(sa, AT(sec), tid, n, strlen(n));
}

static struct stage_attribution_result sample(struct stage_attribution *sa, double sec,
					      pid_t tid, const char *n)
{
	struct stage_attribution_result r;

	stage_attribution_sample(sa, AT(sec), tid, n, n ? strlen(n) : 0, &r);
	return r;
}

static int is(struct stage_attribution_result r, int s, int a, enum attribution_method how)
{
	if (r.how != how)
		return 0;
	if (s < 0)
		return stage_key_is_none(r.stage);
	return r.stage.stage == s && r.stage.attempt == a;
}

/* The same thread events for both modes. */
static void feed_first_part(struct stage_attribution *sa)
{
	name(sa, 0.5, 101, "Executor task launch worker-0");
	name(sa, 0.5, 102, "Executor task launch worker-1");
	name(sa, 0.6, 200, "dispatcher-event-loop-0");
	name(sa, 1, 101, task_name(0, 0, 3, 0, 10));
	name(sa, 1, 102, task_name(1, 0, 3, 0, 11));
	name(sa, 1, 102, task_name(1, 0, 3, 0, 11)); /* reported twice */
	name(sa, 7, 101, task_name(0, 0, 4, 0, 12));
}

int main(void)
{
	enum attribution_mode mode;
	struct stage_attribution *sa = stage_attribution_new(ATTRIBUTION_THREAD, T0, 5 * S);
	struct stage_attribution_result r;
	const char *gc = "GC Thread#0", *disp = "dispatcher-event-loop-0";

	CHECK(sa != NULL, "new (thread mode)");
	feed_first_part(sa);

	r = sample(sa, 2, 101, NULL);
	CHECK(is(r, 3, 0, ATTRIBUTED_THREAD_NAME), "task thread at 2 s: stage 3.0 by name");
	r = sample(sa, 2, 300, gc);
	CHECK(is(r, -1, -1, ATTRIBUTED_EPOCH), "GC at 2 s: epoch 0 has no stage");
	r = sample(sa, 6, 300, gc);
	CHECK(is(r, 3, 0, ATTRIBUTED_EPOCH), "GC at 6 s: epoch stage 3.0 (2 of 2 tasks)");
	r = sample(sa, 6.5, 101, NULL);
	CHECK(is(r, 3, 0, ATTRIBUTED_THREAD_NAME),
	      "a sample lagging behind a later rename uses the name at its time");
	r = sample(sa, 8, 101, NULL);
	CHECK(is(r, 4, 0, ATTRIBUTED_THREAD_NAME), "after the rename at 7 s: 4.0");
	r = sample(sa, 8, 102, task_name(1, 0, 3, 0, 11));
	CHECK(is(r, 3, 0, ATTRIBUTED_THREAD_NAME), "concurrent stage 3.0 on the other thread");
	r = sample(sa, 11, 200, disp);
	CHECK(is(r, 3, 0, ATTRIBUTED_EPOCH),
	      "1 task of 3.0 and 1 of 4.0 at 10 s: no majority, 3.0 holds for the dispatcher");

	/* 12 s: thread 102 finishes its task; Spark < 4.2 keeps its name. */
	/* (CHECK evaluates its condition twice: no side effects inside.) */
	int ret = stage_attribution_thread_idle(sa, AT(12), 102);
	CHECK(ret == 0, "idle mark");
	r = sample(sa, 11.5, 102, task_name(1, 0, 3, 0, 11));
	CHECK(is(r, 3, 0, ATTRIBUTED_THREAD_NAME), "before the idle mark: still the task");
	r = sample(sa, 13, 102, task_name(1, 0, 3, 0, 11));
	CHECK(is(r, 3, 0, ATTRIBUTED_EPOCH), "idle thread with a stale name: epoch rule");
	/* A rotated helper log restates the idle thread's name: the same
	 * task, not one more (tasks_seen below). */
	name(sa, 13.5, 102, task_name(1, 0, 3, 0, 11));
	stage_attribution_thread_idle(sa, AT(13.6), 102);
	r = sample(sa, 16, 102, NULL);
	CHECK(is(r, 4, 0, ATTRIBUTED_EPOCH), "at 15 s only 4.0 runs: the epoch moves to 4.0");
	r = sample(sa, 16, 101, NULL);
	CHECK(is(r, 4, 0, ATTRIBUTED_THREAD_NAME), "the running task keeps its own stage");

	/* 17 s: the 4.2+ idle name ends the task too. */
	name(sa, 17, 101, "Executor task idle worker#33");
	r = sample(sa, 21, 101, "Executor task idle worker#33");
	CHECK(is(r, 4, 0, ATTRIBUTED_EPOCH), "4.2 idle name: epoch rule, 4.0 holds (no tasks)");

	/* 22 s: a Spark 2.2-3.0 name: TID only. */
	name(sa, 22, 102, "Executor task launch worker for task 40");
	r = sample(sa, 23, 102, NULL);
	CHECK(is(r, 4, 0, ATTRIBUTED_TID_ONLY), "TID-only name: epoch rule, said so");
	r = sample(sa, 26, 300, gc);
	CHECK(is(r, 4, 0, ATTRIBUTED_EPOCH), "only an unknown-stage task at 25 s: 4.0 holds");

	/* 26 s: a retried stage attempt. */
	name(sa, 26, 101, task_name(0, 1, 6, 1, 50));
	r = sample(sa, 27, 101, NULL);
	CHECK(is(r, 6, 1, ATTRIBUTED_THREAD_NAME), "retried attempt 6.1 by name");

	/* 28 s: thread 101 exits; its tid is free. */
	ret = stage_attribution_thread_exit(sa, AT(28), 101);
	CHECK(ret == 0, "exit");
	r = sample(sa, 29, 101, NULL);
	CHECK(is(r, 4, 0, ATTRIBUTED_EPOCH), "after exit: epoch rule");

	/* 30 s idle, 31 s busy again on thread 102 (TID-only task). */
	stage_attribution_thread_idle(sa, AT(30), 102);
	r = sample(sa, 30.5, 102, NULL);
	CHECK(is(r, 4, 0, ATTRIBUTED_EPOCH), "idle: plain epoch");
	stage_attribution_thread_busy(sa, AT(31), 102);
	r = sample(sa, 31.5, 102, NULL);
	CHECK(is(r, 4, 0, ATTRIBUTED_TID_ONLY), "busy again: a TID-only task");
	ret = stage_attribution_thread_idle(sa, AT(32), 999);
	CHECK(ret == -ENOENT, "a mark for an unknown thread is refused");

	/* Tasks a stage saw are counted from the sample store (views.c);
	 * tasks whose names have no stage are counted here. */
	CHECK(stage_attribution_tid_only_tasks(sa) == 1, "one TID-only task");
	CHECK(stage_attribution_late_events(sa) == 0, "no late events in an ordered feed");
	stage_attribution_free(sa);

	/* Epoch mode: every sample by the epoch rule. */
	sa = stage_attribution_new(ATTRIBUTION_EPOCH, T0, 5 * S);
	feed_first_part(sa);
	r = sample(sa, 2, 101, NULL);
	CHECK(is(r, -1, -1, ATTRIBUTED_EPOCH), "epoch mode, task thread at 2 s: no stage");
	r = sample(sa, 8, 101, NULL);
	CHECK(is(r, 3, 0, ATTRIBUTED_EPOCH), "epoch mode at 8 s: 3.0 though the thread runs 4.0");
	r = sample(sa, 11, 101, task_name(0, 0, 4, 0, 12));
	CHECK(is(r, 3, 0, ATTRIBUTED_EPOCH), "epoch mode ignores the name");
	stage_attribution_free(sa);

	/* Samples without any helper data: the name alone decides. */
	sa = stage_attribution_new(ATTRIBUTION_THREAD, T0, 5 * S);
	r = sample(sa, 1, 77, task_name(2, 0, 9, 0, 5));
	CHECK(is(r, 9, 0, ATTRIBUTED_THREAD_NAME), "name given, no history: by name");
	r = sample(sa, 1, 77, NULL);
	CHECK(is(r, -1, -1, ATTRIBUTED_EPOCH), "no name, no history: no stage");
	r = sample(sa, 1, 77, "Executor task launch worker for task 1.0 in stage 99999999999.0 (TID 5)");
	CHECK(is(r, -1, -1, ATTRIBUTED_TID_ONLY), "stage beyond int: unknown, not cut");
	stage_attribution_free(sa);


	/* An application that runs 2,000 short stages of 4 tasks on 8 reused
	 * threads: the tracker keeps nothing a stage (the threads keep their
	 * last 120 s), so memory stays as it was at stage 1,000. */
	sa = stage_attribution_new(ATTRIBUTION_THREAD, T0, 5 * S);
	if (sa) {
		size_t before = 0;
		int right = 0;

		for (int st = 0; st < 2000; st++) {
			for (int k = 0; k < 4; k++) {
				double at = st * 0.5 + k * 0.1;
				pid_t tid = 200 + (st * 4 + k) % 8;

				name(sa, at, tid, task_name(k, 0, st, 0, st * 4 + k));
				stage_attribution_thread_busy(sa, AT(at + 0.01), tid);
				right += is(sample(sa, at + 0.05, tid, NULL), st, 0,
					    ATTRIBUTED_THREAD_NAME);
				stage_attribution_thread_idle(sa, AT(at + 0.09), tid);
			}
			if (st == 999)
				before = stage_attribution_memory(sa);
		}
		CHECK(right == 8000, "8,000 task samples in their stage (%d)", right);
		CHECK(stage_attribution_memory(sa) <= before + 1024,
		      "memory at stage 2,000 as at 1,000 (%zu, %zu bytes)",
		      stage_attribution_memory(sa), before);
		stage_attribution_free(sa);
	}

	/* A pool that ends its threads and starts new ones: each ended
	 * thread's history goes at the next forget 120 s on, and a thread that
	 * has not ended keeps the state in force (idle with a stale name: the
	 * epoch rule; running a long task: its stage). */
	sa = stage_attribution_new(ATTRIBUTION_THREAD, T0, 5 * S);
	if (sa) {
		size_t full, forgotten;

		for (int t = 0; t < 200; t++) {
			for (int k = 0; k < 60; k++) {
				double at = t * 0.5 + k * 0.005;

				name(sa, at, 1000 + t, task_name(k, 0, 7, 0, t * 60 + k));
				stage_attribution_thread_idle(sa, AT(at + 0.002), 1000 + t);
			}
			stage_attribution_thread_exit(sa, AT(t * 0.5 + 0.4), 1000 + t);
		}
		name(sa, 1, 50, task_name(0, 0, 8, 0, 90000));          /* idle, stale name */
		stage_attribution_thread_idle(sa, AT(2), 50);
		name(sa, 1, 51, task_name(1, 0, 9, 0, 90001));          /* a long task */
		full = stage_attribution_memory(sa);
		forgotten = stage_attribution_forget_threads(sa, AT(100 + 120));
		CHECK(forgotten == 200 && stage_attribution_memory(sa) < full / 10,
		      "200 ended threads forgotten: %zu bytes, were %zu", stage_attribution_memory(sa),
		      full);
		r = sample(sa, 230, 50, task_name(0, 0, 8, 0, 90000));
		CHECK(r.how == ATTRIBUTED_EPOCH, "an idle thread stays idle (the epoch rule)");
		r = sample(sa, 230, 51, task_name(1, 0, 9, 0, 90001));
		CHECK(is(r, 9, 0, ATTRIBUTED_THREAD_NAME), "a long task stays its stage");
		CHECK(stage_attribution_forget_threads(sa, AT(400)) == 0, "threads alive stay");
		stage_attribution_free(sa);
	}

	CHECK(attribution_mode_parse("thread", &mode) == 0 && mode == ATTRIBUTION_THREAD, "thread");
	CHECK(attribution_mode_parse("epoch", &mode) == 0 && mode == ATTRIBUTION_EPOCH, "epoch");
	CHECK(attribution_mode_parse("stage", &mode) == -EINVAL, "bad mode");
	CHECK(attribution_mode_parse(NULL, &mode) == -EINVAL, "NULL mode");
	CHECK_STR(attribution_method_name(ATTRIBUTED_TID_ONLY), "tid-only-epoch", "method name");
	CHECK_STR(attribution_mode_name(ATTRIBUTION_EPOCH), "epoch", "mode name");
	sa = stage_attribution_new(ATTRIBUTION_THREAD, 0, 0);
	CHECK(sa == NULL, "interval 0 refused");
	sa = stage_attribution_new((enum attribution_mode)7, 0, S);
	CHECK(sa == NULL && errno == EINVAL, "bad mode refused");
	stage_attribution_free(NULL);
	TAP_DONE();
}
