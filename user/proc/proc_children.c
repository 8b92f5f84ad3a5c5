/* proc_children.c - see proc_children.h. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "proc/proc_children.h"
#include "proc/proc_status.h"

#define MAX_LEVELS 8

static bool is_root(pid_t pid, const pid_t *roots, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (roots[i] == pid)
			return true;
	return false;
}

static bool below(pid_t pid, const pid_t *roots, size_t n)
{
	struct proc_status st;

	for (int level = 0; level < MAX_LEVELS; level++) {
		if (proc_status_read(pid, &st) || st.ppid <= 1)
			return false;
		if (is_root(st.ppid, roots, n))
			return true;
		pid = st.ppid;
	}
	return false;
}

int proc_children_each(const pid_t *roots, size_t n, int (*fn)(pid_t pid, void *ctx), void *ctx)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int rc = 0;

	if (!d)
		return -errno;
	while (!rc && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 1 || is_root((pid_t)pid, roots, n))
			continue;
		if (below((pid_t)pid, roots, n))
			rc = fn((pid_t)pid, ctx);
	}
	closedir(d);
	return rc;
}
