/* record_sink.h - where a recording's records go: one recorder writing one
 * folder, or (--rotate) a rotation writing a folder per interval. The
 * command drives either the same way: records in, a tick between batches,
 * a finish with the BPF side's counters, and one line saying what was
 * written. */
#ifndef SPARKPROF_RECORD_SINK_H
#define SPARKPROF_RECORD_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "record/recorder.h"
#include "sparkprof_events.h"

struct record_sink;

/* A rotation when opts->rotate_ns, else one recorder, made from config;
 * read_counters gives a rotation each interval's counters. NULL (with a
 * message) on failure. */
struct record_sink *record_sink_new(const struct recorder_config *config,
				    int (*read_counters)(void *ctx, uint64_t c[SP_CNT_MAX]),
				    void *counters_ctx);
void record_sink_free(struct record_sink *s);

/* The context of the recorders' callbacks (the sampler exists after the sink). */
void record_sink_set_callback_ctx(struct record_sink *s, void *ctx);
/* Sampling starts at start_ns: what came before was start-up. 0 or -errno. */
int record_sink_start(struct record_sink *s, uint64_t start_ns);

/* The drain thread's callback: ctx is the sink. */
int record_sink_on_record(void *sink, const void *data, size_t size);
/* Between batches: names and files what is due. 0, or -errno: stop. */
int record_sink_tick(struct record_sink *s, uint64_t now_ns);
/* Processes seen (the current interval's with --rotate). */
uint64_t record_sink_processes(const struct record_sink *s);

/* Writes everything, then says on one line what was written. Returns 0 or
 * the first error. */
int record_sink_finish(struct record_sink *s, const uint64_t counters[SP_CNT_MAX],
		       uint64_t start_ns, uint64_t end_ns);

#endif
