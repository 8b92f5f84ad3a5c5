/* jvm_helper_log.h - what a JVM's sparkprof helper published: JIT code with
 * load/unload times and inlined frames, and full thread names over time.
 *
 * The log (format: include/sparkprof_helper_log.h) is found at
 * /proc/PID/root/tmp/sparkprof-<NSPID>.log, NSPID being the pid the process
 * sees itself as (the last NStgid field).  It is read incrementally; all
 * names handed out stay valid until jvm_helper_log_free(), so they can go
 * into struct frame for the whole recording.
 *
 * This reader owns the file and its polling; lines are parsed by
 * jvm/helper_log_parser.h and filed into jvm/jit_code.h (code) and
 * jvm/thread_history.h (threads).
 *
 * resolve() names an address at time ts only when exactly one published
 * blob covered it at ts; why it may answer "unknown" is the naming rule in
 * jvm/jit_code.h.  Samples must be resolved only after the log has been
 * polled up to ts + SPARKPROF_HELPER_REUSE_GUARD_NS (see
 * jvm_helper_log_horizon()), or the records that make an address ambiguous
 * may not have been read yet.
 *
 * A log read from its file leaves J records (inlined frames) there: the
 * store notes where each compiled method's lie, and reads them back the
 * first time a lookup lands in the method (jvm/jit_code.h, deferred
 * inlined frames).  Most methods are never sampled (an executor's 15
 * minutes beside a busy application: samples landed in about 6,000 of
 * 22,000, which held three quarters of the ranges).  Before the reader
 * moves to a new file it reads back those of code that has ended; live
 * code's are found again in the new file's restated part.
 *
 * Code that ended more than JVM_HELPER_LOG_KEEP_NS before the newest record
 * is forgotten (jit_code_forget), so that a JVM that keeps compiling and
 * unloading does not grow the store: samples are named about a second after
 * they were taken, and an off-CPU record's stack, however old, holds only
 * code that could not be unloaded while the thread waited in it.
 */
#ifndef SPARKPROF_JVM_HELPER_LOG_H
#define SPARKPROF_JVM_HELPER_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/frame.h"
#include "jvm/thread_history.h"   /* struct jvm_helper_thread_event */

struct jvm_helper_log;

/* Samples wait about a second to be named, so 15 s leaves a wide margin;
 * a sample named later still (a node so busy that naming falls behind)
 * gets "unknown" for code unloaded meanwhile, never another method's name. */
#define JVM_HELPER_LOG_KEEP_NS (15ull * 1000000000ull)

typedef void (*jvm_helper_thread_listener)(void *ctx, const struct jvm_helper_thread_event *ev);

struct jvm_helper_log_stats {
	uint64_t lines;          /* complete lines parsed */
	uint64_t malformed;      /* lines skipped as malformed */
	uint64_t code_blobs;     /* L and D records */
	uint64_t unloads;        /* U records that matched a blob */
	uint64_t inline_ranges;  /* I and J records kept */
	uint64_t inline_deferred; /* J records left in the file until a sample
				   * lands in their method (jit_code_defer_inline) */
	uint64_t inline_loads;   /* methods whose J records were read back */
	uint64_t inline_trimmed; /* methods whose frames read back were dropped
				  * again, unused, past the cache's size */
	uint64_t inline_unreadable; /* of those, none could be: the file changed */
	uint64_t inline_lost;    /* J records past INLINE_SPAN_MAX of their method */
	uint64_t thread_events;  /* T, X, S records */
	uint64_t thread_events_forgotten; /* dropped once no lookup needed them */
	uint64_t forgotten;      /* blobs dropped JVM_HELPER_LOG_KEEP_NS after they ended */
	uint64_t files;          /* new files followed after G records */
	uint64_t restated;       /* their restated records, skipped */
	int attached;            /* the helper was attached late (H record) */
	int header_seen;         /* in the current file */
};

/* Opens pid's helper log.  NULL with errno set: ENOENT when the process has
 * no helper log, ESTALE when the log belongs to an earlier process with the
 * same pid, EPERM when it is not a regular file owned by the process's user
 * (or root), or the open/read error. */
