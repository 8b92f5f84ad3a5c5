/* jfr_out.c - see jfr_out.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/log.h"
#include "output/jfr/jfr_out.h"

struct jfr_out {
	char *path;
	char *tmp_path;
	int fd;
	gzFile gz;
	int error;                  /* first -errno seen; later writes are no-ops */
	unsigned long long bytes;
};

struct jfr_out *jfr_out_open(const char *path, int gzip)
{
	struct jfr_out *out = calloc(1, sizeof(*out));
	int err;

	if (!out || !(out->path = strdup(path)) ||
	    asprintf(&out->tmp_path, "%s.tmp", path) < 0) {
		err = ENOMEM;
		sp_err("create %s: %s", path, strerror(err));
		goto fail;
	}
	out->fd = open(out->tmp_path, O_WRONLY | O_CREAT | O_CLOEXEC | O_TRUNC, 0644);
	if (out->fd < 0) {
		err = errno;
		sp_err("create %s: %s", out->tmp_path, strerror(err));
		goto fail;
	}
	if (gzip) {
		out->gz = gzdopen(out->fd, "wb6");
		if (!out->gz) {
			err = errno ? errno : ENOMEM;
			sp_err("gzip %s: %s", out->tmp_path, strerror(err));
			close(out->fd);
			unlink(out->tmp_path);
			goto fail;
		}
	}
	return out;
fail:
	if (out) {
		free(out->path);
		free(out->tmp_path);
		free(out);
	}
	errno = err;
	return NULL;
}

static void report(struct jfr_out *out, const char *what, int err)
{
	if (out->error)
		return;
	out->error = -err;
	sp_err("%s %s: %s", what, out->tmp_path, strerror(err));
}

int jfr_out_write(struct jfr_out *out, const void *p, size_t n)
{
	const char *s = p;

	if (out->error)
		return out->error;
	out->bytes += n;
	if (out->gz) {
		while (n) {
			/* gzwrite takes an unsigned count. */
			unsigned part = n > (1u << 30) ? 1u << 30 : (unsigned)n;
			int done = gzwrite(out->gz, s, part);

			if (done <= 0) {
				int zerr;
				const char *msg = gzerror(out->gz, &zerr);

				if (zerr == Z_ERRNO) {
					report(out, "write", errno ? errno : EIO);
				} else if (!out->error) {
					out->error = -EIO;
					sp_err("write %s: zlib: %s", out->tmp_path, msg);
				}
				return out->error;
			}
			s += done;
			n -= done;
		}
		return 0;
	}
	while (n) {
		ssize_t done = write(out->fd, s, n);

		if (done < 0) {
			if (errno == EINTR)
				continue;
			report(out, "write", errno);
			return out->error;
		}
		s += done;
		n -= done;
	}
	return 0;
}

int jfr_out_close(struct jfr_out *out, int discard)
{
	int ret;

	if (out->gz) {
		int zret = gzclose(out->gz);

		if (zret != Z_OK)
			report(out, "close", zret == Z_ERRNO && errno ? errno : EIO);
	} else {
		if (close(out->fd) < 0)
			report(out, "close", errno);
	}
	if (!out->error && !discard && rename(out->tmp_path, out->path) < 0) {
		int err = errno;

		out->error = -err;
		sp_err("rename %s to %s: %s", out->tmp_path, out->path, strerror(err));
	}
	if (out->error || discard)
		unlink(out->tmp_path);
	ret = out->error;
	free(out->path);
	free(out->tmp_path);
	free(out);
	return ret;
}

