/* jvm_helper_log.c - reads a JVM helper's log (see jvm_helper_log.h):
 * polls the file, parses its lines and files each record into the code
 * store or the thread history, counting what it kept. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow_array.h"
#include "base/log.h"
#include "base/string_pool.h"
#include "jvm/helper_log_parser.h"
#include "jvm/jit_code.h"
#include "jvm/jvm_helper_log.h"
#include "jvm/thread_history.h"
#include "proc/proc_root.h"
#include "proc/proc_stat.h"
#include "sparkprof_helper_log.h"

#define READ_CHUNK (256 * 1024)
/* The most of the file one method's deferred inlined frames may span: a
 * large compiled method's J records take a few hundred KiB. */
#define INLINE_SPAN_MAX (4u << 20)
/* Inlined frames read back, per JVM: past this, those of methods no sample
 * landed in for 10 s are dropped (jit_code_trim_inline). With --wall an
 * executor's samples land in a few thousand methods over minutes, whose
 * frames would take 5-6 MB and more as the run goes on. */
#define INLINE_CACHE_BYTES (1u << 20)
#define INLINE_TRIM_NS (10ull * 1000000000ull)
/* Thread events are forgotten every 10 s of log time, those older than
 * 120 s (the stage tracker keeps as much): an executor renames a task
 * thread for each task, tens of thousands an hour. */
#define THREAD_FORGET_NS (10ull * 1000000000ull)
#define THREAD_KEEP_NS (120ull * 1000000000ull)
/* Thread names move to a new pool when the pool holds twice what the names
 * kept took after the last move (and at least this). */
#define THREAD_NAMES_MIN_BYTES (256u << 10)

struct jvm_helper_log {
	int fd;
	pid_t pid;                   /* 0: fed by hand */
	off_t offset;
	uint64_t buf_offset;         /* where the bytes being fed start in the file */
	uint64_t line_offset;        /* where the line being filed starts */
	uint64_t span_id;            /* the method whose J records are being read */
	uint64_t span_start;         /* where its first J record in this file starts */
	char *pending;               /* partial line carried between reads */
	size_t pending_len;
	uint64_t horizon;
	uint64_t forgot_at;          /* horizon at the last jit_code_forget */
	uint64_t trimmed_at;         /* and at the last jit_code_trim_inline */
	uint64_t threads_forgot_at;  /* and at the last thread_history_forget */

