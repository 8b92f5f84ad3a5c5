/* test_stage_epoch.c - the epoch rule on a synthetic timeline. */
#include <errno.h>

#include "spark/stage_epoch.h"
#include "tap.h"

#define S 1000000000ull
#define T0 (1000 * S) /* recording start */

static struct stage_key K(int s, int a)
{
	return (struct stage_key){ s, a };
}

static int is(struct stage_key got, int s, int a)
{
	if (s < 0)
		return stage_key_is_none(got);
	return got.stage == s && got.attempt == a;
}

int main(void)
{
	struct stage_epoch *se = stage_epoch_new(T0, 5 * S);

	CHECK(se != NULL, "new");
	CHECK(is(stage_epoch_stage_at(se, T0 - S), -1, -1), "before the start: no stage");
	CHECK(is(stage_epoch_stage_at(se, T0 + S / 2), -1, -1), "before any task: no stage");

	/* 1 s: two tasks of stage 3.0.  Epoch 0 was decided at T0 (no task). */
	/* (CHECK evaluates its condition twice: no side effects inside.) */
	int r1 = stage_epoch_task_start(se, T0 + 1 * S, K(3, 0));
	int r2 = stage_epoch_task_start(se, T0 + 1 * S, K(3, 0));
	CHECK(r1 == 0 && r2 == 0, "start 3.0 twice");
	CHECK(stage_epoch_running_in(se, K(3, 0)) == 2 && stage_epoch_running(se) == 2,
	      "two tasks running");
	CHECK(is(stage_epoch_stage_at(se, T0 + 2 * S), -1, -1),
	      "epoch 0 is decided at its start: still no stage after a task began");
	CHECK(is(stage_epoch_stage_at(se, T0 + 5 * S), 3, 0),
	      "boundary at 5 s: 2 of 2 tasks in stage 3.0");

	/* 6 s: a stage-3 task ends, a stage-4 task starts: 1 vs 1, no majority. */
	stage_epoch_task_end(se, T0 + 6 * S, K(3, 0));
	stage_epoch_task_start(se, T0 + 6 * S, K(4, 0));
	CHECK(is(stage_epoch_stage_at(se, T0 + 10 * S + 1), 3, 0),
	      "50%% is not more than half: the previous stage holds");

	/* 11 s: two more stage-4 tasks: 3 of 4. */
	stage_epoch_task_start(se, T0 + 11 * S, K(4, 0));
	stage_epoch_task_start(se, T0 + 11 * S, K(4, 0));
	CHECK(is(stage_epoch_stage_at(se, T0 + 12 * S), 3, 0), "epoch 2 keeps 3.0");
	CHECK(is(stage_epoch_stage_at(se, T0 + 15 * S), 4, 0), "3 of 4 tasks: stage 4.0 at 15 s");

	/* 16 s: everything ends; an empty executor keeps the last stage. */
	stage_epoch_task_end(se, T0 + 16 * S, K(3, 0));
	for (int i = 0; i < 3; i++)
		stage_epoch_task_end(se, T0 + 16 * S, K(4, 0));
	CHECK(stage_epoch_running(se) == 0, "no task running");
	r1 = stage_epoch_task_end(se, T0 + 16 * S, K(4, 0));
	CHECK(r1 == -ENOENT, "ending a task that is not running is refused");
	CHECK(is(stage_epoch_stage_at(se, T0 + 20 * S), 4, 0), "no tasks: previous stage holds");

	/* 21 s: a retried attempt 4.1 (2 tasks) next to a zombie 4.0 task. */
	stage_epoch_task_start(se, T0 + 21 * S, K(4, 0));
	stage_epoch_task_start(se, T0 + 21 * S, K(4, 1));
	stage_epoch_task_start(se, T0 + 21 * S, K(4, 1));
	CHECK(is(stage_epoch_stage_at(se, T0 + 25 * S), 4, 1), "attempt 4.1 has 2 of 3 tasks");

	/* 26 s: TID-only tasks count among the running, for no stage. */
	stage_epoch_task_end(se, T0 + 26 * S, K(4, 0));
	stage_epoch_task_end(se, T0 + 26 * S, K(4, 1));
	stage_epoch_task_end(se, T0 + 26 * S, K(4, 1));
	for (int i = 0; i < 3; i++)
		stage_epoch_task_start(se, T0 + 26 * S, stage_key_none());
	stage_epoch_task_start(se, T0 + 26 * S, K(5, 0));
	stage_epoch_task_start(se, T0 + 26 * S, K(5, 0));
	CHECK(stage_epoch_running_in(se, stage_key_none()) == 3, "3 tasks of unknown stage");
	CHECK(is(stage_epoch_stage_at(se, T0 + 30 * S), 4, 1),
	      "2 of 5 tasks known: no majority, nothing invented");

	/* 34 s: unknown tasks end; 35 s (exactly a boundary): 3 tasks of 6.0
	 * start.  Events at the boundary's own time count for it. */
	for (int i = 0; i < 3; i++) {
		r1 = stage_epoch_task_end(se, T0 + 34 * S, stage_key_none());
		CHECK(r1 == 0, "end unknown %d", i);
	}
	r1 = stage_epoch_task_end(se, T0 + 34 * S, stage_key_none());
	CHECK(r1 == -ENOENT, "no unknown task left");
	for (int i = 0; i < 3; i++)
		stage_epoch_task_start(se, T0 + 35 * S, K(6, 0));
	CHECK(is(stage_epoch_stage_at(se, T0 + 35 * S), 6, 0),
	      "a start at exactly the boundary counts for it (3 of 5)");
	CHECK(is(stage_epoch_stage_at(se, T0 + 35 * S - 1), 4, 1), "1 ns before: epoch 6");

	/* A query decides boundaries; an older event after it is late. */
	CHECK(is(stage_epoch_stage_at(se, T0 + 41 * S), 6, 0), "epoch 8");
	CHECK(stage_epoch_late_events(se) == 0, "no late event yet");
	for (int i = 0; i < 6; i++) /* 6 of 11 running tasks */
		stage_epoch_task_start(se, T0 + 39 * S, K(7, 0));
	CHECK(stage_epoch_late_events(se) == 6, "events for a decided boundary are late");
	CHECK(is(stage_epoch_stage_at(se, T0 + 42 * S), 6, 0), "a decided epoch does not change");
	CHECK(is(stage_epoch_stage_at(se, T0 + 45 * S), 7, 0), "the next boundary sees them");

	/* Queries out of order read the recorded decisions. */
	CHECK(is(stage_epoch_stage_at(se, T0 + 12 * S), 3, 0), "epoch 2 again: 3.0");
	CHECK(is(stage_epoch_stage_at(se, T0 + 27 * S), 4, 1), "epoch 5 again: 4.1");
	CHECK(is(stage_epoch_stage_at(se, T0 + 3 * S), -1, -1), "epoch 0 again: no stage");

	/* A huge gap costs one decision, not one per epoch. */
	CHECK(is(stage_epoch_stage_at(se, UINT64_MAX), 7, 0), "the far future");
	stage_epoch_free(se);

	se = stage_epoch_new(T0, 0);
	CHECK(se == NULL && errno == EINVAL, "interval 0 is refused");

	/* Three concurrent stages, none with a majority, from the first
	 * boundary on: no stage, never a guess. */
	se = stage_epoch_new(0, 5 * S);
	stage_epoch_task_start(se, 1, K(1, 0));
	stage_epoch_task_start(se, 1, K(2, 0));
	stage_epoch_task_start(se, 1, K(3, 0));
	CHECK(is(stage_epoch_stage_at(se, 100 * S), -1, -1), "1:1:1 split: no stage");
	stage_epoch_task_start(se, 101 * S, K(2, 0));
	stage_epoch_task_start(se, 101 * S, K(2, 0));
	CHECK(is(stage_epoch_stage_at(se, 105 * S), 2, 0), "3 of 5 in stage 2: stage 2");
	stage_epoch_free(se);
	stage_epoch_free(NULL);
	TAP_DONE();
}
