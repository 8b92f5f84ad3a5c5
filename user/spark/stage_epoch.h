/* stage_epoch.h - the stage epoch rule of one executor.
 *
 * Time is cut into epochs of `interval` ns from the recording start:
 * epoch k covers [start + k*interval, start + (k+1)*interval).  At each epoch
 * boundary B_k = start + k*interval the stage holding MORE than half of the
 * executor's running tasks at that instant becomes epoch k's stage; when no
 * stage does (a tie, a split, or no task at all) epoch k keeps epoch k-1's
 * stage; before any decision, "no stage".  This is what the RAPIDS
 * Accelerator does, minus its restart gaps (docs/stages.md).
 *
 * Boundary semantics: the tasks running at B_k are those whose start event
 * has ts <= B_k and whose end event has ts > B_k.  Boundaries are decided
 * lazily, from the running-task counts, as soon as an event with ts > B_k or
 * a query with ts >= B_k arrives; later events with ts <= B_k cannot change
 * that decision any more and are counted as late.
 *
 * Tasks are keyed by (stage, stage attempt): two attempts of one stage are
 * different stages here.  A task whose stage is unknown (a TID-only thread
 * name) counts among the running tasks but for no stage, so it can only
 * prevent a majority, never make one.
 */
#ifndef SPARKPROF_STAGE_EPOCH_H
#define SPARKPROF_STAGE_EPOCH_H

#include <stdbool.h>
#include <stdint.h>

/* A stage attempt; stage < 0 means "no stage" (or "unknown" for a task). */
struct stage_key {
	int32_t stage;
	int32_t attempt;
};

static inline struct stage_key stage_key_none(void)
{
	return (struct stage_key){ -1, -1 };
}

static inline bool stage_key_is_none(struct stage_key k)
{
	return k.stage < 0;
}

static inline bool stage_key_eq(struct stage_key a, struct stage_key b)
{
	return (a.stage < 0 && b.stage < 0) ||
	       (a.stage == b.stage && a.attempt == b.attempt);
}

struct stage_epoch;

/* NULL and errno (EINVAL: interval_ns is 0; ENOMEM). */
struct stage_epoch *stage_epoch_new(uint64_t start_ns, uint64_t interval_ns);
void stage_epoch_free(struct stage_epoch *se);

/* A task of stage `key` (stage < 0: unknown stage) started or stopped
 * running at ts.  Events should come in time order.  task_end returns
 * -ENOENT (and changes nothing) when no such task is running. */
int stage_epoch_task_start(struct stage_epoch *se, uint64_t ts, struct stage_key key);
int stage_epoch_task_end(struct stage_epoch *se, uint64_t ts, struct stage_key key);

/* The stage of the epoch holding ts (ts before the start: no stage).
 * Decides every boundary <= ts that is still open. */
struct stage_key stage_epoch_stage_at(struct stage_epoch *se, uint64_t ts);

/* How many tasks run now, in total and for one stage key. */
uint32_t stage_epoch_running(const struct stage_epoch *se);
uint32_t stage_epoch_running_in(const struct stage_epoch *se, struct stage_key key);

/* Events that arrived after the boundary they belong to had been decided. */
uint64_t stage_epoch_late_events(const struct stage_epoch *se);

#endif
