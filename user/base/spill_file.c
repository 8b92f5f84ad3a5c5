/* spill_file.c - see spill_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/spill_file.h"

struct spill_file {
	char *dir;
	const char *what;
	atomic_int read_said; /* a failed read was reported (once: reads are many) */
	int fd;
	uint64_t end;
};

struct spill_file *spill_file_new(const char *dir, const char *what)
{
	struct spill_file *s = calloc(1, sizeof(*s));

	if (!s || !(s->dir = strdup(dir))) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->fd = -1;
	s->what = what;
	return s;
}

void spill_file_free(struct spill_file *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->dir);
	free(s);
}

static int open_file(struct spill_file *s)
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
		sp_err("saving %s in %s: %s", s->what, s->dir, strerror(-err));
		return err;
	}
	return 0;
}

/* Writes len bytes at offset: 0, or -errno after an sp_err line. */
static int write_at(struct spill_file *s, const void *data, size_t len, uint64_t offset)
{
	ssize_t w = pwrite(s->fd, data, len, (off_t)offset);
	int err;

	if (w == (ssize_t)len)
		return 0;
	err = w < 0 ? -errno : -ENOSPC;
	sp_err("saving %s in %s: %s", s->what, s->dir, strerror(-err));
	return err;
}

int spill_file_put(struct spill_file *s, const void *data, size_t len, struct spill_ref *ref)
{
	int err = open_file(s);

	if (err)
		return err;
	if ((err = write_at(s, data, len, s->end)))
		return err;
	*ref = (struct spill_ref){ s->end, len };
	s->end += len;
	return 0;
}

/* Each hole splits the file's extents, and the file system frees a file
 * of many extents slowly: with 50,000 holes in 2 GiB, closing it took
 * 3.4 s (0.5 s without).  The room worth giving back is in large blobs,
 * so smaller ones keep theirs. */
#define DISCARD_MIN_BYTES (256u << 10)

void spill_file_discard(struct spill_file *s, const struct spill_ref *ref)
{
	uint64_t page = 4096, from = (ref->offset + page - 1) & ~(page - 1);
	uint64_t to = (ref->offset + ref->bytes) & ~(page - 1);

	/* Only the pages wholly inside the blob: its neighbours live on. */
	if (s->fd >= 0 && ref->bytes >= DISCARD_MIN_BYTES && to > from)
		(void)fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from,
				(off_t)(to - from));
}

int spill_file_get(struct spill_file *s, const struct spill_ref *ref, void **data)
{
	ssize_t r;

	*data = NULL;
	if (!ref->bytes)
		return 0;
	if (s->fd < 0)
		return -EBADF;
	if (!(*data = malloc(ref->bytes))) {
		sp_err("reading %s back from %s: %s", s->what, s->dir, strerror(ENOMEM));
		return -ENOMEM;
	}
	r = pread(s->fd, *data, ref->bytes, (off_t)ref->offset);
	if (r != (ssize_t)ref->bytes) {
		int err = r < 0 ? -errno : -EIO;

		sp_err("reading %s back from %s: %s", s->what, s->dir, strerror(-err));
		free(*data);
		*data = NULL;
		return err;
	}
	return 0;
}

static long read_at(struct spill_file *s, uint64_t offset, void *buf, size_t len)
{
	ssize_t r = s->fd >= 0 ? pread(s->fd, buf, len, (off_t)offset) : -1;

	if (r < 0) {
		int err = s->fd >= 0 ? -errno : -EBADF;

		if (!atomic_fetch_add(&s->read_said, 1))
			sp_err("reading %s back from %s: %s", s->what, s->dir, strerror(-err));
		return err;
	}
	return (long)r;
}

const char *spill_file_read_text(struct spill_file *s, uint64_t offset, uint64_t left,
				 char *buf, size_t cap)
{
	long n = read_at(s, offset, buf, left < cap ? (size_t)left : cap);

	return n > 0 && memchr(buf, '\0', (size_t)n) ? buf : NULL;
}
