/* proc_root.h - opening a file as a process sees it.
 *
 * A process in a container has its own root: the paths it publishes (its
 * perf map, the helper's log, its JDK's release file, its /tmp) mean files
 * inside /proc/PID/root, and every component must be resolved there as the
 * process would, so that a link it planted (even an absolute one) cannot
 * lead to our own files. This is the one place that opens such paths.
 */
#ifndef SPARKPROF_PROC_ROOT_H
#define SPARKPROF_PROC_ROOT_H

#include <sys/types.h>

/* Opens path (absolute, as pid sees it) inside pid's root with flags.
 * O_CLOEXEC is added, and O_NONBLOCK unless O_PATH: a FIFO or device planted where a file
 * was expected must not stall the recording. Returns the fd or -errno. */
int proc_root_open(pid_t pid, const char *path, int flags);

/* Opens for reading a file pid published about itself. path_fmt is a printf
 * format taking the pid as the process sees itself ("/tmp/perf-%d.map").
 * The last component may not be a symlink, and the file must be regular and
 * owned by the process's effective uid or root: only its own user may speak
 * for it. Returns the fd, -EPERM when the file fails those checks (a FIFO
 * included: the open does not wait for a writer), or -errno. */
int proc_root_open_published(pid_t pid, const char *path_fmt);

/* Where a containerized sparkprof finds the host's own files (debug
 * symbols under /usr/lib/debug): a folder holding the host's root, from the
 * environment variable below (e.g. /host, mounted from the host's /), else
 * /proc/N/root of the first process whose root is not ours, pid 1 (with the
 * host's PID namespace, the host's init) then our own ancestors (the
 * container runtime's shim, when pid 1's root is closed to us). */
#define HOST_ROOT_ENV "SPARKPROF_HOST_ROOT"

/* Opens path (absolute, as the host sees it) inside the host's root, as
 * proc_root_open does. -ENOENT when we run in the host's root ourselves
 * (then a plain open is the host's view), or -errno. */
int host_root_open(const char *path, int flags);

struct proc_map;

/* Opens the very file behind mapping m of pid: /proc/PID/map_files (root
 * only; survives deletion and renames), else its path as the process sees
 * it, else as we do. The file must be regular and, on the mapping's
 * filesystem, the same inode (-ESTALE: replaced since it was mapped, its
 * symbols would be wrong). Returns the fd or -errno. */
int proc_root_open_mapping(pid_t pid, const struct proc_map *m);

#endif
