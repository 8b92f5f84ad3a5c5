/* record_otlp.c - see record_otlp.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "output/store_segment.h"
#include "record/record_otlp.h"

struct record_otlp {
	struct otlp_options opts;
	struct otlp_sender *sender;
	struct otlp_totals exported;      /* handed to the sender */
	uint64_t unencoded_segments, unencoded_samples;
	bool unencoded_said;
};

struct record_otlp *record_otlp_new(const struct otlp_options *o)
{
	struct record_otlp *x = calloc(1, sizeof(*x));

	if (!x) {
		sp_err("OTLP export to %s: %s", o->sender.url, strerror(ENOMEM));
		return NULL;
	}
	x->opts = *o;
	x->opts.sender.headers = x->opts.headers;
	if (!(x->sender = otlp_sender_start(&x->opts.sender))) {
		free(x);
		return NULL;
	}
	return x;
}

void record_otlp_free(struct record_otlp *x, uint64_t wait_ms)
{
	if (!x)
		return;
	otlp_sender_drain(x->sender, wait_ms);
	otlp_sender_stop(x->sender, NULL);
	free(x);
}

/* The segment as a request: 0, or -errno (nothing handed over). */
static int encode(const struct store_segment_written *seg, struct otlp_batch *b,
		  uint8_t **body, size_t *len)
{
	int err;

	if (!seg->samples)
		return seg->read_err ? seg->read_err : -EINVAL;
	err = otlp_batch_add(b, seg->labels, seg->samples, seg->first_ns, seg->last_ns);
	return err ? err : otlp_batch_encode(b, body, len);
}

void record_otlp_segment(struct record_otlp *x, const struct store_segment_written *seg,
			 void (*resource_of)(void *ctx, pid_t pid, struct otlp_resource_extra *out),
			 void *ctx)
{
	struct otlp_batch_settings set = { seg->info, resource_of, ctx };
	struct otlp_batch *b = otlp_batch_new(&set);
	struct otlp_totals t;
	uint8_t *body = NULL;
	size_t len = 0;
	int err = b ? encode(seg, b, &body, &len) : -ENOMEM;

	if (err) {
		if (!x->unencoded_said)
			sp_err("OTLP export to %s: a segment of %u samples: %s",
			       x->opts.sender.url, seg->nsamples, strerror(-err));
		x->unencoded_said = true;
		x->unencoded_segments++;
		x->unencoded_samples += seg->nsamples;
		otlp_batch_free(b);
		return;
	}
	otlp_batch_totals(b, &t);
	otlp_batch_free(b);
	x->exported.segments++;
	x->exported.samples += t.samples;
	x->exported.cpu_samples += t.cpu_samples;
	for (int k = 0; k < OTLP_KINDS; k++)
		x->exported.values[k] += t.values[k];
	otlp_sender_submit(x->sender, body, len, t.samples);
}

bool record_otlp_drain(struct record_otlp *x, uint64_t wait_ms)
{
	return otlp_sender_drain(x->sender, wait_ms);
}

void record_otlp_json(struct record_otlp *x, struct json_writer *w)
{
	struct otlp_sender_stats st;

	otlp_sender_stats(x->sender, &st);
	json_begin_object(w);
	json_key(w, "exported");
	json_begin_object(w);
	json_key(w, "segments");
	json_uint(w, x->exported.segments);
	json_key(w, "samples");
	json_uint(w, x->exported.samples);
	json_key(w, "cpu_samples");
	json_uint(w, x->exported.cpu_samples);
	json_key(w, "wall_ns");
	json_uint(w, x->exported.values[OTLP_WALL]);
	json_key(w, "off_cpu_ns");
	json_uint(w, x->exported.values[OTLP_OFF_CPU]);
	json_key(w, "unencoded_segments");
	json_uint(w, x->unencoded_segments);
	json_key(w, "unencoded_samples");
	json_uint(w, x->unencoded_samples);
	json_end_object(w);
	json_key(w, "sender");
	otlp_sender_stats_json(&st, x->opts.sender.url, w);
	json_end_object(w);
}
