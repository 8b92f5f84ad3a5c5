/* ns_tids.c - see ns_tids.h. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/strmap.h"
#include "proc/ns_tids.h"
#include "proc/proc_status.h"

struct ns_tids {
	pid_t pid;
	struct strmap *by_host_tid; /* decimal host tid -> (intptr_t) ns tid + 1 */
};

struct ns_tids *ns_tids_new(pid_t pid)
{
	struct proc_status st;
	struct ns_tids *map;

	if (proc_status_read(pid, &st) || !(st.present & PROC_STATUS_NSTGID) ||
	    proc_status_ns_pid(&st) == pid)
		return NULL;
	map = calloc(1, sizeof(*map));
	if (!map)
		return NULL;
	map->pid = pid;
	map->by_host_tid = strmap_new();
	if (!map->by_host_tid) {
		free(map);
		return NULL;
	}
	return map;
}

void ns_tids_free(struct ns_tids *map)
{
	if (!map)
		return;
	strmap_free(map->by_host_tid, NULL);
	free(map);
}

pid_t ns_tids_lookup(struct ns_tids *map, pid_t host_tid)
{
	struct proc_status st;
	char key[16];
	int len = snprintf(key, sizeof(key), "%d", host_tid), inserted;
	void **slot = strmap_slot(map->by_host_tid, key, (size_t)len, &inserted);
	pid_t ns_tid;

	if (slot && *slot)
		return (pid_t)((intptr_t)*slot - 1);
	ns_tid = proc_status_read_task(map->pid, host_tid, &st) ? -1 : proc_status_ns_tid(&st);
	/* Remember only answers: a thread that could not be read yet (or is
	 * gone) is tried again. */
	if (slot && ns_tid > 0)
		*slot = (void *)((intptr_t)ns_tid + 1);
	return ns_tid;
}
