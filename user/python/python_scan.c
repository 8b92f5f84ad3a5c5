/* python_scan.c - see python_scan.h. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "proc/file_slurp.h"
#include "proc/proc_children.h"
#include "python/python_process.h"
#include "python/python_scan.h"

static bool named_python(pid_t pid, bool *daemon)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	bool python;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (file_read_prefix(path, 64, &buf, &len))
		return false;
	python = len >= 6 && !memcmp(buf, "python", 6);
	free(buf);
	buf = NULL;
	*daemon = false;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if (python && !file_read_prefix(path, 4096, &buf, &len)) {
		*daemon = memmem(buf, len, "pyspark.daemon", 14) != NULL;
		free(buf);
	}
	return python;
}

static void describe(struct python_seen *s)
{
	struct python_process *pp;
	int err = python_process_open(s->pid, &pp);

	if (!err) {
		snprintf(s->version, sizeof(s->version), "%s", python_process_version(pp));
		s->walkable = true;
		python_process_free(pp);
	}
	proc_ancestors(s->pid, s->ancestors, PYTHON_SCAN_ANCESTORS);
}

int python_scan(struct python_seen **out, size_t *n)
{
	DIR *d = opendir("/proc");
	struct python_seen *all = NULL;
	size_t count = 0, cap = 0;
	struct dirent *e;

	*out = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		bool daemon;

		if (*end || pid <= 0 || !named_python((pid_t)pid, &daemon))
			continue;
		if (grow_array((void **)&all, &cap, count + 1, sizeof(*all))) {
			closedir(d);
			free(all);
			return -ENOMEM;
		}
		all[count] = (struct python_seen){ .pid = (pid_t)pid, .daemon = daemon };
		describe(&all[count++]);
	}
	closedir(d);
	*out = all;
	*n = count;
	return 0;
}
