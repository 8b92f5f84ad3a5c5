/* atomic_file.c - see atomic_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/log.h"

#define WRITE_BUFFER_BYTES (256u << 10)

/* The stream's writes, keeping the first error's errno for the message. */
static ssize_t write_through(void *cookie, const char *buf, size_t size)
{
	struct atomic_file *af = cookie;
	size_t done = 0;

	while (done < size) {
		ssize_t n = write(af->fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!af->write_errno)
				af->write_errno = n < 0 ? errno : ENOSPC;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)size;
}

FILE *atomic_file_open(struct atomic_file *af, const char *path)
{
	af->file = NULL;
	if ((size_t)snprintf(af->path, sizeof(af->path), "%s", path) >= sizeof(af->path) ||
	    (size_t)snprintf(af->tmp, sizeof(af->tmp), "%s.tmp", path) >= sizeof(af->tmp)) {
		sp_err("write %s: path too long", path);
		errno = ENAMETOOLONG;
		return NULL;
	}
	af->write_errno = 0;
	af->fd = open(af->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (af->fd < 0) {
		sp_err("create %s: %s", af->tmp, strerror(errno));
		return NULL;
	}
	af->file = fopencookie(af, "w", (cookie_io_functions_t){ .write = write_through });
	/* A cookie stream's buffer is 8 KiB, and a line longer than what is
	 * left of it (a deep Java stack's is longer) is a write() of its
	 * own: a stop writing hundreds of MB made one per line. */
	if (af->file)
		setvbuf(af->file, NULL, _IOFBF, WRITE_BUFFER_BYTES);
	if (!af->file) {
		int err = errno;

		sp_err("create %s: %s", af->tmp, strerror(err));
		close(af->fd);
		unlink(af->tmp);
		errno = err;
	}
	return af->file;
}

void atomic_file_discard(struct atomic_file *af)
{
	fclose(af->file);
	close(af->fd);
	af->file = NULL;
	unlink(af->tmp);
}

int atomic_file_commit(struct atomic_file *af, int err)
{
	/* A caller's -EIO is a stream write that failed: give its cause. */
	if (err == -EIO && af->write_errno)
		err = -af->write_errno;
	if (fflush(af->file) && !err)
		err = -(af->write_errno ? af->write_errno : EIO);
	if (ferror(af->file) && !err)
		err = -(af->write_errno ? af->write_errno : EIO);
	fclose(af->file);
	if (close(af->fd) && !err)
		err = -errno;
	af->file = NULL;
	if (!err && rename(af->tmp, af->path))
		err = -errno;
	if (err) {
		sp_err("write %s: %s", af->path, strerror(-err));
		unlink(af->tmp);
	}
	return err;
}

