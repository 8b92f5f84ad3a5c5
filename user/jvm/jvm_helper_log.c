/* jvm_helper_log.c - reads a JVM helper's log (see jvm_helper_log.h):
 * polls the file, parses its lines and files each record into the code
 * store or the thread history, counting what it kept. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow_array.h"
#include "base/string_pool.h"
#include "jvm/helper_log_parser.h"
#include "jvm/jit_code.h"
#include "jvm/jvm_helper_log.h"
#include "jvm/thread_history.h"
#include "proc/proc_root.h"
#include "proc/proc_stat.h"
#include "sparkprof_helper_log.h"

#define READ_CHUNK (256 * 1024)

struct jvm_helper_log {
	int fd;
	off_t offset;
	char *pending;               /* partial line carried between reads */
	size_t pending_len;
	uint64_t horizon;
	uint64_t forgot_at;          /* horizon at the last jit_code_forget */

	struct string_pool *names;   /* every name the stores hold */
	const char **numbered;       /* N records: name number n at [n - 1] */
	size_t nnumbered, capnumbered;
	struct jit_code *code;
	struct thread_history *threads;

	jvm_helper_thread_listener listener;
	void *listener_ctx;
	struct jvm_helper_log_stats stats;
};

/* ---- records ---- */

static void see_time(struct jvm_helper_log *log, uint64_t ts)
{
	if (ts > log->horizon)
		log->horizon = ts;
}

/* Passes a store's answer through, counting the record in *kept if kept. */
static int count_kept(int err, uint64_t *kept)
{
	if (!err)
		(*kept)++;
	return err;
}

/* N: numbers come in order, so a name costs one pointer here. */
static int add_numbered(struct jvm_helper_log *log, uint64_t number, const char *name)
{
	if (number != log->nnumbered + 1)
		return -EINVAL;
	if (grow_array((void **)&log->numbered, &log->capnumbered, log->nnumbered + 1,
		       sizeof(*log->numbered)))
		return -ENOMEM;
	log->numbered[log->nnumbered++] = name;
	return 0;
}

/* J: an I record with offsets from its method's start and numbered names. */
static int add_numbered_inline(struct jvm_helper_log *log, const struct helper_record *r)
{
	const char *names[HELPER_LOG_MAX_INLINE_DEPTH];
	uint64_t start;

	if (jit_code_newest_method_start(log->code, r->inl_numbers.id, &start) ||
	    r->inl_numbers.end > UINT64_MAX - start)
		return -EINVAL;
	for (unsigned i = 0; i < r->inl_numbers.depth; i++) {
		if (r->inl_numbers.numbers[i] > log->nnumbered)
			return -EINVAL;
		names[i] = log->numbered[r->inl_numbers.numbers[i] - 1];
	}
	return jit_code_add_inline(log->code, r->inl_numbers.id, start + r->inl_numbers.start,
				   start + r->inl_numbers.end, names, r->inl_numbers.depth);
}

/* Files one parsed record.  A record's time counts for the horizon even
 * when the record does not fit those before it (< 0). */
static int file_record(struct jvm_helper_log *log, const struct helper_record *r)
{
	switch (r->kind) {
	case HELPER_RECORD_HEADER:
		if (log->stats.header_seen)
			return -EINVAL;
		log->stats.header_seen = 1;
		log->stats.attached = r->header.attached;
		see_time(log, r->ts);
		return r->header.version == SPARKPROF_HELPER_LOG_VERSION ? 0 : -EINVAL;
	case HELPER_RECORD_CODE:
		see_time(log, r->ts);
		return count_kept(jit_code_add(log->code, r->code.is_method, r->ts, r->code.id,
					  r->code.start, r->code.size, r->code.name),
			     &log->stats.code_blobs);
	case HELPER_RECORD_INLINE:
		return count_kept(jit_code_add_inline(log->code, r->inl.id, r->inl.start, r->inl.end,
						 r->inl.names, r->inl.depth),
			     &log->stats.inline_ranges);
	case HELPER_RECORD_NAME:
		return add_numbered(log, r->name.number, r->name.name);
	case HELPER_RECORD_INLINE_NUMBERS:
		return count_kept(add_numbered_inline(log, r), &log->stats.inline_ranges);
	case HELPER_RECORD_UNLOAD:
		see_time(log, r->ts);
		return count_kept(jit_code_unload(log->code, r->ts, r->unload_id), &log->stats.unloads);
	case HELPER_RECORD_THREAD: {
		see_time(log, r->ts);
		int err = count_kept(thread_history_add(log->threads, &r->thread),
				     &log->stats.thread_events);
		if (!err && log->listener)
			log->listener(log->listener_ctx, &r->thread);
		return err;
	}
	case HELPER_RECORD_TIME:
		see_time(log, r->ts);
		return 0;
	case HELPER_RECORD_UNKNOWN:
		break;
	}
	return 0;
}

size_t jvm_helper_log_feed(struct jvm_helper_log *log, const char *buf, size_t len)
{
	size_t done = 0;
	if (!log || !buf)
		return 0;
	while (done < len) {
		const char *nl = memchr(buf + done, '\n', len - done);
		if (!nl)
			break;
		size_t linelen = nl - (buf + done);
		struct helper_record rec;
		log->stats.lines++;
		if (helper_log_parse_line(log->names, buf + done, linelen, &rec) < 0 ||
		    file_record(log, &rec) < 0)
			log->stats.malformed++;
		done += linelen + 1;
	}
	return done;
}

/* ---- lookups ---- */

int jvm_helper_log_resolve(struct jvm_helper_log *log, uint64_t addr, uint64_t ts,
			   struct frame *out, int max)
{
	return log ? jit_code_resolve(log->code, addr, ts, out, max) : 0;
}