struct jvm_helper_log *jvm_helper_log_open(pid_t pid);

/* The process is gone and every sample of it named: closes the file and
 * frees the code store (later lookups answer unknown).  The names handed
 * out, the thread history and the stats stay. */
void jvm_helper_log_release(struct jvm_helper_log *log);

/* A log with no file, fed by jvm_helper_log_feed() (tests, fuzzer); it
 * keeps every inlined frame it reads. */
struct jvm_helper_log *jvm_helper_log_new(void);

/* A log read from fd, which it takes (tests, fuzzer): polled as a JVM's
 * is, but it does not follow a G record to a new file.  NULL with errno
 * ENOMEM (fd is then the caller's). */
struct jvm_helper_log *jvm_helper_log_from_fd(int fd);

void jvm_helper_log_free(struct jvm_helper_log *log);

/* Parses the complete lines at the start of buf (trusts nothing) and returns
 * how many bytes they span; a trailing partial line is left for the next
 * call. */
size_t jvm_helper_log_feed(struct jvm_helper_log *log, const char *buf, size_t len);

/* Reads and parses records appended since the last poll.  Returns the
 * number of new complete lines, or -errno.  Everything already read stays
 * usable after the process exits.  After a G record (the helper started a
 * new file, include/sparkprof_helper_log.h) it reopens the path and reads
 * on, skipping what the new file restates. */
int jvm_helper_log_poll(struct jvm_helper_log *log);

/* What is fed from now on is the new file that a G record announced (poll
 * calls this itself; for tests and the fuzzer). */
void jvm_helper_log_next_file(struct jvm_helper_log *log);

/* Latest timestamp seen in the log (records and the helper's heartbeat). */
uint64_t jvm_helper_log_horizon(const struct jvm_helper_log *log);

/* Names JIT/stub address addr as of time ts: fills up to max frames,
 * innermost first (inlined frames FRAME_INLINED, then the compiled method
 * FRAME_JIT; the interpreter is one FRAME_INTERPRETED "Interpreter"; other
 * stubs FRAME_NATIVE under the JVM's name).  Returns the number of frames,
 * 0 when unknown (the naming rule in jvm/jit_code.h).  If max is smaller
 * than the inline depth, the outermost frames are kept (the compiled method
 * last). */
int jvm_helper_log_resolve(struct jvm_helper_log *log, uint64_t addr, uint64_t ts,
			   struct frame *out, int max);

/* Whether any blob ever published covers addr (JIT memory we know of). */
int jvm_helper_log_covers(struct jvm_helper_log *log, uint64_t addr);

/* Full Java name of thread tid at time ts; NULL if unknown (before the
 * first published name, or after the thread ended). */
const char *jvm_helper_log_thread_name(struct jvm_helper_log *log, pid_t tid, uint64_t ts);

/* Task-thread state at ts: 1 idle, 0 busy, -1 unknown.  A rename counts as
 * busy (Spark renames a task thread when a task starts on it). */
int jvm_helper_log_thread_idle(struct jvm_helper_log *log, pid_t tid, uint64_t ts);

/* fn is called, in log order (timestamp order), for every thread event that
 * poll/feed reads from now on.  Events read before it was set are not
 * replayed. */
void jvm_helper_log_set_thread_listener(struct jvm_helper_log *log,
					jvm_helper_thread_listener fn, void *ctx);

/* Forgets code that ended before ts (jit_code_forget); the poll does this
 * by itself.  Returns how many blobs were dropped. */
size_t jvm_helper_log_forget(struct jvm_helper_log *log, uint64_t ts);

const struct jvm_helper_log_stats *jvm_helper_log_get_stats(const struct jvm_helper_log *log);

/* Heap bytes of its JIT code store and the names in it; *names (if not
 * NULL): of the names alone (every method name read, kept for the
 * recording's outputs). */
size_t jvm_helper_log_jit_memory(const struct jvm_helper_log *log, size_t *names);
/* Heap bytes of the thread history and its names. */
size_t jvm_helper_log_thread_memory(const struct jvm_helper_log *log);
/* With -v: one line of where its memory goes, part by part. */
void jvm_helper_log_debug_memory(const struct jvm_helper_log *log);

#endif
