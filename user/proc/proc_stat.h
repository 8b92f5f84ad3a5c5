/* proc_stat.h - when a process started, and which address space it has,
 * from /proc/PID/stat.
 *
 * proc_stat_field() parses a stat text from a buffer (it never trusts the
 * buffer: no NUL needed, any length, any garbage);
 * proc_start_monotonic_ns() reads /proc/PID/stat and converts the start to
 * the clock sparkprof's timestamps use.
 */
#ifndef SPARKPROF_PROC_STAT_H
#define SPARKPROF_PROC_STAT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Field n (3 or more, as proc(5) numbers them) of a /proc/PID/stat text,
 * a decimal. 0, or -EINVAL when malformed. */
int proc_stat_field(const char *buf, size_t len, int n, uint64_t *value);
/* Field 22: starttime, clock ticks since boot. */
int proc_stat_starttime(const char *buf, size_t len, uint64_t *ticks);

/* A number for pid's address space, from where its code and arguments
 * are (fields 26 and 48): an exec makes a new one, at other addresses
 * (address space randomization). 0, or -errno (-ENOENT: gone, a zombie,
 * or not readable). */
int proc_address_space_id(pid_t pid, uint64_t *id);

/* CLOCK_MONOTONIC time (ns) at which pid started, to clock-tick resolution
 * (0 if it started before the monotonic clock's zero).  0, or -errno
 * (-ENOENT when the process does not exist, -EINVAL when unreadable). */
int proc_start_monotonic_ns(pid_t pid, uint64_t *ns);

#endif
