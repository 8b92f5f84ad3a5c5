/* proc_stat.h - when a process started, from /proc/PID/stat.
 *
 * proc_stat_starttime() parses a stat text from a buffer (it never trusts
 * the buffer: no NUL needed, any length, any garbage);
 * proc_start_monotonic_ns() reads /proc/PID/stat and converts the start to
 * the clock sparkprof's timestamps use.
 */
#ifndef SPARKPROF_PROC_STAT_H
#define SPARKPROF_PROC_STAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Field 22 (starttime, clock ticks since boot) of a /proc/PID/stat text.
 * 0, or -EINVAL when malformed. */
int proc_stat_starttime(const char *buf, size_t len, uint64_t *ticks);

/* CLOCK_MONOTONIC time (ns) at which pid started, to clock-tick resolution
 * (0 if it started before the monotonic clock's zero).  0, or -errno
 * (-ENOENT when the process does not exist, -EINVAL when unreadable). */
int proc_start_monotonic_ns(pid_t pid, uint64_t *ns);

#endif
