/* store_file.c - see store_file.h.
 *
 * Header: "SPSTORE1", then varints (version, flags, start times, periods,
 * frequency) and the host. Segment: "SEG1", a varint length, the head as
 * varints, then its parts' zlib streams one after the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/grow_array.h"
#include "base/log.h"
#include "output/store_file.h"

#define FILE_MAGIC "SPSTORE1"
#define SEGMENT_MAGIC "SEG1"
#define VERSION 1
#define HEAD_MAX 256
#define HEADER_MAX 1024
#define STREAM_CHUNK (16u << 10)
#define SEGMENTS_MAX (1u << 24)

struct store_reader {
	int fd;
	char *path;
	uint64_t size;
	struct store_info info;
	struct store_segment_head *heads;
	size_t nheads, cap;
};

struct store_stream {
	struct store_reader *r;
	z_stream z;
	uint64_t offset, left;       /* compressed bytes still in the file */
	uint64_t out_left;           /* uncompressed bytes still to come */
	uint8_t in[STREAM_CHUNK];
	uint8_t out[STREAM_CHUNK];
	size_t out_pos, out_len;
	bool ended, failed;
};

static int write_all(int fd, const void *p, size_t n, const char *path)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int err = w < 0 ? -errno : -EIO;

			sp_err("write %s: %s", path, strerror(-err));
			return err;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

int store_file_create(const char *path, const struct store_info *info, int *fd)
{
	struct byte_buf b = { 0 };
	size_t host = strnlen(info->host, sizeof(info->host) - 1);
	int err;

	*fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (*fd < 0) {
		err = -errno;
		sp_err("create %s: %s", path, strerror(-err));
		return err;
	}
	byte_buf_bytes(&b, FILE_MAGIC, 8);
	byte_buf_varint(&b, VERSION);
	byte_buf_varint(&b, info->flags);
	byte_buf_varint(&b, info->start_monotonic_ns);
	byte_buf_varint(&b, info->start_realtime_ns);
	byte_buf_varint(&b, info->cpu_period_ns);
	byte_buf_varint(&b, info->wall_interval_ns);
	byte_buf_varint(&b, info->frequency_hz);
	byte_buf_str(&b, info->host, host);
	err = b.failed ? -ENOMEM : write_all(*fd, b.data, b.len, path);
	byte_buf_free(&b);
	if (err) {
		close(*fd);
		*fd = -1;
	}
	return err;
}

/* part compressed into z (deflate, fast: a segment closes while recording). */
static int deflate_part(const struct byte_buf *part, struct byte_buf *z)
{
	uLongf zlen = compressBound(part->len);
	void *data = z->data;

	byte_buf_clear(z);
	if (part->failed || grow_array(&data, &z->cap, zlen, 1))
		return -ENOMEM;
	z->data = data;
	if (compress2(z->data, &zlen, part->data ? part->data : (const Bytef *)"", part->len,
		      1) != Z_OK)
		return -ENOMEM;
	z->len = zlen;
	return 0;
}

static void head_bytes(struct byte_buf *h, uint32_t seq, uint64_t first_ns, uint64_t last_ns,
		       uint32_t labels, uint32_t samples, const struct byte_buf parts[],
		       const struct byte_buf z[])
{
	byte_buf_varint(h, seq);
	byte_buf_varint(h, first_ns);
	byte_buf_varint(h, last_ns);
	byte_buf_varint(h, labels);
	byte_buf_varint(h, samples);
	for (int i = 0; i < STORE_PARTS; i++) {
		byte_buf_varint(h, parts[i].len);
		byte_buf_varint(h, z[i].len);
	}
}

