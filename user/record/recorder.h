/* recorder.h - turns the BPF records of one recording into profiles.
 *
 * Records are queued as they arrive and named a little later (the resolve
 * delay), so that the JVM helper's records about the same moment (JIT code,
 * thread renames) have arrived first. A process is inspected (maps, ELF
 * files, helper, Spark executor identity) on its first record, while it is
 * still alive.
 */
#ifndef SPARKPROF_RECORDER_H
#define SPARKPROF_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/record_options.h"
#include "sampler/bpf_sampler.h"
#include "sparkprof_events.h"

struct recorder;
struct kallsyms;
struct drain_thread;
struct kernel_features;
struct record_otlp;

struct recorder_config {
	const struct record_options *opts;
	const char *output_dir;
	uint64_t start_monotonic_ns, start_realtime_ns;
	uint64_t launch_monotonic_ns;   /* when the command began (start-up) */
	uint64_t resolve_delay_ns;
	/* Kernel symbols to share (record/rotation: one table for every
	 * interval, used on one thread: its names are read back into it);
	 * NULL: the recorder reads its own. */
	const struct kallsyms *kernel_symbols;
	/* Called for each process seen for the first time, just before it is
	 * inspected: the sampler stops forcing wake-ups for it and reports
	 * its exec from then on, so an exec racing the inspection is seen. */
	void (*on_new_process)(void *ctx, pid_t pid);
	/* Called when a JVM is found whose stacks the BPF walker can walk
	 * (info), and with NULL when that pid runs another program; false:
	 * the walker could not be given info. */
	bool (*on_jvm)(void *ctx, pid_t pid, const struct sp_hotspot_info *info);
	/* The same for a CPython process the Python walker can walk. */
	void (*on_python)(void *ctx, pid_t pid, const struct sp_python_info *info);
	void *ctx;
	struct drain_thread *drain;     /* feeds the recorder (for memory figures); or NULL */
	/* Reads the ring buffer's use so far and the records the drain thread
	 * has dropped since the start, for the summary: a recording's figures
	 * are those at its finish less those at its making. NULL: unknown. */
	void (*read_losses)(void *ctx, struct ring_use *ring, uint64_t *dropped);
	const struct kernel_features *kernel; /* what the kernel offered (summary); or NULL */
	/* --otlp: each segment of the store is sent through it, and
	 * summary.json says what went (one for the whole recording, across
	 * --rotate's intervals); NULL: no export. */
	struct record_otlp *otlp;
};

/* NULL (with a message) on failure. */
struct recorder *recorder_new(const struct recorder_config *config);
/* Sets the context of on_new_process and on_jvm (the sampler exists only after the
 * recorder, which is its record callback's context). */
void recorder_set_new_process_ctx(struct recorder *rec, void *ctx);
void recorder_free(struct recorder *rec);

/* Sampling began at start_monotonic_ns: what came before was start-up. */
void recorder_sampling_started(struct recorder *rec, uint64_t start_monotonic_ns);

/* The ring-buffer callback: queues one record. Always returns 0: a bad
 * record is counted, not fatal. */
int recorder_on_record(void *rec, const void *data, size_t size);

/* Names and files the queued records that arrived before now - delay, for
 * at most about 200 ms (all of them when flush_all). */
void recorder_drain(struct recorder *rec, uint64_t now_ns, bool flush_all);

struct recorder_totals {
	uint64_t records, bad_records;
	uint64_t queue_full;       /* dropped before the recorder saw them */
	uint64_t cpu_samples, off_cpu_events;
	uint64_t processes;
};
void recorder_get_totals(const struct recorder *rec, struct recorder_totals *out);

/* Writes every profile and DIR/summary.json. counters are the BPF side's
 * (SP_CNT_*). Returns 0 or the first error. */
int recorder_finish(struct recorder *rec, const uint64_t counters[SP_CNT_MAX],
		    uint64_t end_monotonic_ns);

#endif
