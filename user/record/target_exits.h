/* target_exits.h - whether every process of `record -p` has exited.
 *
 * Each target is held by a pidfd, which becomes readable when that process
 * exits: a pid the kernel reuses meanwhile is not mistaken for the target.
 */
#ifndef SPARKPROF_TARGET_EXITS_H
#define SPARKPROF_TARGET_EXITS_H

#include <stdbool.h>
#include <sys/types.h>

struct target_exits;

/* Holds the n processes of pids. NULL and errno when one cannot be held
 * (ESRCH: it is already gone). */
struct target_exits *target_exits_new(const pid_t *pids, int n);
void target_exits_free(struct target_exits *t);

/* Whether all of them have exited; does not wait. */
bool target_exits_all(struct target_exits *t);

#endif