int store_file_append(int fd, const char *path, uint32_t seq, uint64_t first_ns,
		      uint64_t last_ns, uint32_t labels, uint32_t samples,
		      const struct byte_buf parts[STORE_PARTS])
{
	struct byte_buf z[STORE_PARTS] = { 0 }, h = { 0 };
	off_t end = lseek(fd, 0, SEEK_END);
	uint8_t len;
	int err = end < 0 ? -errno : 0;

	if (err)
		sp_err("append to %s: %s", path, strerror(-err));
	for (int i = 0; !err && i < STORE_PARTS; i++)
		if (parts[i].len > STORE_PART_MAX || deflate_part(&parts[i], &z[i]))
			err = -ENOMEM;
	if (!err) {
		head_bytes(&h, seq, first_ns, last_ns, labels, samples, parts, z);
		len = (uint8_t)h.len;   /* a head is under 128 bytes: one varint byte */
		err = h.failed ? -ENOMEM : write_all(fd, SEGMENT_MAGIC, 4, path);
	}
	if (err == -ENOMEM)
		sp_err("compress a segment for %s: %s", path, strerror(ENOMEM));
	if (!err)
		err = write_all(fd, &len, 1, path);
	if (!err)
		err = write_all(fd, h.data, h.len, path);
	for (int i = 0; !err && i < STORE_PARTS; i++)
		err = write_all(fd, z[i].data, z[i].len, path);
	/* A segment is there whole or not at all. */
	if (err && end >= 0 && ftruncate(fd, end))
		sp_err("cut %s back to its last whole segment: %s", path, strerror(errno));
	for (int i = 0; i < STORE_PARTS; i++)
		byte_buf_free(&z[i]);
	byte_buf_free(&h);
	return err;
}

static int read_at(const struct store_reader *r, void *out, size_t n, uint64_t offset)
{
	uint8_t *b = out;

	while (n) {
		ssize_t got = pread(r->fd, b, n, (off_t)offset);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EINVAL;
		b += got;
		n -= (size_t)got;
		offset += (uint64_t)got;
	}
	return 0;
}

static int parse_header(struct store_reader *r, uint64_t *offset)
{
	uint8_t buf[HEADER_MAX];
	size_t n = r->size < sizeof(buf) ? (size_t)r->size : sizeof(buf);
	struct byte_reader br;
	const char *host;
	size_t host_len;

	if (n < 8 || read_at(r, buf, n, 0) || memcmp(buf, FILE_MAGIC, 8))
		return -EINVAL;
	br = byte_reader_of(buf + 8, n - 8);
	if (byte_reader_varint(&br) != VERSION)
		return -EPROTONOSUPPORT;
	r->info.flags = (uint32_t)byte_reader_bounded(&br, UINT32_MAX);
	r->info.start_monotonic_ns = byte_reader_varint(&br);
	r->info.start_realtime_ns = byte_reader_varint(&br);
	r->info.cpu_period_ns = byte_reader_varint(&br);
	r->info.wall_interval_ns = byte_reader_varint(&br);
	r->info.frequency_hz = (uint32_t)byte_reader_bounded(&br, UINT32_MAX);
	host = byte_reader_str(&br, sizeof(r->info.host) - 1, &host_len);
	if (br.failed || !r->info.cpu_period_ns)
		return -EINVAL;
	memcpy(r->info.host, host, host_len);
	r->info.host[host_len] = '\0';
	*offset = 8 + (uint64_t)(br.p - (buf + 8));
	return 0;
}

/* Whether the file is zeros from offset to its end: what a crash can
 * leave where a segment's blocks were not written yet. */
static bool zeros_to_end(const struct store_reader *r, uint64_t offset)
{
	uint8_t buf[16384];

	while (offset < r->size) {
		size_t n = r->size - offset < sizeof(buf) ? (size_t)(r->size - offset) : sizeof(buf);

		if (read_at(r, buf, n, offset))
			return false;
		for (size_t i = 0; i < n; i++)
			if (buf[i])
				return false;
		offset += n;
	}
	return true;
}

/* The head at *offset; 1 at the file's end; -ENODATA for a segment the
 * file ends in (a recording that did not end, or one still writing),
 * -EBADMSG for a damaged head, -errno of a read. */
