/* jvm_helper_log.h - what a JVM's sparkprof helper published: JIT code with
 * load/unload times and inlined frames, and full thread names over time.
 *
 * The log (format: include/sparkprof_helper_log.h) is found at
 * /proc/PID/root/tmp/sparkprof-<NSPID>.log, NSPID being the pid the process
 * sees itself as (the last NStgid field).  It is read incrementally; all
 * names handed out stay valid until jvm_helper_log_free(), so they can go
 * into struct frame for the whole recording.
 *
 * Naming rule (why an answer can be "unknown"): the helper learns of
 * compiled code from HotSpot's ServiceThread, after the fact.  A method's
 * load record is stamped after it could first run, and its unload record
 * after it stopped running, when its memory may already hold new code.  So
 * resolve() names an address at time ts only when exactly one published
 * blob covered it at ts, and answers 0 (unknown) when:
 *   - ts is before the blob's load record (install lag: unknown, not wrong);
 *   - the blob was later unloaded and another blob reused the address, and
 *     ts lies within SPARKPROF_HELPER_REUSE_GUARD_NS before the unload
 *     record (the memory may already have held the newer code);
 *   - the blob's end is known only because a newer blob overlapped it (no
 *     unload record), for any ts: we cannot tell when it died.
 * Samples must be resolved only after the log has been polled up to
 * ts + SPARKPROF_HELPER_REUSE_GUARD_NS (see jvm_helper_log_horizon()), or
 * the records that make an address ambiguous may not have been read yet.
 */
#ifndef SPARKPROF_JVM_HELPER_LOG_H
#define SPARKPROF_JVM_HELPER_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/frame.h"

struct jvm_helper_log;

enum jvm_helper_thread_event_kind {
	JVM_THREAD_NAMED,   /* the thread has this name from ts on (start or rename) */
	JVM_THREAD_ENDED,   /* the thread ended; its tid may be reused */
	JVM_THREAD_IDLE,    /* task thread parked waiting for a task */
	JVM_THREAD_BUSY,    /* task thread running a task */
};

struct jvm_helper_thread_event {
	uint64_t ts;                 /* CLOCK_MONOTONIC ns */
	pid_t tid;                   /* as the JVM sees it (its pid namespace) */
	enum jvm_helper_thread_event_kind kind;
	const char *name;            /* JVM_THREAD_NAMED only; valid until free */
};

typedef void (*jvm_helper_thread_listener)(void *ctx, const struct jvm_helper_thread_event *ev);

struct jvm_helper_log_stats {
	uint64_t lines;          /* complete lines parsed */
	uint64_t malformed;      /* lines skipped as malformed */
	uint64_t code_blobs;     /* L and D records */
	uint64_t unloads;        /* U records that matched a blob */
	uint64_t inline_ranges;  /* I records kept */
	uint64_t thread_events;  /* T, X, S records */
	int attached;            /* the helper was attached late (H record) */
	int header_seen;
};

/* Opens pid's helper log.  NULL with errno set: ENOENT when the process has
 * no helper log, ESTALE when the log belongs to an earlier process with the
 * same pid, EPERM when it is not a regular file owned by the process's user
 * (or root), or the open/read error. */
struct jvm_helper_log *jvm_helper_log_open(pid_t pid);

/* A log with no file, fed by jvm_helper_log_feed() (tests, fuzzer). */
struct jvm_helper_log *jvm_helper_log_new(void);

void jvm_helper_log_free(struct jvm_helper_log *log);

/* Parses the complete lines at the start of buf (trusts nothing) and returns
 * how many bytes they span; a trailing partial line is left for the next
 * call. */
size_t jvm_helper_log_feed(struct jvm_helper_log *log, const char *buf, size_t len);

/* Reads and parses records appended since the last poll.  Returns the
 * number of new complete lines, or -errno.  Everything already read stays
 * usable after the process exits. */
int jvm_helper_log_poll(struct jvm_helper_log *log);

/* Latest timestamp seen in the log (records and the helper's heartbeat). */
uint64_t jvm_helper_log_horizon(const struct jvm_helper_log *log);

/* Names JIT/stub address addr as of time ts: fills up to max frames,
 * innermost first (inlined frames FRAME_INLINED, then the compiled method
 * FRAME_JIT; the interpreter is one FRAME_INTERPRETED "Interpreter"; other
 * stubs FRAME_NATIVE under the JVM's name).  Returns the number of frames,
 * 0 when unknown (see the naming rule above).  If max is smaller than the
 * inline depth, the outermost frames are kept (the compiled method last). */
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

const struct jvm_helper_log_stats *jvm_helper_log_get_stats(const struct jvm_helper_log *log);

/* Field 22 (starttime, clock ticks since boot) of a /proc/PID/stat text;
 * 0 or -1 when malformed.  open() uses it to reject a stale log. */
int jvm_helper_stat_starttime(const char *buf, size_t len, uint64_t *ticks);

#endif
