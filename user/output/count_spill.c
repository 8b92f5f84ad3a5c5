/* count_spill.c - see count_spill.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "output/count_spill.h"

struct count_spill {
	char *dir;
	int fd;
	uint64_t end;
};

struct count_spill *count_spill_new(const char *dir)
{
	struct count_spill *s = calloc(1, sizeof(*s));

	if (!s || !(s->dir = strdup(dir))) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->fd = -1;
	return s;
}

void count_spill_free(struct count_spill *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->dir);
	free(s);
}

static int open_file(struct count_spill *s)
{
	char path[PATH_MAX];
	int err;

	if (s->fd >= 0)
		return 0;
	s->fd = open(s->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (s->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* No O_TMPFILE on this file system: a named file, unlinked. */
		snprintf(path, sizeof(path), "%s/.sparkprof-spill-XXXXXX", s->dir);
		s->fd = mkostemp(path, O_CLOEXEC);
		if (s->fd >= 0)
			unlink(path);
	}
	if (s->fd < 0) {
		err = -errno;
		sp_err("saving counts in %s: %s", s->dir, strerror(-err));
		return err;
	}
	return 0;
}

int count_spill_put_bytes(struct count_spill *s, const void *data, size_t len,
			  struct count_spill_ref *ref)
{
	int err = open_file(s);
	ssize_t w;

	if (err)
		return err;
	w = pwrite(s->fd, data, len, (off_t)s->end);
	if (w != (ssize_t)len) {
		err = w < 0 ? -errno : -ENOSPC;
		sp_err("saving counts in %s: %s", s->dir, strerror(-err));
		return err;
	}
	ref->offset = s->end;
	ref->bytes = len;
	s->end += len;
	return 0;
}

int count_spill_get_bytes(struct count_spill *s, const struct count_spill_ref *ref, void **data)
{
	ssize_t r;

	*data = NULL;
	if (!ref->bytes)
		return 0;
	if (s->fd < 0)
		return -EBADF;
	if (!(*data = malloc(ref->bytes))) {
		sp_err("reading saved counts back from %s: %s", s->dir, strerror(ENOMEM));
		return -ENOMEM;
	}
	r = pread(s->fd, *data, ref->bytes, (off_t)ref->offset);
	if (r != (ssize_t)ref->bytes) {
		int err = r < 0 ? -errno : -EIO;

		sp_err("reading saved counts back from %s: %s", s->dir, strerror(-err));
		free(*data);
		*data = NULL;
		return err;
	}
	return 0;
}

uint64_t count_spill_bytes(const struct count_spill *spill)
{
	return spill->end;
}
