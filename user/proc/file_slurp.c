/* file_slurp.c - see file_slurp.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "proc/file_slurp.h"

char *file_slurp(const char *path, size_t max_len, size_t *len)
{
	size_t cap = 64 * 1024, used = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO: no hang */
	char *buf;
	int saved;

	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	if (!buf) {
		saved = ENOMEM;
		goto fail;
	}
	for (;;) {
		ssize_t n;

		if (used + 1 >= cap) {
			char *nbuf;

			if (cap > max_len) {
				saved = EFBIG;
				goto fail;
			}
			nbuf = realloc(buf, cap * 2);
			if (!nbuf) {
				saved = ENOMEM;
				goto fail;
			}
			buf = nbuf;
			cap *= 2;
		}
		n = read(fd, buf + used, cap - used - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			saved = errno;
			goto fail;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	if (used > max_len) {
		free(buf);
		errno = EFBIG;
		return NULL;
	}
	buf[used] = '\0';
	*len = used;
	return buf;
fail:
	free(buf);
	close(fd);
	errno = saved;
	return NULL;
}

int fd_read_prefix(int fd, size_t max, char **bufp, size_t *lenp)
{
	size_t cap = max < 16384 ? max : 16384, len = 0;
	char *buf = malloc(cap ? cap : 1);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *bigger;

			if (cap >= max)
				break;
			cap = cap * 2 < max ? cap * 2 : max;
			bigger = realloc(buf, cap);
			if (!bigger) {
				err = -ENOMEM;
				break;
			}
			buf = bigger;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (err) {
		free(buf);
		return err;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

int file_read_prefix(const char *path, size_t max, char **bufp, size_t *lenp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO: no hang */
	int err;

	if (fd < 0)
		return -errno;
	err = fd_read_prefix(fd, max, bufp, lenp);
	close(fd);
	return err;
}