	struct string_pool *names;   /* every name the code store holds */
	struct string_pool *thread_names; /* the thread history's names */
	size_t thread_names_moved;   /* thread_names' bytes after the last move */
	const char **numbered;       /* N records: name number n at [n - number_base] */
	size_t nnumbered, capnumbered;
	uint64_t number_base;        /* the first number: 1, or a continued file's first N */
	int base_from_file;          /* a continued file read from its start */
	int follow;                  /* a G record: the log goes on in a new file */
	int restating;               /* in that file: 1 until its restated part ends,
				      * 2 for good when its header is wrong */
	int restated_numbers;        /* its first restated N record was seen, */
	uint64_t restated_first;     /* with this number */
	/* Which known numbers below it restated J records name: a bit per
	 * number from number_base, a byte per old one.  NULL: out of memory,
	 * nothing is dropped. */
	uint8_t *wanted_bits, *wanted_old;
	uint64_t wanted_span;        /* numbers the bits cover */
	struct old_number {
		uint64_t number;
		const char *name;
	} *old;                      /* those numbers, kept (by number) past the drop */
	size_t nold;
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

static int cmp_old_number(const void *a, const void *b)
{
	const struct old_number *x = a, *y = b;

	return x->number < y->number ? -1 : x->number > y->number;
}

/* The name numbered n, NULL if none. */
static const char *numbered_name(const struct jvm_helper_log *log, uint64_t n)
{
	struct old_number key = { n, NULL }, *old;

	if (n >= log->number_base)
		return n - log->number_base < log->nnumbered ? log->numbered[n - log->number_base]
							     : NULL;
	old = log->nold ? bsearch(&key, log->old, log->nold, sizeof(key), cmp_old_number) : NULL;
	return old ? old->name : NULL;
}

/* N: numbers come in order, so a name costs one pointer here.  They count
 * from 1, or in a continued file read from its start from its first N
 * record (its table may have started afresh); a continued file restates
 * N records it gave before (the same name). */
static int add_numbered(struct jvm_helper_log *log, uint64_t number, const char *name)
{
	if (!log->nnumbered && log->base_from_file)
		log->number_base = number;
	if (number != log->number_base + log->nnumbered)
		return numbered_name(log, number) == name ? 0 : -EINVAL;
	if (grow_array((void **)&log->numbered, &log->capnumbered, log->nnumbered + 1,
		       sizeof(*log->numbered)))
		return -ENOMEM;
	log->numbered[log->nnumbered++] = name;
	return 0;
}

/* ---- numbers across files ----
 * A continued file restates the numbers in the helper's table, from its
 * first N record on: the table started afresh below that (tools/jvmti/
 * method_ids.h), and new records name no older number.  But it copies the
 * J records of live methods as they were, and a method compiled before the
 * table started afresh names older numbers.  So at the end of the restated
 * part the numbers below the first go, except those its J records name:
 * the array stays within the helper's table (2^18 numbers) plus what live
 * code names, instead of every number a JVM that keeps loading classes
 * ever gave. */

/* The first restated N: room to note the numbers below it. */
static void begin_restated_numbers(struct jvm_helper_log *log, uint64_t first)
{
	uint64_t known_end = log->number_base + log->nnumbered;

	log->restated_numbers = 1;
	log->restated_first = first;
	log->wanted_span = first <= log->number_base ? 0
			   : (first < known_end ? first : known_end) - log->number_base;
	log->wanted_bits = calloc(log->wanted_span / 8 + 1, 1);
	log->wanted_old = calloc(log->nold + 1, 1);
}

/* A restated J record: notes the known numbers it names below the first.
 * Bounded by what is known, whatever the file holds. */
static void note_restated_numbers(struct jvm_helper_log *log, const struct helper_record *r)
{
	if (!log->wanted_bits || !log->wanted_old)
		return;
	for (unsigned i = 0; i < r->inl_numbers.depth; i++) {
		uint64_t n = r->inl_numbers.numbers[i];
		struct old_number key = { n, NULL }, *o;

		if (n >= log->number_base && n - log->number_base < log->wanted_span)
			log->wanted_bits[(n - log->number_base) / 8] |= 1u << ((n - log->number_base) % 8);
		else if (n < log->number_base && log->nold &&
			 (o = bsearch(&key, log->old, log->nold, sizeof(key), cmp_old_number)))
			log->wanted_old[o - log->old] = 1;
	}
}

static void drop_numbers_below(struct jvm_helper_log *log, uint64_t first)
{
	size_t drop;

	if (first <= log->number_base || first - log->number_base > log->nnumbered)
		return;
	drop = first - log->number_base;
	memmove(log->numbered, log->numbered + drop,
		(log->nnumbered - drop) * sizeof(*log->numbered));
	log->nnumbered -= drop;
	log->number_base = first;
	shrink_array((void **)&log->numbered, &log->capnumbered, log->nnumbered,
		     sizeof(*log->numbered));
}

/* Notes no more: the restated part ended, or its file did first. */
static void forget_restated_numbers(struct jvm_helper_log *log)
{
	free(log->wanted_bits);
	free(log->wanted_old);
	log->wanted_bits = log->wanted_old = NULL;
	log->restated_numbers = 0;
}

static bool wanted_bit(const struct jvm_helper_log *log, uint64_t i)
{
	return log->wanted_bits[i / 8] & (1u << (i % 8));
}

/* The restated part ended: keeps the old numbers it named, drops the rest. */
static void end_restated_numbers(struct jvm_helper_log *log)
{
	struct old_number *old = NULL;
	size_t nold = 0;

	if (log->restated_numbers && log->wanted_bits && log->wanted_old) {
		for (size_t i = 0; i < log->nold; i++)
			nold += log->wanted_old[i];
		for (uint64_t i = 0; i < log->wanted_span; i++)
			nold += wanted_bit(log, i);
		old = nold ? malloc(nold * sizeof(*old)) : NULL;
		if (old || !nold) {
			nold = 0;
			for (size_t i = 0; i < log->nold; i++)   /* below number_base */
				if (log->wanted_old[i])
					old[nold++] = log->old[i];
			for (uint64_t i = 0; i < log->wanted_span; i++)
				if (wanted_bit(log, i))
					old[nold++] = (struct old_number){ log->number_base + i,
									   log->numbered[i] };
			free(log->old);
			log->old = old;
			log->nold = nold;
			drop_numbers_below(log, log->restated_first);
		}
	}
	forget_restated_numbers(log);
}

/* J: an I record with offsets from its method's start and numbered names.
 * Checks that it fits what came before: its method's start and names. */
static int numbered_inline_names(const struct jvm_helper_log *log, const struct helper_record *r,
				 const char **names, uint64_t *start)
{
	if (jit_code_inline_method_start(log->code, r->inl_numbers.id, start) ||
	    r->inl_numbers.end > UINT64_MAX - *start)
		return -EINVAL;
	for (unsigned i = 0; i < r->inl_numbers.depth; i++)
		if (!(names[i] = numbered_name(log, r->inl_numbers.numbers[i])))
			return -EINVAL;
	return 0;
}

static int add_numbered_inline(struct jvm_helper_log *log, const struct helper_record *r)
{
	const char *names[HELPER_LOG_MAX_INLINE_DEPTH];
	uint64_t start;

	if (numbered_inline_names(log, r, names, &start))
		return -EINVAL;
	return jit_code_add_inline(log->code, r->inl_numbers.id, start + r->inl_numbers.start,
				   start + r->inl_numbers.end, names, r->inl_numbers.depth);
}

/* A J record in a file: the store notes where its method's records lie
 * (jit_code_defer_inline), from the first in this file to this one's end,
 * and reads them back if a sample lands in the method.  A method's J
 * records follow one another, after its L record.  -E2BIG (counted lost)
 * past INLINE_SPAN_MAX or 4 GiB into the file. */
static int defer_inline(struct jvm_helper_log *log, uint64_t id, size_t linelen)
{
	uint64_t end = log->line_offset + linelen + 1;

	if (id != log->span_id) {
		log->span_id = id;
		log->span_start = log->line_offset;
	}
	if (end > UINT32_MAX || end - log->span_start > INLINE_SPAN_MAX) {
		log->stats.inline_lost++;
		return -E2BIG;
	}
	return jit_code_defer_inline(log->code, id, (uint32_t)log->span_start,
				     (uint32_t)(end - log->span_start));
}

/* J, checked as when kept; deferred when read from a file. */
static int file_numbered_inline(struct jvm_helper_log *log, const struct helper_record *r,
				size_t linelen)
{
	const char *names[HELPER_LOG_MAX_INLINE_DEPTH];
	uint64_t start;
	int err;

	if (log->fd < 0)
		return count_kept(add_numbered_inline(log, r), &log->stats.inline_ranges);
	if (numbered_inline_names(log, r, names, &start))
		return -EINVAL;
	err = defer_inline(log, r->inl_numbers.id, linelen);
	if (err == -EEXIST)   /* sampled before all its records were read */
		return count_kept(add_numbered_inline(log, r), &log->stats.inline_ranges);
	return err == -E2BIG ? 0 : count_kept(err, &log->stats.inline_deferred);
}

/* Reads back compiled method id's J records from the current file (the
 * store's loader).  The file is the JVM user's: every line is checked
 * again, and one that is no J record of id is skipped. */
static void load_inline(void *ctx, uint64_t id, uint32_t offset, uint32_t length)
{
	struct jvm_helper_log *log = ctx;
	char *buf = length <= INLINE_SPAN_MAX ? malloc(length) : NULL;
	ssize_t n = buf ? pread(log->fd, buf, length, offset) : -1;
	size_t done = 0, kept = 0;

	while (n == (ssize_t)length && done < length) {
		const char *nl = memchr(buf + done, '\n', length - done);
		struct helper_record rec;

		if (!nl)
			break;
		if (buf[done] == 'J' &&
		    !helper_log_parse_line(log->names, log->thread_names, buf + done,
					   nl - (buf + done), &rec) &&
		    rec.kind == HELPER_RECORD_INLINE_NUMBERS && rec.inl_numbers.id == id &&
		    !add_numbered_inline(log, &rec))
			kept++;
		done = nl + 1 - buf;
	}
	free(buf);
	log->stats.inline_ranges += kept;
	log->stats.inline_loads++;
	if (!kept)
		log->stats.inline_unreadable++;
}

/* Files one parsed record.  A record's time counts for the horizon even
 * when the record does not fit those before it (< 0). */
static int file_record(struct jvm_helper_log *log, const struct helper_record *r,
		       size_t linelen)
{
	switch (r->kind) {
	case HELPER_RECORD_HEADER:
		if (log->stats.header_seen)
			return -EINVAL;
		log->stats.header_seen = 1;
		if (!log->restating) {
			log->stats.attached = r->header.attached;
			log->base_from_file = r->header.continued;
		}
		see_time(log, r->ts);
		if (r->header.version != SPARKPROF_HELPER_LOG_VERSION ||
		    (log->restating && !r->header.continued)) {
			if (log->restating)
				log->restating = 2;   /* not the file G announced */
			return -EINVAL;
		}
		return 0;
	case HELPER_RECORD_SNAPSHOT_END:
		see_time(log, r->ts);
		if (log->restating == 1 && log->stats.header_seen) {
			log->restating = 0;
			end_restated_numbers(log);
		}
		return 0;
	case HELPER_RECORD_CONTINUED:
		see_time(log, r->ts);
		log->follow = 1;
		return 0;
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
		return file_numbered_inline(log, r, linelen);
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
		if (log->follow)
			return len;   /* nothing comes after G */
		const char *nl = memchr(buf + done, '\n', len - done);
		if (!nl)
			break;
		size_t linelen = nl - (buf + done);
		struct helper_record rec;
		log->stats.lines++;
		log->line_offset = log->buf_offset + done;
		if (log->restating && linelen && buf[done] != 'H' && buf[done] != 'R') {
			/* Restated: known from the file before (its G came
			 * after all of it), and not worth parsing (megabytes a
			 * rotation on an executor), but for where live
			 * methods' deferred inlined frames now lie, which
			 * numbers the helper's table still holds (its first N)
			 * and which older ones those frames name. */
			log->stats.restated++;
			if (buf[done] == 'J' &&
			    (log->fd >= 0 || log->restated_numbers) &&
			    !helper_log_parse_line(log->names, log->thread_names, buf + done, linelen,
						   &rec) &&
			    rec.kind == HELPER_RECORD_INLINE_NUMBERS) {
				if (log->fd >= 0)
					defer_inline(log, rec.inl_numbers.id, linelen);
				if (log->restated_numbers)
					note_restated_numbers(log, &rec);
			}
			if (buf[done] == 'N' && !log->restated_numbers && log->restating == 1 &&
			    log->stats.header_seen &&
			    !helper_log_parse_line(log->names, log->thread_names, buf + done, linelen,
						   &rec) &&
			    rec.kind == HELPER_RECORD_NAME)
				begin_restated_numbers(log, rec.name.number);
		} else if (helper_log_parse_line(log->names, log->thread_names, buf + done, linelen,
						 &rec) < 0 ||
			   file_record(log, &rec, linelen) < 0) {
			log->stats.malformed++;
		}
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
	log->number_base = 1;
	log->names = string_pool_new();
	log->thread_names = string_pool_new();
	log->code = jit_code_new();
	log->threads = thread_history_new();
	if (!log->names || !log->thread_names || !log->code || !log->threads) {
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
	free(log->wanted_bits);
	free(log->wanted_old);
	free(log->old);
	jit_code_free(log->code);
	thread_history_free(log->threads);
	string_pool_free(log->names);
	string_pool_free(log->thread_names);
	free(log);
}

void jvm_helper_log_release(struct jvm_helper_log *log)
{
	struct jit_code *empty = log ? jit_code_new() : NULL;

	if (!empty)
		return;   /* out of memory: keep it all, nothing breaks */
	if (log->fd >= 0)
		close(log->fd);
	log->fd = -1;
	free(log->pending);
	log->pending = NULL;
	log->pending_len = 0;
	free(log->numbered);
	log->numbered = NULL;
	log->nnumbered = log->capnumbered = 0;
	forget_restated_numbers(log);
	free(log->old);
	log->old = NULL;
	log->nold = 0;
	jit_code_free(log->code);
	log->code = empty;
}

struct jvm_helper_log *jvm_helper_log_from_fd(int fd)
{
	struct jvm_helper_log *log = jvm_helper_log_new();

	if (!log)
		return NULL;
	log->fd = fd;
	jit_code_set_inline_loader(log->code, load_inline, log);
	return log;
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
	if (!nl || helper_log_parse_line(log->names, log->thread_names, head, nl - head, &rec) < 0 ||
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
	struct jvm_helper_log *log = jvm_helper_log_from_fd(fd);
	if (!log) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	log->pid = pid;
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

/* Thread events no lookup needs any more go, and then the names only they
 * used, by moving the names kept to a new pool. */
static void forget_old_threads(struct jvm_helper_log *log)
{
	struct string_pool *fresh;

	if (log->horizon < THREAD_KEEP_NS || log->horizon - log->threads_forgot_at < THREAD_FORGET_NS)
		return;
	log->threads_forgot_at = log->horizon;
	log->stats.thread_events_forgotten +=
		thread_history_forget(log->threads, log->horizon - THREAD_KEEP_NS);
	size_t held = string_pool_memory(log->thread_names);
	if (held < THREAD_NAMES_MIN_BYTES || held < 2 * log->thread_names_moved)
		return;
	fresh = string_pool_new();
	if (!fresh || thread_history_move_names(log->threads, fresh)) {
		string_pool_free(fresh);
		return;   /* out of memory: the names stay where they are */
	}
	string_pool_free(log->thread_names);
	log->thread_names = fresh;
	log->thread_names_moved = string_pool_memory(fresh);
}

static void trim_inline(struct jvm_helper_log *log)
{
	if (log->fd < 0 || log->horizon - log->trimmed_at < INLINE_TRIM_NS)
		return;
	log->trimmed_at = log->horizon;
	log->stats.inline_trimmed += jit_code_trim_inline(log->code, INLINE_CACHE_BYTES);
}

size_t jvm_helper_log_forget(struct jvm_helper_log *log, uint64_t ts)
{
	size_t dropped = log ? jit_code_forget(log->code, ts) : 0;

	if (log)
		log->stats.forgotten += dropped;
	return dropped;
}

void jvm_helper_log_next_file(struct jvm_helper_log *log)
{
	log->follow = 0;
	log->restating = 1;
	forget_restated_numbers(log);   /* a file that ended inside its restated part */
	log->span_id = 0;
	log->stats.header_seen = 0;
	log->stats.files++;
}

/* After a G record: the path holds the new file (the helper renamed it
 * there before writing G).  0, or -errno to try again at the next poll. */
static int open_next_file(struct jvm_helper_log *log)
{
	struct stat was, now;
	int fd;

	if (!log->pid)
		return -EBADF;
	fd = proc_root_open_published(log->pid, SPARKPROF_HELPER_LOG_FMT);
	if (fd < 0)
		return fd;
	if (fstat(fd, &now) < 0 || fstat(log->fd, &was) < 0 ||
	    (now.st_ino == was.st_ino && now.st_dev == was.st_dev)) {
		close(fd);
		return -EAGAIN;
	}
	/* Only live code is restated in the new file. */
	jit_code_load_ended(log->code);
	close(log->fd);
	log->fd = fd;
	log->offset = 0;
	log->pending_len = 0;
	jvm_helper_log_next_file(log);
	return 0;
}

/* Reads what was appended to the current file since the last read. */
static int read_appended(struct jvm_helper_log *log, char *buf)
{
	for (;;) {
		/* Start with the partial line kept from the last read. */
		size_t have = log->pending_len;
		log->buf_offset = log->offset - have;
		if (have)
			memcpy(buf, log->pending, have);
		ssize_t n = pread(log->fd, buf + have, READ_CHUNK, log->offset);
		if (n < 0)
			return errno == EINTR ? 0 : -errno;
		if (n == 0)
			return 0;
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
		if (!p)
			return -ENOMEM;
		log->pending = p;
		memcpy(log->pending, buf + used, rest);
		log->pending_len = rest;
		if ((size_t)n < READ_CHUNK || log->follow)
			return 0;
	}
}

int jvm_helper_log_poll(struct jvm_helper_log *log)
{
	if (!log || log->fd < 0)
		return -EBADF;
	uint64_t before = log->stats.lines;
	char *buf = malloc(READ_CHUNK + HELPER_LOG_MAX_LINE);
	if (!buf)
		return -ENOMEM;
	int err = read_appended(log, buf);
	/* One new file per poll: a JVM that rotates without pause costs no
	 * more than one that writes as fast. */
	if (!err && log->follow && open_next_file(log) == 0)
		err = read_appended(log, buf);
	free(buf);
	forget_old_code(log);
	forget_old_threads(log);
	trim_inline(log);
	return err ? err : (int)(log->stats.lines - before);
}

size_t jvm_helper_log_jit_memory(const struct jvm_helper_log *log, size_t *names)
{
	size_t n = string_pool_memory(log->names) + log->capnumbered * sizeof(*log->numbered) +
		   log->nold * sizeof(*log->old);

	if (names)
		*names = n;
	return jit_code_memory(log->code) + n;
}

void jvm_helper_log_debug_memory(const struct jvm_helper_log *log)
{
	struct jit_code_usage u;

	jit_code_usage(log->code, &u);
	sp_debug("memory: JVM %d: %zu blobs (%zu ended) %zu KiB, index %zu KiB, %zu inlined "
		 "ranges of %zu frames %zu KiB, names %zu KiB (numbers %zu KiB), threads %zu KiB",
		 (int)log->pid, u.blobs, u.ended, u.blob_bytes >> 10, u.index_bytes >> 10,
		 u.ranges, u.frames, u.inline_bytes >> 10, string_pool_memory(log->names) >> 10,
		 (log->capnumbered * sizeof(*log->numbered)) >> 10,
		 jvm_helper_log_thread_memory(log) >> 10);
}

size_t jvm_helper_log_thread_memory(const struct jvm_helper_log *log)
{
	return thread_history_memory(log->threads) + string_pool_memory(log->thread_names);
}
