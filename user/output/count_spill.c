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

/* Records go through a buffer of this many: a parked profile is written
 * and read back in a few system calls. */
#define SPILL_BATCH 4096

struct spill_record {
	uint32_t id;
	uint32_t count_lo, count_hi;  /* no padding: 12 bytes on disk */
};

struct count_spill {
	char *dir;
	int fd;
	uint64_t end;
	struct spill_record *buf;
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
	free(s->buf);
	free(s->dir);
	free(s);
}

static int open_file(struct count_spill *s)
{
	char path[PATH_MAX];
	int err;

	if (s->fd >= 0)
		return 0;
	if (!s->buf && !(s->buf = malloc(SPILL_BATCH * sizeof(*s->buf))))
		return -ENOMEM;
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
		sp_err("parking finished outputs in %s: %s", s->dir, strerror(-err));
		return err;
	}
	return 0;
}

struct put_ctx {
	struct count_spill *s;
	size_t n;
	uint64_t at;
	int err;
};

static int flush(struct put_ctx *c)
{
	size_t bytes = c->n * sizeof(struct spill_record);
	ssize_t w = pwrite(c->s->fd, c->s->buf, bytes, (off_t)c->at);

	if (w != (ssize_t)bytes) {
		c->err = w < 0 ? -errno : -ENOSPC;
		return c->err;
	}
	c->at += bytes;
	c->n = 0;
	return 0;
}

static int put_one(uint32_t id, uint64_t count, void *ctx)
{
	struct put_ctx *c = ctx;

	c->s->buf[c->n++] = (struct spill_record){ id, (uint32_t)count, (uint32_t)(count >> 32) };
	return c->n == SPILL_BATCH ? flush(c) : 0;
}

int count_spill_put(struct count_spill *s, const struct folded_profile *profile,
		    struct count_spill_ref *ref)
{
	struct put_ctx c = { s, 0, s->end, 0 };
	int err = open_file(s);

	if (err)
		return err;
	if (!folded_profile_foreach_id(profile, put_one, &c) && c.n)
		flush(&c);
	if (c.err) {
		sp_err("parking finished outputs in %s: %s", s->dir, strerror(-c.err));
		return c.err;
	}
	ref->offset = s->end;
	ref->bytes = c.at - s->end;
	s->end = c.at;
	return 0;
}

int count_spill_get(struct count_spill *s, const struct count_spill_ref *ref,
		    struct folded_profile *profile)
{
	uint64_t done = 0, records = ref->bytes / sizeof(struct spill_record);
	int err = 0;

	if (!records)
		return 0;
	if (s->fd < 0 || !s->buf)
		return -EBADF;
	while (!err && done < records) {
		size_t n = records - done < SPILL_BATCH ? records - done : SPILL_BATCH;
		size_t bytes = n * sizeof(struct spill_record);
		ssize_t r = pread(s->fd, s->buf, bytes,
				  (off_t)(ref->offset + done * sizeof(struct spill_record)));

		if (r != (ssize_t)bytes) {
			err = r < 0 ? -errno : -EIO;
			break;
		}
		for (size_t i = 0; i < n && !err; i++)
			err = folded_profile_add_id(profile, s->buf[i].id,
						    (uint64_t)s->buf[i].count_hi << 32 |
							    s->buf[i].count_lo);
		done += n;
	}
	if (err)
		sp_err("bringing back parked counts from %s: %s", s->dir, strerror(-err));
	return err;
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
		sp_err("parking finished outputs in %s: %s", s->dir, strerror(-err));
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
	if (!(*data = malloc(ref->bytes)))
		return -ENOMEM;
	r = pread(s->fd, *data, ref->bytes, (off_t)ref->offset);
	if (r != (ssize_t)ref->bytes) {
		int err = r < 0 ? -errno : -EIO;

		sp_err("bringing back parked counts from %s: %s", s->dir, strerror(-err));
		free(*data);
		*data = NULL;
		return err;
	}
	return 0;
}
