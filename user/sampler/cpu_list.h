/* cpu_list.h - CPU lists as the kernel writes them ("0-3,5,7-8"), e.g.
 * /sys/devices/system/cpu/online. */
#ifndef SPARKPROF_CPU_LIST_H
#define SPARKPROF_CPU_LIST_H

#include <stddef.h>

#define CPU_LIST_MAX 8192

/* Parses buf[0..len) into cpus[] (ascending, at most max); returns the count
 * or -EINVAL for malformed text, -E2BIG when over max or CPU_LIST_MAX. */
int cpu_list_parse(const char *buf, size_t len, int *cpus, int max);

/* Reads /sys/devices/system/cpu/online; returns the count or -errno. */
int cpu_list_online(int *cpus, int max);

#endif
