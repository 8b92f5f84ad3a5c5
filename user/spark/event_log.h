/* event_log.h - reading the event log Spark writes (spark.eventLog.enabled)
 * into a spark_app_record.
 *
 * A log is one file (APP, APP.inprogress while the application runs) or,
 * with spark.eventLog.rolling.enabled, a folder eventlog_v2_APP whose
 * events_N_APP files are read in N order (from the last compacted one,
 * as Spark does; appstatus_APP and anything else is ignored).  Files are
 * plain or compressed as their extension says (event_log_codec.h).
 *
 * Each line is one JSON event; the events read are application start and
 * end, job start and end, stage submitted and completed, task end and SQL
 * execution start (shared/docs/spark-executors.md section 6).  Other
 * events are skipped by their name, without being parsed.
 *
 * A log is outside input: a line longer than SPARK_EVENT_LINE_MAX, more
 * than SPARK_EVENT_LOG_MAX plain bytes, a line that is not a JSON object
 * with an "Event", or an event read without the fields it needs, is
 * -EPROTO (-EFBIG for the bytes) with one message naming the file, the
 * line and what is wrong; nothing is returned then.
 * A log that ends inside its last event or compressed block (an
 * application still running, or a copy cut short) is not an error: the
 * events before it are kept and the record says truncated; the same cut
 * in any but the last file of a rolled log is -EPROTO.
 */
#ifndef SPARKPROF_EVENT_LOG_H
#define SPARKPROF_EVENT_LOG_H

#include <stddef.h>

#include "spark/spark_app_record.h"

#define SPARK_EVENT_LINE_MAX (64u << 20)
#define SPARK_EVENT_LOG_MAX  (64ull << 30)
#define SPARK_EVENT_FILES_MAX 100000    /* events_N files of a rolled log */

/* path: a file or a rolled log's folder.  0 and *out (free with
 * spark_app_record_free), or -errno after one message. */
int spark_event_log_read(const char *path, struct spark_app_record **out);

/* The events of a plain log held in memory, named name in messages (for
 * tests and the fuzzer): as spark_event_log_read for one plain file. */
int spark_event_log_parse(const char *name, const void *data, size_t len,
			  struct spark_app_record **out);

#endif
