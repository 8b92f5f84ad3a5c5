/* record_otlp.h - `record --otlp URL`: each segment of the sample store,
 * once in the file, sent as one OTLP profiles request
 * (export/otlp_profiles.h) by a sender (export/otlp_sender.h) that lives
 * for the whole recording, across --rotate's intervals. The recorder's
 * thread only encodes the segment the store read back; the network is the
 * sender's thread's.
 */
#ifndef SPARKPROF_RECORD_OTLP_H
#define SPARKPROF_RECORD_OTLP_H

#include <stdbool.h>
#include <stdint.h>

#include "base/json_writer.h"
#include "export/otlp_options.h"
#include "export/otlp_profiles.h"
#include "output/sample_store.h"

struct record_otlp;

/* Starts the sender. NULL after a message. */
struct record_otlp *record_otlp_new(const struct otlp_options *o);
/* Waits for what is queued at most wait_ms, then stops the sender and
 * frees. */
void record_otlp_free(struct record_otlp *x, uint64_t wait_ms);

/* Encodes seg and hands it to the sender (a segment_written hook that
 * needs segment_samples).
 * resource_of (may be NULL) tells what the caller knows of a process. A
 * segment that cannot be read or encoded is counted as dropped, with one
 * message. */
void record_otlp_segment(struct record_otlp *x, const struct store_segment_written *seg,
			 void (*resource_of)(void *ctx, pid_t pid, struct otlp_resource_extra *out),
			 void *ctx);

/* Waits until what is queued went or was dropped, at most wait_ms: true
 * when it all did. */
bool record_otlp_drain(struct record_otlp *x, uint64_t wait_ms);

/* summary.json's "otlp" object: the URL, what was exported (segments,
 * samples by kind), then the sender's counters. */
void record_otlp_json(struct record_otlp *x, struct json_writer *w);

#endif
