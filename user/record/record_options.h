/* record_options.h - the command line of `sparkprof record`.
 *
 * Parsing is separate from running so that it can be tested: every bad
 * value gets a one-line error naming the option.
 */
#ifndef SPARKPROF_RECORD_OPTIONS_H
#define SPARKPROF_RECORD_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "export/otlp_options.h"
#include "spark/stage_attribution.h"

#define RECORD_MAX_PIDS 1024

enum thread_filter { THREADS_ALL, THREADS_TASKS };

struct record_options {
	pid_t pids[RECORD_MAX_PIDS];    /* -p; empty = all processes (-a) */
	int npids;
	unsigned int frequency_hz;      /* -F, default 99 */
	double duration_s;              /* -d; 0 = until SIGINT/SIGTERM or the command exits */
	const char *output_dir;         /* -o; NULL = sparkprof-YYYYmmdd-HHMMSS */
	char **command;                 /* after "--"; NULL if none */
	bool jfr;                       /* write .jfr beside .folded (default on) */
	bool html;                      /* flame graphs and index.html (default on) */
	bool java_walker;               /* walk JVM stacks with the HotSpot walker (default on) */
	bool compress;                  /* gzip the .jfr files */
	bool per_thread;                /* -t: a frame per thread in folded output */
	bool wall;                      /* --wall: on-CPU + off-CPU profile */
	bool off_cpu;                   /* --off-cpu: off-CPU alone */
	uint64_t wall_interval_ns;      /* --wall=INTERVAL, default 10 ms */
	uint64_t min_off_cpu_ns;        /* --min-off-cpu, default 1 ms */
	unsigned int ring_buffer_mib;   /* --ring-buffer; 0: sized for -F and the CPUs */
	uint64_t stack_memory_bytes;    /* --stack-memory, default 16 MiB: a segment's size */
	enum thread_filter threads;     /* --threads tasks|all */
	const char *executors;          /* --executors SPEC, default "*" */
	const char *app_id;             /* --app ID */
	enum attribution_mode attribution; /* --attribution thread|epoch */
	uint64_t epoch_interval_ns;     /* --epoch-interval SECONDS, default 5 */
	bool attach;                    /* --attach: load the helper into every JVM profiled */
	const char *agent_path;         /* --agent PATH */
	uint64_t rotate_ns;             /* --rotate DUR: a folder per interval; 0 = one folder */
	unsigned int keep;              /* --keep N written interval folders (default 24) */
	struct otlp_options otlp;       /* --otlp URL and its options; otlp.sender.url NULL: none */
	int verbose;                    /* -v */
	bool help;
};

/* Fills opts from argv (argv[0] is "record"). Returns 0, or -1 after
 * printing a one-line error. */
int record_options_parse(struct record_options *opts, int argc, char **argv);

void record_options_usage(FILE *out);

/* Parses a duration like "10ms", "2s", "500us", "1.5" (seconds by default
 * unless default_unit_ns says otherwise). Returns 0 or -EINVAL. */
int parse_duration_ns(const char *text, uint64_t default_unit_ns, uint64_t *out);

#endif
