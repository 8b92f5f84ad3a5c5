/* perf_map_writer.c - atomic rewrites of the perf map (see perf_map_writer.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "code_table.h"
#include "diag.h"
#include "perf_map_writer.h"
#include "publish.h"
#include "sparkprof_helper_log.h"

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= n;
	}
	return 0;
}

int perf_map_write(struct publisher *pub, const struct code_table *code, uint64_t *generation)
{
	char *buf = NULL;
	pthread_mutex_lock(&pub->lock);
	uint64_t gen = code->generation;
	long len = gen == *generation ? 0 : code_table_render_map(code, &buf);
	pthread_mutex_unlock(&pub->lock);
	if (gen == *generation)
		return 0;
	if (len < 0)
		return -ENOMEM;

	char path[64], tmp[96];
	int pid = (int)getpid();
	snprintf(path, sizeof(path), SPARKPROF_HELPER_MAP_FMT, pid);
	/* One temporary name per writing thread: the worker and VMDeath may
	 * both write at exit. */
	snprintf(tmp, sizeof(tmp), "/tmp/.perf-%d.map.%ld.tmp", pid, (long)syscall(SYS_gettid));
	int fd = create_exclusive(tmp, 0644);
	int err = fd < 0 ? fd : write_all(fd, buf, (size_t)len);
	free(buf);
	if (fd >= 0 && close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err) {
		if (fd >= 0)
			unlink(tmp);
		static int said;
		if (!said++)
			agent_say("cannot update %s: %s", path, strerror(-err));
		return err;
	}
	*generation = gen;
	return 0;
}
