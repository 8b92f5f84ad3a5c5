/* rotation.h - continuous recording (`record --rotate DUR --keep N`).
 *
 * The BPF side runs for the whole recording; the user side is cut into
 * intervals of DUR, each a folder DIR/YYYYmmddTHHMMSSZ (UTC start) with its
 * own recorder: fresh process, symbol and stage tables, so memory does not
 * grow with the number of intervals. Each record goes to exactly one
 * interval, the one its BPF timestamp falls in, so consecutive intervals
 * neither overlap nor leave a gap. An interval that has ended keeps taking
 * its late records (other CPUs' ring-buffer records, the resolve delay) for
 * close_delay_ns, then is written: interval.json, the profiles, and
 * summary.json last, so a folder with summary.json is complete. Beyond
 * `keep` written folders (the ones still recording are not counted), the
 * oldest interval folders in DIR are removed, a previous run's included.
 */
#ifndef SPARKPROF_ROTATION_H
#define SPARKPROF_ROTATION_H

#include <stddef.h>
#include <stdint.h>

#include "record/recorder.h"
#include "sparkprof_events.h"

/* --rotate is at least this long: an interval must be closed (close_delay)
 * before the next one ends, so at most two are open. */
#define ROTATION_MIN_INTERVAL_NS (2ULL * 1000000000ULL)

struct rotation;

struct rotation_config {
	/* Every interval's recorder is made from this one; its output_dir is
	 * the base folder, its start times are the first interval's. */
	struct recorder_config recorder;
	uint64_t interval_ns;
	unsigned int keep;            /* written folders kept (besides the open ones) */
	uint64_t close_delay_ns;      /* how long an ended interval takes late records */
	/* Reads the BPF side's cumulative counters (SP_CNT_*); an interval's
	 * summary gets the difference over its span. 0 or -errno. */
	int (*read_counters)(void *ctx, uint64_t counters[SP_CNT_MAX]);
	void *counters_ctx;
};

/* Reads the kernel symbols the intervals share. NULL (with a message) on
 * failure. */
struct rotation *rotation_new(const struct rotation_config *config);
/* Opens the first interval at start_ns, when sampling has started (loading
 * the BPF side can take seconds on a busy node). 0 or -EIO (with a message). */
int rotation_start(struct rotation *rot, uint64_t start_ns);
void rotation_free(struct rotation *rot);
/* The context the recorders' on_new_process/on_jvm callbacks get. */
void rotation_set_callback_ctx(struct rotation *rot, void *ctx);

/* Files one record (as sampler/drain_thread hands it over) into its
 * interval's recorder, opening the next interval when the record is past
 * the current one. Samples are filed by their time, off-CPU intervals by
 * their end. Returns 0. */
int rotation_on_record(void *rot, const void *data, size_t size);

/* Drains the open recorders, opens the next interval when now has passed
 * the current one's end, writes an ended interval once its close delay is
 * over, and prunes. 0, or -errno when an interval could not be opened or
 * written (the recording should stop). */
int rotation_tick(struct rotation *rot, uint64_t now_ns);

/* At the end of the recording (after the ring buffer was drained): writes
 * the ended interval, if any, and the current one, ended at end_ns, with
 * the final counters. 0 or the first error. */
int rotation_finish(struct rotation *rot, const uint64_t counters[SP_CNT_MAX], uint64_t end_ns);

struct rotation_totals {
	uint64_t intervals_written;
	uint64_t records_too_late;    /* arrived after their interval was written */
	uint64_t processes;           /* in the current interval */
};
void rotation_get_totals(const struct rotation *rot, struct rotation_totals *out);

/* Whether name is one of the interval folders rotation makes and prunes
 * (YYYYmmddTHHMMSSZ, or with a -N suffix). */
int rotation_is_interval_name(const char *name);

#endif
