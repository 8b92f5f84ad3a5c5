/* proc_children.h - the processes running below given ones (children,
 * grandchildren...), from each process's parent in /proc: what `record -p`
 * follows besides its targets (a PySpark executor's daemon and workers).
 */
#ifndef SPARKPROF_PROC_CHILDREN_H
#define SPARKPROF_PROC_CHILDREN_H

#include <stddef.h>
#include <sys/types.h>

/* pid's parent, grandparent ... into out (at most max), nearest first,
 * stopping below init (pid 1) or at a process that cannot be read.
 * Returns how many. */
size_t proc_ancestors(pid_t pid, pid_t *out, size_t max);

/* Calls fn for every live process whose ancestors (up to 8 levels) include
 * one of roots[0..n). 0, or -errno when /proc cannot be read; stops when
 * fn returns non-zero and returns that. */
int proc_children_each(const pid_t *roots, size_t n, int (*fn)(pid_t pid, void *ctx), void *ctx);

#endif
