/* ns_tids.h - thread ids as a containerized process sees them.
 *
 * BPF reports thread ids of the root pid namespace; the JVM helper
 * publishes the ids the JVM itself sees (gettid() inside its container).
 * For a process in another pid namespace the two differ, and the mapping
 * is read from /proc/PID/task/TID/status ("NSpid:", innermost last), once
 * per thread.
 */
#ifndef SPARKPROF_NS_TIDS_H
#define SPARKPROF_NS_TIDS_H

#include <sys/types.h>

struct ns_tids;

/* NULL when pid shares our pid namespace (ids need no translation), or
 * when out of memory. */
struct ns_tids *ns_tids_new(pid_t pid);
void ns_tids_free(struct ns_tids *map);

/* The id thread host_tid has inside its process's namespace, or -1 when it
 * cannot be read (the thread is gone and was never seen). */
pid_t ns_tids_lookup(struct ns_tids *map, pid_t host_tid);

#endif
