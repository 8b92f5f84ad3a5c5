/* helper_log_parser.h - one line of the JVMTI helper's log
 * (include/sparkprof_helper_log.h) as a record.
 *
 * The log is written by the monitored process, so the parser trusts
 * nothing: any bytes, any length, no NUL terminator.  It checks a record's
 * syntax only; whether the record fits those before it (ids, ranges, a
 * second header) is for whoever keeps it.  Names are unescaped and interned
 * in a string pool, so equal names are one pointer: thread names (T) in a
 * pool of their own, which the thread history can outlive and replace.
 */
#ifndef SPARKPROF_HELPER_LOG_PARSER_H
#define SPARKPROF_HELPER_LOG_PARSER_H

#include <stddef.h>
#include <stdint.h>

#include "base/string_pool.h"
#include "jvm/thread_history.h"
#include "sparkprof_helper_log.h"

/* A line longer than this is garbage: the helper writes at most
 * SPARKPROF_HELPER_MAX_LINE. */
#define HELPER_LOG_MAX_LINE (4 * SPARKPROF_HELPER_MAX_LINE)
#define HELPER_LOG_MAX_INLINE_DEPTH 64

enum helper_record_kind {
	HELPER_RECORD_UNKNOWN,  /* a record kind from a newer helper: skip it */
	HELPER_RECORD_HEADER,   /* H */
	HELPER_RECORD_CODE,     /* L (a compiled method) or D (another blob) */
	HELPER_RECORD_INLINE,   /* I (no timestamp) */
	HELPER_RECORD_NAME,     /* N (no timestamp) */
	HELPER_RECORD_INLINE_NUMBERS, /* J (no timestamp) */
	HELPER_RECORD_UNLOAD,   /* U */
	HELPER_RECORD_THREAD,   /* T, X, S */
	HELPER_RECORD_TIME,     /* R, K: only a timestamp */
	HELPER_RECORD_SNAPSHOT_END, /* R <ts> snapshot: a continued file's restated part ends */
	HELPER_RECORD_CONTINUED,    /* G: the log goes on in a new file at its path */
};

struct helper_record {
	enum helper_record_kind kind;
	uint64_t ts;            /* CLOCK_MONOTONIC ns; not for INLINE, UNKNOWN */
	union {
		struct {
			uint64_t version;
			int attached;   /* mode "attach" */
			int continued;  /* mode "continued": a rotated log's new file */
		} header;
		struct {
			int is_method;  /* L */
			uint64_t id, start, size;
			const char *name;
		} code;
		struct {
			uint64_t id, start, end;
			unsigned depth;
			const char *names[HELPER_LOG_MAX_INLINE_DEPTH]; /* innermost first */
		} inl;
		struct {
			uint64_t number;
			const char *name;
		} name;
		struct {
			uint64_t id, start, end;  /* offsets from the method's start */
			unsigned depth;
			uint64_t numbers[HELPER_LOG_MAX_INLINE_DEPTH]; /* innermost first */
		} inl_numbers;
		uint64_t unload_id;
		struct jvm_helper_thread_event thread;  /* .ts == ts */
	};
};

/* Parses line[0..len) (without its '\n') into *rec.  0, -EINVAL when
 * malformed, or -ENOMEM when a name could not be interned. */
int helper_log_parse_line(struct string_pool *names, struct string_pool *thread_names,
			  const char *line, size_t len, struct helper_record *rec);

#endif
