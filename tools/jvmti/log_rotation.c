/* log_rotation.c - a new log file that restates the old one (see log_rotation.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "code_table.h"
#include "diag.h"
#include "log_rotation.h"
#include "method_ids.h"
#include "publish.h"
#include "sparkprof_helper_log.h"
#include "thread_names.h"

#define OUT_BUF (1u << 20)
#define IN_BUF (1u << 20)

/* The new file, written in large pieces: a rotation holds the publisher
 * lock, which the JIT's and renaming threads wait for. */
struct out {
	int fd;
	char *buf;
	size_t len;
	uint64_t size;   /* bytes in the file, buffered ones included */
	int err;         /* first errno */
};

static void out_flush(struct out *o)
{
	size_t done = 0;

	while (!o->err && done < o->len) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			o->err = n < 0 ? errno : EIO;
		else
			done += n;
	}
	o->len = 0;
}

static void out_put(struct out *o, const char *p, size_t n)
{
	while (n && !o->err) {
		size_t room = OUT_BUF - o->len, k = n < room ? n : room;

		memcpy(o->buf + o->len, p, k);
		o->len += k;
		o->size += k;
		p += k;
		n -= k;
		if (o->len == OUT_BUF)
			out_flush(o);
	}
}

/* The old file, read in windows: within each part of the snapshot the
 * spans come in file order, so one pread serves many of them (an
 * executor's snapshot is some 24,000 spans).  Read, not mapped: a file
 * that someone truncates must cost an error, not SIGBUS. */
struct old_file {
	int fd;
	uint64_t size;
	char *buf;       /* IN_BUF bytes */
	uint64_t at;     /* file offset of buf[0] */
	size_t len;      /* bytes read there */
};

/* Bytes [off, off + len) of the old file, len <= IN_BUF; NULL with *err set
 * when they cannot be read. */
static const char *old_bytes(struct old_file *f, uint64_t off, size_t len, int *err)
{
	if (off >= f->at && off + len <= f->at + f->len)
		return f->buf + (off - f->at);
	f->at = off;
	f->len = 0;
	while (f->len < len) {
		ssize_t n = pread(f->fd, f->buf + f->len, IN_BUF - f->len, (off_t)(off + f->len));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*err = n < 0 ? errno : EIO;
			f->len = 0;
			return NULL;
		}
		f->len += n;
	}
	return f->buf;
}

/* Copies span of the old file and returns its place in the new one; a
 * span outside the old file is left out. */
static struct log_span copy_span(struct out *o, struct old_file *f, struct log_span span)
{
	struct log_span moved = { o->size, span.len };
	uint64_t off = span.offset;
	size_t left = span.len;

	if (!span.len || span.offset > f->size || span.len > f->size - span.offset)
		return (struct log_span){ 0, 0 };
	while (left && !o->err) {
		size_t k = left < IN_BUF ? left : IN_BUF;
		const char *p = old_bytes(f, off, k, &o->err);

		if (!p)
			break;
		out_put(o, p, k);
		off += k;
		left -= k;
	}
	return moved;
}

static void put_threads(struct out *o, const struct thread_name_entry *threads, size_t n)
{
	char line[SPARKPROF_HELPER_MAX_LINE], esc[SPARKPROF_HELPER_MAX_LINE - 64];

	for (size_t i = 0; i < n; i++) {
		int k;

		if (!threads[i].name)
			continue;
		escape_name(esc, sizeof(esc), threads[i].name);
		k = snprintf(line, sizeof(line), "T %" PRIu64 " %d %s\n", agent_now_ns(),
			     (int)threads[i].tid, esc);
		out_put(o, line, (size_t)k < sizeof(line) ? (size_t)k : 0);
		if (threads[i].idle == 1) {
			k = snprintf(line, sizeof(line), "S %" PRIu64 " %d idle\n", agent_now_ns(),
				     (int)threads[i].tid);
			out_put(o, line, k);
		}
	}
}

static int by_id(const void *a, const void *b, void *ctx)
{
	const struct code_entry *v = ctx;
	uint64_t x = v[*(const size_t *)a].id, y = v[*(const size_t *)b].id;

	return x < y ? -1 : x > y;
}