int jvm_helper_log_covers(struct jvm_helper_log *log, uint64_t addr)
{
	return log && jit_code_covers(log->code, addr);
}

const char *jvm_helper_log_thread_name(struct jvm_helper_log *log, pid_t tid, uint64_t ts)
{
	return log ? thread_history_name(log->threads, tid, ts) : NULL;
}

int jvm_helper_log_thread_idle(struct jvm_helper_log *log, pid_t tid, uint64_t ts)
{
	return log ? thread_history_idle(log->threads, tid, ts) : -1;
}

void jvm_helper_log_set_thread_listener(struct jvm_helper_log *log,
					jvm_helper_thread_listener fn, void *ctx)
{
	log->listener = fn;
	log->listener_ctx = ctx;
}

const struct jvm_helper_log_stats *jvm_helper_log_get_stats(const struct jvm_helper_log *log)
{
	return &log->stats;
}

uint64_t jvm_helper_log_horizon(const struct jvm_helper_log *log)
{
	return log->horizon;
}

/* ---- files ---- */

struct jvm_helper_log *jvm_helper_log_new(void)
{
	struct jvm_helper_log *log = calloc(1, sizeof(*log));
	if (!log)
		return NULL;
	log->fd = -1;
	log->names = string_pool_new();
	log->code = jit_code_new();
	log->threads = thread_history_new();
	if (!log->names || !log->code || !log->threads) {
		jvm_helper_log_free(log);
		errno = ENOMEM;
		return NULL;
	}
	return log;
}

void jvm_helper_log_free(struct jvm_helper_log *log)
{
	if (!log)
		return;
	if (log->fd >= 0)
		close(log->fd);
	free(log->pending);
	free(log->numbered);
	jit_code_free(log->code);
	thread_history_free(log->threads);
	string_pool_free(log->names);
	free(log);
}

/* Whether the log was left by an earlier process with this pid: its header
 * was written before the current process started. */
static int is_stale(struct jvm_helper_log *log, pid_t pid)
{
	char head[255];   /* the header line is short */
	ssize_t n = pread(log->fd, head, sizeof(head), 0);
	const char *nl = n > 0 ? memchr(head, '\n', n) : NULL;
	struct helper_record rec;
	uint64_t started;
	if (!nl || helper_log_parse_line(log->names, head, nl - head, &rec) < 0 ||
	    rec.kind != HELPER_RECORD_HEADER)
		return 0;
	/* starttime has clock-tick resolution: allow a second. */
	return proc_start_monotonic_ns(pid, &started) == 0 && rec.ts + 1000000000ull < started;
}

struct jvm_helper_log *jvm_helper_log_open(pid_t pid)
{
	int fd = proc_root_open_published(pid, SPARKPROF_HELPER_LOG_FMT);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	struct jvm_helper_log *log = jvm_helper_log_new();
	if (!log) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	log->fd = fd;
	if (is_stale(log, pid)) {
		jvm_helper_log_free(log);
		errno = ESTALE;
		return NULL;
	}
	return log;
}

/* At most every 10 s of log time, and only when a quarter of the blobs
 * (and at least 1,024) have ended: a pass is linear in the store. */
static void forget_old_code(struct jvm_helper_log *log)
{
	size_t ended, blobs = jit_code_blobs(log->code, &ended);

	if (ended < 1024 || ended * 4 < blobs || log->horizon < JVM_HELPER_LOG_KEEP_NS ||
	    log->horizon - log->forgot_at < 10ull * 1000000000ull)
		return;
	log->forgot_at = log->horizon;
	jvm_helper_log_forget(log, log->horizon - JVM_HELPER_LOG_KEEP_NS);
}

size_t jvm_helper_log_forget(struct jvm_helper_log *log, uint64_t ts)
{
	size_t dropped = log ? jit_code_forget(log->code, ts) : 0;

	if (log)
		log->stats.forgotten += dropped;
	return dropped;
}

int jvm_helper_log_poll(struct jvm_helper_log *log)
{
	if (!log || log->fd < 0)
		return -EBADF;
	uint64_t before = log->stats.lines;
	char *buf = malloc(READ_CHUNK + HELPER_LOG_MAX_LINE);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		/* Start with the partial line kept from the last read. */
		size_t have = log->pending_len;
		if (have)
			memcpy(buf, log->pending, have);
		ssize_t n = pread(log->fd, buf + have, READ_CHUNK, log->offset);
		if (n < 0) {
			int e = errno;
			free(buf);
			return e == EINTR ? (int)(log->stats.lines - before) : -e;
		}
		if (n == 0)
			break;
		log->offset += n;
		size_t total = have + n;
		size_t used = jvm_helper_log_feed(log, buf, total);
		size_t rest = total - used;
		if (rest > HELPER_LOG_MAX_LINE) {
			/* No newline in a line's worth of bytes: skip it. */
			log->stats.malformed++;
			rest = 0;
		}
		char *p = realloc(log->pending, rest ? rest : 1);
		if (!p) {
			free(buf);
			return -ENOMEM;
		}
		log->pending = p;
		memcpy(log->pending, buf + used, rest);
		log->pending_len = rest;
		if ((size_t)n < READ_CHUNK)
			break;
	}
	free(buf);
	forget_old_code(log);
	return (int)(log->stats.lines - before);
}

size_t jvm_helper_log_jit_memory(const struct jvm_helper_log *log)
{
	return jit_code_memory(log->code) + string_pool_memory(log->names) +
	       log->capnumbered * sizeof(*log->numbered);
}
