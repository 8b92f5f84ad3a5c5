/* proc_root.c - see proc_root.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc/proc_maps.h"
#include "proc/proc_root.h"
#include "proc/proc_status.h"

int proc_root_open(pid_t pid, const char *path, int flags)
{
	char root[64];
	struct open_how how = {
		/* openat2 takes nothing but O_DIRECTORY and O_NOFOLLOW beside O_PATH. */
		.flags = (unsigned)flags | O_CLOEXEC | (flags & O_PATH ? 0 : O_NONBLOCK),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int rootfd, fd, err;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
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