static int parse_head(struct store_reader *r, uint64_t *offset, struct store_segment_head *h)
{
	uint8_t buf[5 + HEAD_MAX];
	uint64_t at;
	struct byte_reader br;
	int err;

	if (*offset == r->size)
		return 1;
	if (r->size - *offset < 5)
		return -ENODATA;
	/* read_at's -EINVAL: the file is shorter than it was (cut back). */
	if ((err = read_at(r, buf, 5, *offset)))
		return err == -EINVAL ? -ENODATA : err;
	if (memcmp(buf, SEGMENT_MAGIC, 4) || buf[4] >= 128)
		return zeros_to_end(r, *offset) ? -ENODATA : -EBADMSG;
	if (r->size - *offset - 5 < buf[4])
		return -ENODATA;
	if ((err = read_at(r, buf + 5, buf[4], *offset + 5)))
		return err == -EINVAL ? -ENODATA : err;
	br = byte_reader_of(buf + 5, buf[4]);
	h->seq = (uint32_t)byte_reader_bounded(&br, UINT32_MAX);
	h->first_ns = byte_reader_varint(&br);
	h->last_ns = byte_reader_varint(&br);
	h->labels = (uint32_t)byte_reader_bounded(&br, UINT32_MAX);
	h->samples = (uint32_t)byte_reader_bounded(&br, UINT32_MAX);
	at = *offset + 5 + buf[4];
	for (int i = 0; i < STORE_PARTS; i++) {
		h->part_len[i] = byte_reader_bounded(&br, STORE_PART_MAX);
		h->part_zlen[i] = byte_reader_varint(&br);
		h->part_offset[i] = at;
		if (br.failed)
			return -EBADMSG;
		if (r->size - at < h->part_zlen[i])
			return -ENODATA;
		at += h->part_zlen[i];
	}
	if (br.p != br.end || h->last_ns < h->first_ns)
		return -EBADMSG;
	*offset = at;
	return 0;
}

static int scan(struct store_reader *r)
{
	uint64_t offset;
	int err = parse_header(r, &offset);

	if (err)
		return err;
	for (;;) {
		struct store_segment_head h;
		void *heads = r->heads;

		err = parse_head(r, &offset, &h);
		if (err)
			break;
		if (r->nheads == SEGMENTS_MAX ||
		    grow_array(&heads, &r->cap, r->nheads + 1, sizeof(h)))
			return -ENOMEM;
		r->heads = heads;
		r->heads[r->nheads++] = h;
	}
	if (err == -ENODATA)
		sp_warn("%s: cut off after its segment %zu (a recording that did not end): "
			"what follows is left out", r->path, r->nheads);
	return err == -ENODATA || err == 1 ? 0 : err;
}

struct store_reader *store_reader_open_fd(int fd, const char *name)
{
	struct store_reader *r = calloc(1, sizeof(*r));
	struct stat st;
	int err = 0;

	if (!r || !(r->path = strdup(name))) {
		err = -ENOMEM;
	} else {
		r->fd = fd;
		if (fstat(fd, &st))
			err = -errno;
		else
			r->size = (uint64_t)st.st_size;
	}
	if (!err)
		err = scan(r);
	if (err) {
		if (err == -EBADMSG)
			sp_err("read segment %zu of %s: its head is damaged", r->nheads, name);
		else
			sp_err("read %s: %s", name, err == -EINVAL ? "not a sparkprof sample store"
			       : err == -EPROTONOSUPPORT ? "written by another version of sparkprof"
			       : strerror(-err));
		if (r)
			r->fd = fd;
		store_reader_close(r);
		if (!r)
			close(fd);
		errno = -err;
		return NULL;
	}
	return r;
}

struct store_reader *store_reader_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		int err = fd < 0 ? errno : S_ISREG(st.st_mode) ? errno : EINVAL;

		sp_err("open %s: %s", path, err == EINVAL ? "not a regular file" : strerror(err));
		if (fd >= 0)
			close(fd);
		errno = err;
		return NULL;
	}
	return store_reader_open_fd(fd, path);
}

void store_reader_close(struct store_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->heads);
	free(r->path);
	free(r);
}

const struct store_info *store_reader_info(const struct store_reader *r)
{
	return &r->info;
}

size_t store_reader_segments(const struct store_reader *r)
{
	return r->nheads;
}

const struct store_segment_head *store_reader_head(const struct store_reader *r, size_t i)
{
	return &r->heads[i];
}

const char *store_reader_path(const struct store_reader *r)
{
	return r->path;
}