/* The restated part, into o: numbers, threads, code in id order (readers
 * take ids in increasing order).  New spans go to name_spans and code_spans,
 * to be kept only if the whole rotation succeeds. */
static void put_snapshot(struct out *o, struct old_file *old, struct code_table *code,
			 const struct method_ids *ids, const struct thread_name_entry *threads,
			 size_t nthreads, struct log_span *name_spans, struct log_span *code_spans,
			 size_t *order)
{
	char line[64];

	for (size_t i = 0; i < method_ids_numbers(ids); i++)
		name_spans[i] = copy_span(o, old, ids->spans[i]);
	put_threads(o, threads, nthreads);
	for (size_t i = 0; i < code->n; i++)
		order[i] = i;
	qsort_r(order, code->n, sizeof(*order), by_id, code->v);
	for (size_t i = 0; i < code->n; i++)
		code_spans[order[i]] = copy_span(o, old, code->v[order[i]].span);
	out_put(o, line, snprintf(line, sizeof(line), "R %" PRIu64 " snapshot\n", agent_now_ns()));
	out_flush(o);
}

/* Writes the new file beside the log and renames it over the log; then
 * ends the old one with G.  -errno, with nothing changed, on failure. */
static int rotate(struct publisher *pub, struct code_table *code, struct method_ids *ids,
		  const struct thread_name_entry *threads, size_t nthreads)
{
	char path[64], tmp[64], line[256];
	size_t nnames = method_ids_numbers(ids);
	struct log_span *name_spans = malloc((nnames + 1) * sizeof(*name_spans));
	struct log_span *code_spans = malloc((code->n + 1) * sizeof(*code_spans));
	size_t *order = malloc((code->n + 1) * sizeof(*order));
	struct out o = { .fd = -1, .buf = malloc(OUT_BUF) };
	struct old_file old = { .fd = pub->fd, .size = pub->size, .buf = malloc(IN_BUF) };
	int err = 0;

	snprintf(path, sizeof(path), SPARKPROF_HELPER_LOG_FMT, pub->pid);
	snprintf(tmp, sizeof(tmp), "/tmp/.sparkprof-%d.log.tmp", pub->pid);
	if (!name_spans || !code_spans || !order || !o.buf || !old.buf)
		err = ENOMEM;
	else if ((o.fd = create_log_file(tmp)) < 0)
		err = -o.fd;
	if (!err) {
		out_put(&o, line, publisher_header(pub, "continued", line, sizeof(line)));
		put_snapshot(&o, &old, code, ids, threads, nthreads, name_spans,
			     code_spans, order);
		err = o.err;
		if (!err && rename(tmp, path) < 0)
			err = errno;
		if (err) {
			unlink(tmp);
			close(o.fd);
		}
	}
	if (!err) {
		/* Whoever follows the old file learns here that the path now
		 * holds the new one. */
		int n = snprintf(line, sizeof(line), "G %" PRIu64 "\n", agent_now_ns());

		if (write(pub->fd, line, n) != n)
			agent_say("could not end the old log (%s); its readers stop there",
				  strerror(errno));
		close(pub->fd);
		pub->fd = o.fd;
		pub->size = o.size;
		for (size_t i = 0; i < nnames; i++)
			ids->spans[i] = name_spans[i];
		for (size_t i = 0; i < code->n; i++)
			code->v[i].span = code_spans[i];
	}
	free(o.buf);
	free(old.buf);
	free(order);
	free(code_spans);
	free(name_spans);
	return -err;
}

int log_rotation_check(struct log_rotation *r, struct publisher *pub, struct code_table *code,
		       struct method_ids *ids, const struct thread_name_entry *threads,
		       size_t nthreads)
{
	uint64_t t0, took;
	int err;

	if (!r->limit || pub->fd < 0 || pub->size < r->limit || pub->size < r->next_at)
		return 0;
	t0 = agent_now_ns();
	err = rotate(pub, code, ids, threads, nthreads);
	took = agent_now_ns() - t0;
	if (took > r->longest_ns)
		r->longest_ns = took;
	if (err) {
		if (!r->said)
			agent_say("cannot start a new log (%s); the log goes on growing",
				  strerror(-err));
		r->said = 1;
		r->next_at = pub->size * 2;
		return err;
	}
	r->rotations++;
	r->next_at = pub->size * 2;
	return 0;
}
