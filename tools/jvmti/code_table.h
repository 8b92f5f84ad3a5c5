/* code_table.h - the code blobs currently live in the JVM, sorted by start.
 *
 * It decides which log record an unload refers to, drops entries that a new
 * blob overlaps (their memory was reused, so they are dead), and renders
 * the perf map.  Not thread-safe: callers hold the publisher lock.
 */
#ifndef SPARKPROF_AGENT_CODE_TABLE_H
#define SPARKPROF_AGENT_CODE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "publish.h"   /* struct log_span */

struct code_entry {
	uint64_t start, size;
	uint64_t id;          /* log id */
	const void *method;   /* jmethodID, NULL for other blobs */
	char *name;           /* escaped, as in the log */
	struct log_span span; /* its L or D record, with its N and J records */
};

struct code_table {
	struct code_entry *v;
	size_t n, cap;
	uint64_t generation;  /* bumped on every change */
};

/* Adds an entry (takes ownership of name), dropping live entries it
 * overlaps.  Returns 0, or -1 when out of memory (name is freed). */
int code_table_add(struct code_table *t, uint64_t start, uint64_t size, uint64_t id,
		   const void *method, char *name, struct log_span span);

/* True if an entry with exactly this range and name is live. */
int code_table_has(const struct code_table *t, uint64_t start, uint64_t size, const char *name);

/* Removes the compiled method whose code starts at addr (or contains it)
 * and returns its id, 0 if none is live there. */
uint64_t code_table_remove(struct code_table *t, uint64_t addr, const void *method);

/* Renders the perf map ("START SIZE name\n", hex without 0x) into a
 * malloc'ed buffer; returns its length or -1. */
long code_table_render_map(const struct code_table *t, char **out);

#endif