int store_reader_part(struct store_reader *r, size_t i, enum store_part part, void **data,
		      size_t *len)
{
	const struct store_segment_head *h = &r->heads[i];
	uint8_t *z = malloc(h->part_zlen[part] ? h->part_zlen[part] : 1);
	uint8_t *out = malloc(h->part_len[part] ? h->part_len[part] : 1);
	uLongf out_len = h->part_len[part];
	int err = z && out ? 0 : -ENOMEM;

	if (!err)
		err = read_at(r, z, h->part_zlen[part], h->part_offset[part]);
	if (!err && (uncompress(out, &out_len, z, h->part_zlen[part]) != Z_OK ||
		     out_len != h->part_len[part]))
		err = -EINVAL;
	free(z);
	if (err) {
		sp_err("read segment %zu of %s: %s", i, r->path,
		       err == -EINVAL ? "its data is damaged" : strerror(-err));
		free(out);
		return err;
	}
	*data = out;
	*len = out_len;
	return 0;
}

struct store_stream *store_stream_open(struct store_reader *r, size_t i, enum store_part part)
{
	struct store_stream *s = calloc(1, sizeof(*s));

	if (!s || inflateInit(&s->z) != Z_OK) {
		sp_err("read %s: %s", r->path, strerror(ENOMEM));
		free(s);
		return NULL;
	}
	s->r = r;
	s->offset = r->heads[i].part_offset[part];
	s->left = r->heads[i].part_zlen[part];
	s->out_left = r->heads[i].part_len[part];
	return s;
}

void store_stream_close(struct store_stream *s)
{
	if (!s)
		return;
	inflateEnd(&s->z);
	free(s);
}

/* Fills s->out with the next uncompressed bytes. 0, or -EINVAL/-errno. */
static int refill(struct store_stream *s)
{
	s->z.next_out = s->out;
	s->z.avail_out = sizeof(s->out);
	while (s->z.avail_out == sizeof(s->out) && !s->ended) {
		if (!s->z.avail_in && s->left) {
			size_t n = s->left < sizeof(s->in) ? (size_t)s->left : sizeof(s->in);
			int err = read_at(s->r, s->in, n, s->offset);

			if (err)
				return err;
			s->offset += n;
			s->left -= n;
			s->z.next_in = s->in;
			s->z.avail_in = (uInt)n;
		}
		int rc = inflate(&s->z, Z_NO_FLUSH);

		if (rc == Z_STREAM_END)
			s->ended = true;
		else if (rc != Z_OK || (!s->z.avail_in && !s->left && s->z.avail_out))
			return -EINVAL;
	}
	s->out_pos = 0;
	s->out_len = sizeof(s->out) - s->z.avail_out;
	if (s->out_len > s->out_left)
		return -EINVAL;
	s->out_left -= s->out_len;
	return s->ended && s->out_left ? -EINVAL : 0;
}

long store_stream_read(struct store_stream *s, void *out, size_t n)
{
	size_t done = 0;

	while (done < n && !s->failed) {
		if (s->out_pos == s->out_len) {
			int err;

			if (s->ended && !s->out_left)
				break;
			err = refill(s);
			if (err || !s->out_len) {
				s->failed = true;
				sp_err("read %s: %s", s->r->path,
				       err && err != -EINVAL ? strerror(-err) : "a segment is damaged");
				return err ? err : -EINVAL;
			}
		}
		size_t take = s->out_len - s->out_pos < n - done ? s->out_len - s->out_pos : n - done;

		memcpy((uint8_t *)out + done, s->out + s->out_pos, take);
		s->out_pos += take;
		done += take;
	}
	return s->failed ? -EINVAL : (long)done;
}

uint8_t store_stream_u8(struct store_stream *s, bool *failed)
{
	uint8_t b = 0;

	if (s->out_pos < s->out_len)
		return s->out[s->out_pos++];
	if (store_stream_read(s, &b, 1) != 1)
		*failed = true;
	return b;
}

uint64_t store_stream_varint(struct store_stream *s, bool *failed)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64 && !*failed; shift += 7) {
		uint8_t b = store_stream_u8(s, failed);

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return *failed ? 0 : v;
	}
	*failed = true;
	return 0;
}
