/* otlp_store.h - a finished recording's sample store sent as OTLP
 * profiles: its segments in order, batch_segments to a request
 * (otlp_profiles.h), each handed to a sender (otlp_sender.h). What
 * `sparkprof convert DIR --otlp URL` does.
 */
#ifndef SPARKPROF_OTLP_STORE_H
#define SPARKPROF_OTLP_STORE_H

#include <stddef.h>

#include "export/otlp_profiles.h"
#include "export/otlp_sender.h"
#include "output/store_file.h"

/* Builds and submits the requests of r (batch_segments segments each, at
 * least 1); *queued sums what was handed over (the sender's counters say
 * what then went). Returns at once after the last submit. 0, or -errno of
 * reading or encoding, after a message (requests already handed over
 * stay with the sender). */
int otlp_store_submit(struct store_reader *r, size_t batch_segments, struct otlp_sender *s,
		      struct otlp_totals *queued);

#endif
