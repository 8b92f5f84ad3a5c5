/* log_rotation.h - keeps the helper's log bounded.
 *
 * Past a size, the log goes on in a new file that first restates what is
 * still true, copied from the old file: the N records of the method numbers
 * in use, then T (and S idle) records of the live threads, then the L and D
 * records of the live code with their J records, with their original times
 * and ids.  An `R <ts> snapshot` record ends that part.  The new file is
 * written beside the log and renamed over it, so the path always holds a
 * whole file; then the old file gets a last record, `G <ts>`, and is
 * closed.  A reader that follows the log reopens the path at G and skips
 * the restated part; a reader that starts later reads it.  The old file is
 * freed when its last reader closes it.
 *
 * The file holds at most max(limit, twice its restated part): a JVM whose
 * live code alone outgrows the limit rotates less often, not forever.
 * Callers hold the publisher lock, so no record is written meanwhile and
 * the restated part is exact.
 */
#ifndef SPARKPROF_AGENT_LOG_ROTATION_H
#define SPARKPROF_AGENT_LOG_ROTATION_H

#include <stddef.h>
#include <stdint.h>

struct code_table;
struct method_ids;
struct publisher;
struct thread_name_entry;

struct log_rotation {
	uint64_t limit;      /* bytes; 0: never rotate */
	uint64_t next_at;    /* rotate when the file reaches this size */
	uint64_t rotations;
	uint64_t longest_ns;  /* the longest rotation, all of it under the lock */
	int said;            /* a failure was reported once */
};

/* Rotates when the file has reached its bound.  0 when nothing was due or
 * it went well, else -errno (said once on stderr; the log goes on in the
 * old file, and the next try waits until it has doubled). */
int log_rotation_check(struct log_rotation *r, struct publisher *pub, struct code_table *code,
		       struct method_ids *ids, const struct thread_name_entry *threads,
		       size_t nthreads);

#endif
