/* python_scan.h - the CPython processes running on the node, for `list`:
 * each with its version, whether its frames can be walked, and its
 * ancestors (a PySpark worker's lead to its executor JVM).
 */
#ifndef SPARKPROF_PYTHON_SCAN_H
#define SPARKPROF_PYTHON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PYTHON_SCAN_ANCESTORS 3

struct python_seen {
	pid_t pid;
	pid_t ancestors[PYTHON_SCAN_ANCESTORS]; /* parent first; 0 past the last */
	char version[8];          /* "3.12", "" when unknown */
	bool walkable;            /* a version and build the walker knows */
	bool daemon;              /* started as pyspark.daemon (its workers share that) */
};

/* Every process named python*: 0 and *out (free()) with *n entries, or -errno. */
int python_scan(struct python_seen **out, size_t *n);

#endif
