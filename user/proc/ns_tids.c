/* ns_tids.c - see ns_tids.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strmap.h"
#include "proc/ns_tids.h"

struct ns_tids {
	pid_t pid;
	struct strmap *by_host_tid; /* decimal host tid -> (intptr_t) ns tid + 1 */
};

pid_t ns_tids_parse_status(const char *buf, size_t len, bool want_tgid)
{
	const char *key = want_tgid ? "NStgid:" : "NSpid:";
	size_t key_len = strlen(key);
	size_t pos = 0;

	while (pos < len) {
		const char *line = buf + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - line) : len - pos;

		pos += line_len + 1;
		if (line_len < key_len || memcmp(line, key, key_len))
			continue;
		/* Fields: one id per namespace level, the process's own last. */
		long last = -1;
		size_t i = key_len;

		while (i < line_len) {
			long value = 0;
			size_t digits = 0;

			while (i < line_len && (line[i] == ' ' || line[i] == '\t'))
				i++;
			while (i < line_len && line[i] >= '0' && line[i] <= '9' && digits < 10) {
				value = value * 10 + (line[i] - '0');
				i++;
				digits++;
			}
			if (i < line_len && line[i] != ' ' && line[i] != '\t')
				return -1; /* not a number, or an absurdly long one */
			if (digits)
				last = value;
		}
		return last > 0 && last <= 0x7fffffff ? (pid_t)last : -1;
	}
	return -1;
}

static pid_t read_ns_id(const char *path, bool want_tgid)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 ? ns_tids_parse_status(buf, (size_t)n, want_tgid) : -1;
}

struct ns_tids *ns_tids_new(pid_t pid)
{
	char path[64];
	struct ns_tids *map;
	pid_t ns_pid;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	ns_pid = read_ns_id(path, true);
	if (ns_pid < 0 || ns_pid == pid)
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
	char key[16], path[80];
	int len = snprintf(key, sizeof(key), "%d", host_tid), inserted;
	void **slot = strmap_slot(map->by_host_tid, key, (size_t)len, &inserted);
	pid_t ns_tid;

	if (slot && *slot)
		return (pid_t)((intptr_t)*slot - 1);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", map->pid, host_tid);
	ns_tid = read_ns_id(path, false);
	/* Remember only answers: a thread that could not be read yet (or is
	 * gone) is tried again. */
	if (slot && ns_tid > 0)
		*slot = (void *)((intptr_t)ns_tid + 1);
	return ns_tid;
}
