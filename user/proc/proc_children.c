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

size_t proc_ancestors(pid_t pid, pid_t *out, size_t max)
{
	struct proc_status st;
	size_t n = 0;

	while (n < max && !proc_status_read(pid, &st) && st.ppid > 1)
		out[n++] = pid = st.ppid;
	return n;
}

static bool below(pid_t pid, const pid_t *roots, size_t n)
{
	pid_t up[MAX_LEVELS];
	size_t levels = proc_ancestors(pid, up, MAX_LEVELS);

	for (size_t i = 0; i < levels; i++)
		if (is_root(up[i], roots, n))
			return true;
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
