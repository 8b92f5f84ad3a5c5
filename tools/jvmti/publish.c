/* publish.c - safe file creation and the append-only log. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "publish.h"
#include "sparkprof_helper_log.h"

int create_exclusive(const char *path, int mode)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		/* Read access too: a new log restates records of the old one. */
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0) {
			/* The umask may have cleared bits we want readers to have. */
			if (fchmod(fd, mode) < 0) {
				int e = errno;
				close(fd);
				return -e;
			}
			return fd;
		}
		if (errno != EEXIST || attempt > 0)
			return -errno;
		/* A stale file of an earlier process with our pid, or something
		 * planted: remove the directory entry, never what it points to. */
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
	}
	return -EEXIST;
}

int create_log_file(const char *path)
{
	int fd = create_exclusive(path, 0600);
	int flags = fd < 0 ? 0 : fcntl(fd, F_GETFL);

	if (fd < 0)
		return fd;
	/* Appends must be atomic with respect to each other. */
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_APPEND) < 0) {
		int e = errno;
		close(fd);
		unlink(path);
		return -e;
	}
	return fd;
}

void publisher_open(struct publisher *pub, int pid)
{
	char path[64];
	snprintf(path, sizeof(path), SPARKPROF_HELPER_LOG_FMT, pid);
	pub->next_code_id = 1;
	pub->failed = 0;
	pub->size = 0;
	pub->pid = pid;
	pub->fd = create_log_file(path);
	if (pub->fd < 0) {
		agent_say("cannot create %s: %s; publishing nothing", path, strerror(-pub->fd));
		pub->fd = -1;
	}
}

void publisher_unlink(struct publisher *pub)
{
	char path[64];
	struct stat ours, named;

	snprintf(path, sizeof(path), SPARKPROF_HELPER_LOG_FMT, pub->pid);
	if (pub->fd >= 0 && fstat(pub->fd, &ours) == 0 && lstat(path, &named) == 0 &&
	    ours.st_ino == named.st_ino && ours.st_dev == named.st_dev)
		unlink(path);
}

void publisher_write(struct publisher *pub, const char *buf, size_t len)
{
	if (pub->fd < 0 || len == 0)
		return;
	ssize_t n;
	do
		n = write(pub->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len) {
		pub->size += len;
		return;
	}
	/* A short write leaves a partial line that readers would join with the
	 * next record; stop publishing rather than corrupt the log. */
	if (!pub->failed)
		agent_say("writing the log failed (%s); publishing stopped",
			  n < 0 ? strerror(errno) : "short write");
	pub->failed = 1;
	close(pub->fd);
	pub->fd = -1;
}

int publisher_header(const struct publisher *pub, const char *mode, char *line, size_t len)
{
	int n = snprintf(line, len, "H %d %d %" PRIu64 " %s %s\n", SPARKPROF_HELPER_LOG_VERSION,
			 pub->pid, agent_now_ns(), mode, pub->jvm);

	return n < 0 ? 0 : (size_t)n < len ? n : (int)len - 1;
}

size_t escape_name(char *dst, size_t dstlen, const char *name)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	if (dstlen == 0)
		return 0;
	for (const unsigned char *p = (const unsigned char *)name; p && *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\') {
			if (o + 4 >= dstlen)
				break;
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[*p >> 4];
			dst[o++] = hex[*p & 15];
		} else {
			if (o + 1 >= dstlen)
				break;
			dst[o++] = *p;
		}
	}
	dst[o] = 0;
	return o;
}
