/* proc_root.c - see proc_root.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc/proc_maps.h"
#include "proc/proc_root.h"
#include "proc/proc_status.h"

/* Opens path inside the folder root as if root were "/". */
static int open_in_root(const char *root, const char *path, int flags)
{
	struct open_how how = {
		/* openat2 takes nothing but O_DIRECTORY and O_NOFOLLOW beside O_PATH. */
		.flags = (unsigned)flags | O_CLOEXEC | (flags & O_PATH ? 0 : O_NONBLOCK),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int rootfd, fd, err;

	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	/* No fallback without openat2 (5.6): the ring buffer sparkprof needs
	 * came in 5.8, and a plain openat would follow planted links out. */
	fd = (int)syscall(SYS_openat2, rootfd, path + (path[0] == '/'), &how, sizeof(how));
	err = fd < 0 ? -errno : 0;
	close(rootfd);
	return err ? err : fd;
}

int proc_root_open(pid_t pid, const char *path, int flags)
{
	char root[64];

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	return open_in_root(root, path, flags);
}

/* The root folder of the first process, pid 1 then our own ancestors, whose
 * root is not ours: on a node, pid 1 (host PID namespace) or the runtime's
 * shim that started our container. 0, or -ENOENT when every one shares our
 * root (we run in the host's) or cannot be read. */
static int find_host_root(char *root, size_t size)
{
	struct stat ours, theirs;
	pid_t pid = 1, next = getpid();

	if (stat("/", &ours))
		return -errno;
	for (int step = 0; step < 64; step++) {
		snprintf(root, size, "/proc/%d/root", (int)pid);
		if (!stat(root, &theirs)) {
			if (theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino)
				return 0;
			if (pid == 1)
				return -ENOENT; /* pid 1 shares our root: we are on the host */
		}
		/* pid 1's root may be closed to us (some VMs' init): our ancestors. */
		if (next <= 1)
			return -ENOENT;
		struct proc_status st;

		pid = next;
		if (proc_status_read(pid, &st) < 0)
			return -ENOENT;
		next = st.ppid;
	}
	return -ENOENT;
}

int host_root_open(const char *path, int flags)
{
	const char *configured = getenv(HOST_ROOT_ENV);
	char root[64];
	int err;

	if (configured && *configured)
		return open_in_root(configured, path, flags);
	err = find_host_root(root, sizeof(root));
	return err ? err : open_in_root(root, path, flags);
}

int proc_root_open_published(pid_t pid, const char *path_fmt)
{
	struct proc_status st;
	char path[256];
	struct stat sb;
	int fd, rc = proc_status_read(pid, &st);

	if (rc < 0)
		return rc;
	if (snprintf(path, sizeof(path), path_fmt, (int)proc_status_ns_pid(&st)) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = proc_root_open(pid, path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return fd;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (sb.st_uid != proc_status_euid(&st) && sb.st_uid != 0)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int proc_root_open_mapping(pid_t pid, const struct proc_map *m)
{
	char path[80];
	struct stat st;
	int fd;

	/* The exact file mapped (root only; survives deletion and renames). */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (m->deleted)
		return -ENOENT;
	for (int attempt = 0; attempt < 2; attempt++) {
		/* As the process sees the path, then as we do. */
		fd = attempt == 0 ? proc_root_open(pid, m->path, O_RDONLY)
				  : open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (attempt == 1 && fd < 0)
			fd = -errno;
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			fd = -EPERM;
			continue;
		}
		/* Same filesystem but another inode: the file was replaced since
		 * it was mapped; its symbols would be wrong.  (A different device
		 * is expected through overlayfs, so that alone is accepted.) */
		if (st.st_dev == makedev(m->dev_major, m->dev_minor) && st.st_ino != m->inode) {
			close(fd);
			fd = -ESTALE;
			continue;
		}
		return fd;
	}
	return fd;
}
