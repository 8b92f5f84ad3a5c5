/* options.h - the helper's option string: comma-separated key=value.
 *
 *   map=0|1        keep /tmp/perf-PID.map current (default 1)
 *   inline=0|1     publish inlined frames (default 1)
 *   interval=MS    how often the worker rewrites the map and polls thread
 *                  names, 50..60000 (default 1000)
 *   idle=0|1       publish idle/busy marks of Spark task threads (default 1)
 *   names=0|1      publish thread names (default 1)
 *   stats=0|1      at VM death, print on stderr how long the helper's
 *                  callbacks took (default 0)
 *   log_max=MB     start a new log file past this size (log_rotation.h),
 *                  0..65536, 0: never (default 16)
 *   keep_log=0|1   leave the log in /tmp when the JVM exits (default 0:
 *                  removed, as HotSpot removes its hsperfdata file)
 */
#ifndef SPARKPROF_AGENT_OPTIONS_H
#define SPARKPROF_AGENT_OPTIONS_H

#include <stddef.h>

struct agent_options {
	int map;
	int inline_frames;
	int interval_ms;
	int idle;
	int names;
	int stats;
	int log_max_mb;
	int keep_log;
};

/* Parses opts (may be NULL).  On error returns -1 and writes one line
 * describing the problem to err. */
int agent_options_parse(const char *opts, struct agent_options *out, char *err, size_t errlen);

#endif
