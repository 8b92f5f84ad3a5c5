/* record_summary.h - DIR/summary.json: what was recorded and what was lost.
 *
 * Start time, recording time (duration_s) and start-up time, frequency, samples, lost samples by cause, frames
 * that could not be named, samples per process, and per Spark executor and
 * stage: samples, share and tasks seen.
 */
#ifndef SPARKPROF_RECORD_SUMMARY_H
#define SPARKPROF_RECORD_SUMMARY_H

#include <stdint.h>

#include "output/sample_store.h"
#include "output/stage_writer.h"
#include "record/record_options.h"
#include "sampler/bpf_sampler.h"
#include "sparkprof_events.h"
#include "symbols/stack_resolver.h"

struct kernel_features;
struct record_otlp;
struct process_table;
struct views;

/* What the recorder's memory went to when sampling stopped, before the
 * outputs were written: heap bytes by owner, and the resident total
 * (which also holds the ring buffer and the program). */
struct record_memory {
	uint64_t rss_kib;            /* 0: unknown */
	struct sample_store_stats store;
	struct stage_writer_stats stage_files; /* stages' files written while recording */
	uint64_t live_jfr_ns;      /* the node's and executors' JFR files, likewise */
	size_t jit;                  /* JVMs' JIT code stores and their names */
	size_t jit_names;            /* the names, of jit */
	size_t threads;              /* JVMs' thread histories and their names */
	size_t stages;               /* executors' stage counters and thread states */
	size_t python;               /* CPython processes' code objects and frame names */
	size_t address_names;        /* each process's addresses named so far */
	size_t elf_symbols, kernel_symbols;
	size_t symbol_files;         /* binaries the symbol cache holds: mapped by processes,
				      * kept unused, unreadable ones, the vDSO */
	size_t symbol_files_dropped; /* unused ones dropped, past the budget */
	size_t queued;               /* records waiting to be named: the drain thread's
				      * blocks and the recorder's pending ones */
};

struct record_summary_input {
	const struct record_options *opts;
	const char *output_dir;
	uint64_t launch_monotonic_ns;   /* the command began */
	uint64_t start_monotonic_ns, start_realtime_ns, end_monotonic_ns; /* sampling */
	const uint64_t *counters;       /* SP_CNT_MAX BPF counters */
	uint64_t bad_records;
	uint64_t queue_full;            /* records the drain thread dropped */
	const struct ring_use *ring;    /* NULL: not known */
	int index_error;                /* -errno when index.html could not be written */
	int store_error;                /* -errno when samples.store could not be written whole */
	struct process_table *processes;
	const struct views *views;      /* the files written; NULL: none */
	const struct stack_resolver_stats *resolver_stats;
	const struct record_memory *memory;
	const struct kernel_features *kernel; /* NULL: not probed */
	struct record_otlp *otlp;       /* --otlp: what was sent ("otlp"); NULL: none */
};

/* Writes DIR/summary.json. 0 or -errno (with a message). */
int record_summary_write(const struct record_summary_input *in);

#endif
